//! Ctrl-C and SIGTERM as a flag the program acts on when it is ready (the app at its next frame,
//! the bench between cells), with the usual exit code if the signal comes again before then.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// On `signal`, set `flag`; if the flag is already set (a second signal before the program
/// acted on the first), exit at once with `code`.
pub fn raise_flag_on(signal: i32, code: i32, flag: &Arc<AtomicBool>) -> std::io::Result<()> {
    signal_hook::flag::register_conditional_shutdown(signal, code, flag.clone())?;
    signal_hook::flag::register(signal, flag.clone())?;
    Ok(())
}
