//! Bad input gets an error that names the problem and the accepted range; the population the
//! user had is kept exactly as it was.

use std::process::Command;

use entity_layouts::error::SimError;
use entity_layouts::layout::LayoutKind;
use entity_layouts::runtime::swarm::Swarm;
use entity_layouts::workload::Dt;

#[test]
fn a_count_over_the_maximum_is_refused_and_nothing_is_lost() {
    for kind in LayoutKind::CPU {
        let mut swarm = Swarm::<f32>::with_count(kind, 1, 500).unwrap();
        swarm.set_max_entities(1000);
        let before = swarm.export();
        let err = swarm.resize(1001).unwrap_err();
        assert_eq!(
            err,
            SimError::TooManyEntities {
                requested: 1001,
                max: 1000
            }
        );
        assert!(err.to_string().contains("0 to 1000"), "{err}");
        assert!(swarm.churn(501).is_err());
        assert_eq!(swarm.export(), before, "{kind}");
    }
    let err = Swarm::<f32>::with_count(
        LayoutKind::Soa,
        1,
        entity_layouts::runtime::swarm::MAX_ENTITIES + 1,
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("100000000"), "{err}");
}

#[test]
fn a_count_beyond_memory_is_an_error_not_an_oom_kill() {
    // Far more than any machine has, far below the address-space limit.
    let huge = 1usize << 46;
    for kind in LayoutKind::CPU {
        let mut swarm = Swarm::<f64>::with_count(kind, 1, 100).unwrap();
        swarm.set_max_entities(usize::MAX);
        let before = swarm.checksum();
        let err = swarm.resize(huge).unwrap_err();
        assert!(matches!(err, SimError::OutOfMemory { .. }), "{kind}: {err}");
        let text = err.to_string();
        assert!(text.contains(kind.name()) && text.contains("MiB"), "{text}");
        assert_eq!(swarm.checksum(), before, "{kind}: population kept");
        assert_eq!(swarm.len(), 100);
    }
}

#[test]
fn every_layout_reports_a_failed_reservation() {
    for kind in LayoutKind::CPU {
        let mut layout = entity_layouts::runtime::catalog::create::<f32>(kind).unwrap();
        assert!(layout.try_reserve(usize::MAX / 4).is_err(), "{kind}");
        assert_eq!(layout.len(), 0);
    }
}

#[test]
fn unknown_layouts_bad_kind_counts_and_bad_dt_are_named() {
    let err = "octree".parse::<LayoutKind>().unwrap_err().to_string();
    assert!(
        err.contains("octree") && err.contains("soa, chunks, aos"),
        "{err}"
    );
    let err = "dyn-3".parse::<LayoutKind>().unwrap_err().to_string();
    assert!(
        err.contains("dyn-3") && err.contains("dyn-4, dyn-12"),
        "{err}"
    );
    for dt in [-1.0 / 60.0, f64::NAN, 0.0] {
        let err = Dt::new(dt).unwrap_err().to_string();
        assert!(err.contains("(0, 1]"), "{err}");
    }
}

fn cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_entity-layouts"))
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn verify_command_passes_and_prints_one_line_per_run() {
    let out = cli(&["verify", "--count", "777", "--frames", "5", "--seed", "9"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for kind in LayoutKind::CPU {
        assert!(text.contains(&format!("{kind} threads=all")), "{text}");
    }
    let checksums = text
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .filter(|w| w.len() == 16 && w.chars().all(|c| c.is_ascii_hexdigit()))
        .count();
    // Per group: every layout on 1 and all threads, every wider SIMD tier on the layouts that
    // have tiers and one run changing tier every frame, and switching at once and spread, on both.
    let wider = entity_layouts::simd::available().len() - 1;
    let per_tier = LayoutKind::CPU
        .iter()
        .filter(|k| k.has_simd_kernels())
        .count();
    let simd_runs = wider * per_tier + usize::from(wider > 0);
    // f32 and f64, without churn and with it, for each set of systems (move + regen, with seek,
    // with the neighbours, with both); and every layout sorted by group (in the group without
    // churn, in a group of its own with churn). With seek, the layouts with a tuned seek run it
    // on both thread settings and sorted, plus one spread switching run, with churn and
    // without. With the neighbours, every layout runs the tuned pass on both thread settings,
    // and is sorted by cell in both forms (with churn, in a group of its own).
    let tuned = LayoutKind::CPU
        .iter()
        .filter(|k| k.has_tuned_seek())
        .count();
    let layouts = LayoutKind::CPU.len();
    assert_eq!(
        checksums,
        16 * (3 * layouts + simd_runs + 4) + 4 * (6 * tuned + 2) + 32 * layouts,
        "{text}"
    );
    for kind in LayoutKind::CPU.into_iter().filter(|k| k.has_tuned_seek()) {
        assert!(
            text.contains(&format!("{kind} threads=all, tuned seek")),
            "{text}"
        );
    }
    for kind in LayoutKind::CPU {
        assert!(
            text.contains(&format!("{kind} threads=1, sorted by group")),
            "{text}"
        );
    }
    assert!(text.contains("f64 seek, churn"), "{text}");
    assert!(text.contains("f32 seek, churn"), "{text}");
    for &tier in &entity_layouts::simd::available()[1..] {
        assert!(
            text.contains(&format!("chunks threads=1 simd={tier}")),
            "{text}"
        );
    }
    assert!(text.contains("spread over frames, threads=all"), "{text}");
    assert!(
        text.contains("f32 neighbours, churn, sorted by cell"),
        "{text}"
    );
    assert_eq!(text.matches("bit-identical").count(), 28);
}

#[test]
fn bad_seek_grow_and_switch_settings_exit_2_naming_what_is_accepted() {
    let dir = std::env::temp_dir().join(format!("entity-layouts-seek-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("bad.script");
    std::fs::write(&script, "count 1000\nseek sideways\n").unwrap();
    let out = cli(&["replay", script.to_str().unwrap(), "--layout", "soa"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("line 2") && err.contains("seek takes on, off, idiomatic or tuned"),
        "{err}"
    );
    for flag in ["--grow-chunk", "--switch-chunk"] {
        for chunk in ["0", "-4", "lots"] {
            let out = cli(&[flag, chunk, "--headless"]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{flag} {chunk}: {err}");
            assert!(
                err.contains(flag) && err.contains("1 to 100000000"),
                "{flag} {chunk}: {err}"
            );
        }
    }
    for (flag, value, accepted) in [
        ("--seek-kernel", "fast", "idiomatic or tuned"),
        ("--order", "random", "accepted: id, group, cell"),
        ("--resort-above", "100", "1 to 99"),
        ("--neighbour-form", "fast", "idiomatic or tuned"),
        ("--neighbour-target", "0", "1 to 64 neighbours"),
        ("--radius", "-1", "at most 299.7 world units"),
        ("--resort-cells", "0", "1 to 36000 frames"),
    ] {
        let out = cli(&[flag, value, "--headless"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {err}");
        assert!(
            err.contains(flag) && err.contains(value) && err.contains(accepted),
            "{flag} {value}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn verify_command_rejects_bad_dt_with_exit_code_2() {
    for dt in ["-0.5", "NaN", "3"] {
        let out = cli(&["verify", "--dt", dt]);
        assert_eq!(out.status.code(), Some(2), "dt {dt}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("(0, 1]"), "{err}");
    }
    let out = cli(&["verify", "--count", "-5"]);
    assert_eq!(out.status.code(), Some(2));
}

/// No Vulkan driver at all: `verify --gpu` says why and exits 2 instead of failing later.
#[test]
fn verify_gpu_without_an_adapter_is_exit_code_2_with_the_reason() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_entity-layouts"))
        .args(["verify", "--gpu", "--count", "100", "--frames", "2"])
        .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
        .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("GPU adapter"), "{stderr}");
}

/// The soak's seeds: a bad one names what is accepted; `random` draws one and prints it, so that
/// a failure can be run again; every seed of a multi-seed run is named in the output.
#[test]
fn soak_seeds_are_checked_and_printed() {
    for args in [
        &["soak", "--seed", "seven"][..],
        &["soak", "--seeds", "0"][..],
        &["soak", "--seeds", "1001"][..],
    ] {
        let out = cli(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("random") || stderr.contains("1..=1000"),
            "{args:?}: {stderr}"
        );
    }
    let out = cli(&[
        "soak",
        "--seed",
        "random",
        "--seeds",
        "2",
        "--minutes",
        "0.02",
        "--max-count",
        "20000",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let seeds: Vec<u64> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("== seed "))
        .map(|s| s.trim().parse().unwrap())
        .collect();
    assert_eq!(seeds.len(), 2, "{stdout}");
    assert_eq!(seeds[1], seeds[0] + 1, "{stdout}");
    assert!(stdout.contains("2 of 2 seed(s) passed"), "{stdout}");
}

/// Exit codes: 2 for a request that cannot run as asked (nothing ran, and the message names
/// what is accepted), 1 for a run that started and failed (here: results that cannot be
/// written, sysfs being read-only even for root).
#[test]
fn a_bad_request_is_exit_2_and_a_failed_run_is_exit_1() {
    for (args, names) in [
        (&["bench", "--only", "no-such-experiment"][..], "accepted"),
        (&["soak", "--minutes", "0"][..], "at most 1440"),
        (&["soak", "--max-count", "0"][..], "1 to 10000000"),
        (
            &["replay", "--layout", "nonesuch", "x.txt"][..],
            "ecs-table",
        ),
    ] {
        let out = cli(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(names), "{args:?}: {stderr}");
    }
    // A folder the bench cannot write is refused before any cell runs.
    let out = cli(&[
        "bench",
        "--only",
        "spawn",
        "--quick",
        "--out",
        "/sys/entity-layouts-bench",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("/sys/entity-layouts-bench"), "{stderr}");
    // A cell that fails once the run has started is a failure.
    let cfg = entity_layouts::bench::BenchConfig::new(true);
    let spawn = entity_layouts::bench::experiments()
        .into_iter()
        .find(|e| e.name() == "spawn")
        .expect("the spawn experiment");
    let cell = spawn.cells(&cfg, &[])[0].clone();
    let out = Command::new(env!("CARGO_BIN_EXE_entity-layouts"))
        .args(["bench", "--only", "spawn", "--quick", "--in-process"])
        .env(
            entity_layouts::bench::FAIL_CELL_ENV,
            format!("spawn {cell}"),
        )
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cell(s) failed"), "{stderr}");
}
