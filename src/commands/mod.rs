//! The subcommands of the command line, one file each: its options (clap's `Args`, every value
//! through the parsers the scripts and the bench use too, ranges checked by clap's value parsers)
//! and its body. `main.rs` only parses and calls [`verify::run`], [`bench::run`], [`replay::run`],
//! [`soak::run`] or [`count_frames::run`] (no subcommand opens the window).
//!
//! Exit codes, the same for every subcommand and the app (docs/app.md lists them):
//! - 0: done, and everything checked passed;
//! - 1 ([`FAILED`]): the run started and failed: a mismatch between layouts, a soak's memory
//!   check, a bench cell, results that could not be written;
//! - 2 ([`USAGE`]): the request cannot be run as asked: a bad value, or one this machine cannot
//!   take (a count over its memory, the gpu layout without an adapter, an `--out` or `--resume`
//!   folder it cannot use); the message names the value and what is accepted, and nothing ran;
//! - 130 and 143 ([`INTERRUPTED`], [`TERMINATED`]): Ctrl-C or SIGTERM, after what was finished
//!   was kept.

pub mod bench;
pub mod count_frames;
pub mod replay;
pub mod soak;
pub mod verify;

use std::process::ExitCode;

/// The run started and failed.
pub const FAILED: u8 = 1;
/// The request cannot be run as asked; nothing ran.
pub const USAGE: u8 = 2;
/// Ended by Ctrl-C (128 + SIGINT), or by SIGTERM (128 + SIGTERM), as shells count them.
pub const INTERRUPTED: u8 = 130;
pub const TERMINATED: u8 = 143;

/// `error: MESSAGE` on standard error, exit code [`USAGE`].
pub fn usage_error(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(USAGE)
}

/// `error: MESSAGE` on standard error, exit code [`FAILED`].
pub fn failure(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(FAILED)
}
