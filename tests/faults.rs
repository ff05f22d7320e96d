//! A hostile machine: a memory limit the process did not expect. Asking for more entities than
//! fit is a refused request with a message that names what fits; the population is kept and the
//! run goes on (in the core, in a child process under `prlimit --as`, so the limit is real).

mod support;

use std::process::Command;

fn have_prlimit() -> bool {
    Command::new("prlimit")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The binary under an address-space limit of `limit` bytes.
fn limited(limit: u64, args: &[&str]) -> std::process::Output {
    Command::new("prlimit")
        .arg(format!("--as={limit}"))
        .arg(env!("CARGO_BIN_EXE_entity-layouts"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn under_a_memory_limit_a_count_too_big_is_refused_and_the_swarm_is_kept() {
    if !have_prlimit() {
        return support::skip_or_fail("prlimit (util-linux) is not installed");
    }
    let dir = std::env::temp_dir().join(format!("entity-layouts-limit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("limit.script");
    // 10M entities in Bevy's ECS need about 2.5 GB; the limit is 1 GB.
    std::fs::write(
        &script,
        "count 10000\nwait 2\nlayout ecs-table\nwait 2\ncount 10000000\nwait 3\nlayout boxed\ncount 20000\nwait 3\nexit\n",
    )
    .unwrap();
    let out = limited(
        1 << 30,
        &["replay", script.to_str().unwrap(), "--layout", "soa"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}\n{stdout}\n{stderr}", out.status);
    assert!(
        stderr.contains("refused 'count 10000000'")
            && stderr.contains("can be allocated; accepted: at most about"),
        "{stderr}"
    );
    assert!(
        stdout.contains("final: 20000 entities, layout boxed"),
        "the population is kept, and the actions after the refusal still happen: {stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn under_a_memory_limit_a_start_too_big_is_exit_code_2() {
    if !have_prlimit() {
        return support::skip_or_fail("prlimit (util-linux) is not installed");
    }
    let out = limited(1 << 30, &["verify", "--count", "20000000", "--frames", "1"]);
    assert_eq!(out.status.code(), Some(2), "{:?}", out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: ") && stderr.contains("MiB"),
        "{stderr}"
    );
}
