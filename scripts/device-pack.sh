#!/usr/bin/env bash
# Here, before a run on a machine with a GPU (see scripts/device-run.sh): the release binary,
# stripped and compressed, and the Vulkan/GL loader packages that machine lacks, into git-ignored
# folders that the run carries (.device-carry and .gl).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
# The test build makes the binary too, with the features the tests unify: `cargo build
# --release` alone would rebuild Bevy with other ones, a second long build (BEVY-FACTS.md).
cargo test --release --no-run
mkdir -p .device-carry
strip -o .device-carry/entity-layouts "$target/release/entity-layouts"
gzip -f -9 .device-carry/entity-layouts
grep -qx '/.gl/' .git/info/exclude 2>/dev/null || echo /.gl/ >>.git/info/exclude
if ! ls .gl/libvulkan1_*.deb >/dev/null 2>&1; then
    mkdir -p .gl /tmp/amd64/partial
    o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64)
    apt-get "${o[@]}" update -qq
    (cd .gl && apt-get "${o[@]}" download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
du -sh .device-carry .gl
