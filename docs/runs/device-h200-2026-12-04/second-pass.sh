#!/usr/bin/env bash
# Second device call, 2026-12-04: the matrix with `wait done` and the headless GPU wait.
set -uo pipefail
OUT=${OUT:-device-out}; mkdir -p "$OUT"
exec > >(tee "$OUT/device2.log") 2>&1
if ! ldconfig -p | grep -q libvulkan; then for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
bin=/tmp/entity-layouts
gunzip -c .device-carry/entity-layouts.gz >"$bin" && chmod +x "$bin"
t0=$(date +%s); stamp() { echo "-- $(( $(date +%s) - t0 )) s: $*"; }
stamp "verify --gpu after 1 and 60 frames (how the ulps grow)"
timeout 35 "$bin" verify --gpu --count 1000000 --frames 1 --gpu-ulps 4294967295
timeout 25 "$bin" verify --gpu --count 1000000 --frames 60 --gpu-ulps 4294967295
stamp "app matrix, compute renderer, wait done"
BIN=$bin OUT_DIR="$OUT/app" FRAMES=20 COUNTS="1000000 10000000" LAYOUTS="soa aos ecs-table boxed gpu" THREADS="1 all" RENDERERS=compute timeout 110 scripts/measure-app.sh
grep -E "switched|grew|instead|cancel" "$OUT/app/app.log" | head -40
stamp "seek on: soa and gpu"
BIN=$bin OUT_DIR="$OUT/seek" FRAMES=20 COUNTS="1000000 10000000" LAYOUTS="soa gpu" THREADS=all RENDERERS=compute SEEK=1 timeout 45 scripts/measure-app.sh
stamp "gpu layout started at 100M, compute"
timeout 40 "$bin" --count 100000000 --layout gpu --threads all --headless --size 1920x1080 --renderer compute --frames 40 2>&1 | grep -v "^\s*$" | tail -8
stamp "gpu layout at 10M, quads (the H200's graphics pipeline)"
timeout 20 "$bin" --count 10000000 --layout gpu --threads all --headless --size 1920x1080 --renderer quads --frames 30 2>&1 | grep -v "^\s*$" | tail -6
stamp "end"
