//! `replay`: a script without a window, frame for frame as the app runs it (growing 250,000
//! entities a frame), ending in the line the app ends in, so that their checksums compare.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::usage_error;
use crate::layout::LayoutKind;
use crate::runtime::values::{EntityCount, LayoutName};
use crate::tools::script;

#[derive(Args)]
pub struct ReplayArgs {
    script: PathBuf,
    #[arg(long, default_value = "ecs-table", value_parser = LayoutName)]
    layout: LayoutKind,
    #[arg(long, default_value = "100000", allow_hyphen_values = true)]
    count: EntityCount,
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

pub fn run(args: ReplayArgs) -> ExitCode {
    let path = &args.script;
    let actions = match std::fs::read_to_string(path) {
        Ok(text) => match script::parse(&text) {
            Ok(actions) => actions,
            Err(e) => return usage_error(&format!("{}: {e}", path.display())),
        },
        Err(e) => return usage_error(&format!("cannot read script '{}': {e}", path.display())),
    };
    let run = match script::replay(actions, args.layout, args.seed, args.count.0) {
        Ok(run) => run,
        Err(e) => return usage_error(&e.to_string()),
    };
    for (frame, action, e) in &run.refused {
        eprintln!("[frame {frame}] refused '{action}': {e}");
    }
    println!("{}", run.driver.final_line());
    ExitCode::SUCCESS
}
