//! `soak`: random actions for a while (counts, every layout, threads, churn, seek, pause, switches
//! that start mid-copy), checked against a SoA reference and for memory that does not come back,
//! over one seed or many; or, with `--write-script`, a random script for the app to run.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use super::{FAILED, usage_error};
use crate::runtime::action::Action;
use crate::runtime::driver::APP_MAX_ENTITIES;
use crate::tools::script;
use crate::tools::soak::{self, SoakConfig, SoakReport, mib_or_unknown};
use crate::workload::mix;

/// The longest soak accepted: a day.
const MAX_MINUTES: f64 = 24.0 * 60.0;

#[derive(Args)]
pub struct SoakArgs {
    /// How long to run in all, in minutes (fractions work: 0.5 is 30 s), shared evenly by the
    /// seeds; more than 0, at most 1440 (a day).
    #[arg(long, default_value = "1", value_parser = parse_minutes)]
    minutes: f64,
    /// The first seed, or `random` (one drawn from the clock, printed so that a failure can be
    /// run again with `--seed`).
    #[arg(long, default_value = "42", value_parser = parse_seed)]
    seed: u64,
    /// How many seeds to soak, one after another from `--seed` (1 to 1000): one seed that
    /// passes is a regression test, many are a soak.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    seeds: u64,
    /// The largest count the random actions ask for, 1 to 10,000,000 (the soak switches between
    /// the CPU layouts, which take up to the app's 10M).
    #[arg(long, default_value = "2000000", value_parser = parse_max_count)]
    max_count: usize,
    /// Instead of soaking, write a random script of `--actions` actions (with waits and a
    /// screenshot every 50 actions into `--shots`) for the app to run: the windowed soak.
    #[arg(long, value_name = "FILE")]
    write_script: Option<PathBuf>,
    #[arg(long, default_value_t = 300, requires = "write_script")]
    actions: usize,
    /// Where the written script's screenshots go.
    #[arg(long, default_value = "soak-shots", requires = "write_script")]
    shots: PathBuf,
}

/// `--minutes`: more than 0, at most [`MAX_MINUTES`].
fn parse_minutes(text: &str) -> Result<f64, String> {
    let refused =
        || format!("'{text}' is not accepted; accepted: more than 0, at most 1440 (a day)");
    let minutes: f64 = text.parse().map_err(|_| refused())?;
    if minutes.is_finite() && minutes > 0.0 && minutes <= MAX_MINUTES {
        Ok(minutes)
    } else {
        Err(refused())
    }
}

/// `--max-count`: 1 to the app's ceiling, in any form the entity counts take (`2e6`, `100_000`).
fn parse_max_count(text: &str) -> Result<usize, String> {
    let refused = || format!("'{text}' is not accepted; accepted: 1 to {APP_MAX_ENTITIES}");
    let count: crate::runtime::values::EntityCount = text.parse().map_err(|_| refused())?;
    if (1..=APP_MAX_ENTITIES).contains(&count.0) {
        Ok(count.0)
    } else {
        Err(refused())
    }
}

/// `--seed`: a number, or `random` for one drawn from the clock.
fn parse_seed(text: &str) -> Result<u64, String> {
    if text == "random" {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        // Spread over the whole range, and small enough to type back.
        return Ok(mix(nanos) % 1_000_000_000);
    }
    text.parse().map_err(|_| {
        format!(
            "'{text}' is not a seed; accepted: `random` or a whole number from 0 to {}",
            u64::MAX
        )
    })
}

pub fn run(args: SoakArgs) -> ExitCode {
    match &args.write_script {
        Some(path) => write_script(path, &args),
        None => soak(&args),
    }
}

fn write_script(path: &Path, args: &SoakArgs) -> ExitCode {
    let mut script = Vec::new();
    for (i, chunk) in soak::random_actions(args.seed, args.actions, args.max_count)
        .chunks(50)
        .enumerate()
    {
        script.extend_from_slice(chunk);
        script.push(Action::Screenshot(
            args.shots.join(format!("soak-{i:03}.png")),
        ));
    }
    script.push(Action::Exit);
    let text = format!(
        "# A random script: {} actions, counts up to {}, seed {}\n# (entity-layouts soak --write-script).\n{}",
        args.actions,
        args.max_count,
        args.seed,
        script::to_text(&script)
    );
    match std::fs::write(path, text) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => super::failure(&format!("cannot write '{}': {e}", path.display())),
    }
}

fn soak(args: &SoakArgs) -> ExitCode {
    let (minutes, first_seed, seeds, max_count) =
        (args.minutes, args.seed, args.seeds, args.max_count);
    let each = minutes / seeds as f64;
    println!(
        "soak: {minutes} min, {seeds} seed(s) from {first_seed} ({each:.2} min each), counts up to {max_count}, checked against SoA every 8 frames"
    );
    let mut failed_seeds = Vec::new();
    for seed in (0..seeds).map(|k| first_seed.wrapping_add(k)) {
        let config = SoakConfig {
            duration: Duration::from_secs_f64(each * 60.0),
            seed,
            max_count,
            check_every: 8,
        };
        println!("\n== seed {seed}");
        let report = match soak::run(&config, |line| println!("{line}")) {
            Ok(report) => report,
            Err(e) => return usage_error(&e.to_string()),
        };
        print_report(&report);
        if !report.passed() {
            eprintln!(
                "seed {seed} FAILED; run it again with: entity-layouts soak --seed {seed} --minutes {each} --max-count {max_count}"
            );
            failed_seeds.push(seed);
        }
    }
    println!(
        "\nsoak: {} of {seeds} seed(s) passed{}",
        seeds - failed_seeds.len() as u64,
        if failed_seeds.is_empty() {
            String::new()
        } else {
            format!("; failed: {failed_seeds:?}")
        }
    );
    if failed_seeds.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(FAILED)
    }
}

fn print_report(report: &SoakReport) {
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    println!("\n| | |\n|---|---|");
    for (name, value) in [
        ("time", format!("{:.1} s", report.elapsed.as_secs_f64())),
        (
            "actions",
            format!("{} ({} refused by both)", report.actions, report.refused),
        ),
        ("frames", report.frames.to_string()),
        (
            "layout switches",
            format!(
                "{} asked, {} landed",
                report.switches, report.switches_landed
            ),
        ),
        (
            "sorts landed (the SoA reference took each one's order)",
            report.sorts_landed.to_string(),
        ),
        ("checks against SoA", report.checks.to_string()),
        ("peak resident", mib_or_unknown(report.peak_rss)),
        ("final resident", mib_or_unknown(report.final_rss)),
        ("mismatches", report.mismatches.len().to_string()),
        ("memory failures", report.memory_failures.len().to_string()),
        (
            "samples back under the limit after one more trim",
            report.memory_rechecked.to_string(),
        ),
    ] {
        println!("| {name} | {value} |");
    }
    let mut small: Vec<_> = report.small_count_rss.iter().collect();
    small.sort();
    for (count, (first, worst)) in small {
        println!(
            "| resident at {count} entities | first {:.0} MiB, worst later {:.0} MiB |",
            mib(*first),
            mib(*worst)
        );
    }
    for line in report.mismatches.iter().chain(&report.memory_failures) {
        eprintln!("FAILED: {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_and_counts_out_of_range_name_what_is_accepted() {
        for bad in ["0", "-1", "1441", "nan", "inf", "soon"] {
            let err = parse_minutes(bad).unwrap_err();
            assert!(err.contains(bad) && err.contains("at most 1440"), "{err}");
        }
        assert_eq!(parse_minutes("0.5"), Ok(0.5));
        for bad in ["0", "10000001", "2e7", "-3", "lots"] {
            let err = parse_max_count(bad).unwrap_err();
            assert!(err.contains(bad) && err.contains("1 to 10000000"), "{err}");
        }
        assert_eq!(parse_max_count("2e6"), Ok(2_000_000));
        assert!(parse_seed("seven").unwrap_err().contains("random"));
        assert!(parse_seed("random").unwrap() < 1_000_000_000);
    }
}
