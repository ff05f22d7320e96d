#!/usr/bin/env bash
# There, on a machine with a GPU, as one run of at most 10 minutes (carry .device-carry and .gl;
# $OUT comes back, as one archive, all.tgz, beside device.log, since few files come back).
# Prepared here by scripts/device-pack.sh. Each step has its own time limit, the most wanted first:
# verify --gpu after 1 frame, the same against a CPU that fuses `a + b*c` (is FMA the whole
# difference, and at which sites?), bench --only gpu (1M, 10M, 100M), the app's matrix at 1M and 10M
# (every switch landed before its frames: `wait done`), seek in soa and gpu, soa's seek at 1M
# idiomatic, tuned, and sorted and tuned (on 1 and all threads), the gpu layout
# started at 100M, the quads at 10M, the switch and sort tours at 1M (1280x720, the targets'
# size), then the bench experiments that a GPU or 16 cores answer differently. The run of
# 2026-12-04 (docs/runs/device-h200-2026-12-04) took the steps up to the quads, in 179 s.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-device-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/device.log") 2>&1

if ! ldconfig -p | grep -q libvulkan; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
bin=/tmp/entity-layouts
gunzip -c .device-carry/entity-layouts.gz >"$bin" && chmod +x "$bin"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
nproc; grep -m1 'model name' /proc/cpuinfo
t0=$(date +%s)
step() { echo "== $(($(date +%s) - t0)) s: $*"; }
app() { timeout "$1" "$bin" --headless --size 1920x1080 --threads all "${@:2}" 2>&1 | grep -v '^\s*$' | tail -8; }

step "gpu layout against soa after 1 frame (a GPU that fuses x + v*dt into an FMA differs: recorded, not failed)"
timeout 35 "$bin" verify --gpu --count 1000000 --frames 1 --gpu-ulps 4294967295
step "gpu layout against a CPU that rounds a + b*c once (bit-identical: FMA is the whole difference)"
for frames in 1 600; do
    timeout 60 "$bin" verify --gpu --fused all --count 1000000 --frames $frames --gpu-ulps 4294967295
done
step "the same, one site fused at a time (which sites the driver contracts)"
for site in move regen seek move,regen; do
    timeout 30 "$bin" verify --gpu --fused $site --count 100000 --frames 600 --gpu-ulps 4294967295
done
step "gpu layout: bench"
timeout 75 "$bin" bench --only gpu --out "$OUT/bench-gpu" >/dev/null
sed -n '/^## /,$p' "$OUT/bench-gpu/results.md"
step "app matrix: 1M and 10M, 1 and all threads, compute renderer"
BIN=$bin OUT_DIR="$OUT/app" FRAMES=20 COUNTS="1000000 10000000" LAYOUTS="soa aos ecs-table boxed gpu" \
    THREADS="1 all" RENDERERS=compute timeout 120 scripts/measure-app.sh
grep -E "switched|grew|instead|cancel" "$OUT/app/app.log"
step "seek on: soa and gpu"
BIN=$bin OUT_DIR="$OUT/seek" FRAMES=20 COUNTS="1000000 10000000" LAYOUTS="soa gpu" THREADS=all \
    RENDERERS=compute SEEK=1 timeout 40 scripts/measure-app.sh
step "seek at 1M in soa: idiomatic in id order, tuned, then sorted by group and tuned (goal: under 16.67 ms)"
for threads in 1 all; do
    for answer in "" "--seek-kernel tuned" "--seek-kernel tuned --order group"; do
        echo "-- --threads $threads --seek $answer"
        # shellcheck disable=SC2086 # each answer is its options, split on purpose
        timeout 30 "$bin" --headless --size 1920x1080 --threads "$threads" --count 1000000 \
            --layout soa --renderer compute --frames 120 --seek $answer 2>&1 | grep -E "^  soa|^final"
    done
done
step "gpu layout started at 100M, compute renderer (goal: 60 fps or better at 1920x1080)"
app 40 --count 100000000 --layout gpu --renderer compute --frames 40
step "gpu layout at 10M, quads"
app 20 --count 10000000 --layout gpu --renderer quads --frames 30
for tour in switch sort; do
    step "the $tour tour at 1M, 1280x720 (each lands before the next: the log's lines time it)"
    timeout 55 "$bin" --layout soa --count 1000000 --headless --size 1280x720 \
        --script "assets/talks/$tour-tour.txt" >"$OUT/$tour-tour.log" 2>&1
    grep -E "switched|sorted|instead|cancel" "$OUT/$tour-tour.log"
done
step "bench on $(nproc) cores: ${BENCH_ONLY:=render,threads,bandwidth,gather}"
timeout 120 "$bin" bench ${BENCH_FLAGS:-} --only "$BENCH_ONLY" --out "$OUT/bench" >/dev/null
sed -n '/^## /,$p' "$OUT/bench/results.md"
step "end"
# At most 8 files come back: everything in one archive, the log beside it.
tar czf /tmp/all.tgz -C "$OUT" --exclude=./all.tgz --exclude=./device.log . && mv /tmp/all.tgz "$OUT/" &&
    find "$OUT" -mindepth 1 -maxdepth 1 ! -name all.tgz ! -name device.log -exec rm -rf {} +
