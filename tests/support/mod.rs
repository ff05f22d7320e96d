//! What every test that needs something of the machine shares: skipping, with the reason, where
//! it is missing, and failing instead under CI (`CI=true`), where `.ci/run` installs it all.
#![allow(dead_code)]

/// Whether this run is CI's, where nothing a test needs may be missing.
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Skips the test that cannot run here, saying why; under CI that is a failure.
pub fn skip_or_fail(reason: &str) {
    if under_ci() {
        panic!("this test cannot run under CI: {reason}");
    }
    eprintln!("skipping this test: {reason}");
}

/// Whether this machine has a GPU adapter (lavapipe in CI); where it has none the test goes on
/// without the gpu layout and says so, and under CI that is a failure.
pub fn gpu_adapter() -> bool {
    match entity_layouts::runtime::gpu::context::availability() {
        Ok(()) => true,
        Err(reason) if under_ci() => panic!("CI must have a GPU adapter (lavapipe): {reason}"),
        Err(reason) => {
            eprintln!("without the gpu layout: no GPU adapter: {reason}");
            false
        }
    }
}
