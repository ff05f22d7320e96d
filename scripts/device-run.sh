#!/usr/bin/env bash
# There, on a machine with a GPU, as one call (carry .device-carry and .gl; $OUT comes back):
# the gpu layout first (verify --gpu's ulps after 600 frames, bench --only gpu at 1M, 10M, 100M),
# then the app's frame-time matrix at 1M, 4M and 10M entities with a real GPU under both
# renderers (the gpu layout included, and 100M on it), then the renderers' bench (render) and
# the bench experiments that a 16-core machine answers differently. Prepared here by scripts/device-pack.sh.
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

echo "== gpu layout: equivalence with soa after 600 frames (a GPU that fuses x + v*dt into an FMA differs by a few ulps: recorded, not failed)"
"$bin" verify --gpu --count 1000000 --frames 600 --gpu-ulps 4294967295
echo "== gpu layout: bench"
"$bin" bench --only gpu --out "$OUT/bench-gpu" >/dev/null
sed -n '/^## /,$p' "$OUT/bench-gpu/results.md"

echo "== app, headless, real GPU"
BIN=$bin OUT_DIR="$OUT/app" FRAMES=${FRAMES:-30} LAYOUTS=${LAYOUTS:-"soa aos ecs-table boxed gpu"} scripts/measure-app.sh
echo "== app, headless, gpu layout at 100M (goal: >= 60 fps at 1920x1080 with the compute renderer)"
BIN=$bin OUT_DIR="$OUT/app-100m" FRAMES=${FRAMES:-30} COUNTS=100000000 LAYOUTS=gpu THREADS=all scripts/measure-app.sh

echo "== app, headless, seek on: the gpu layout's seek pass against soa's"
BIN=$bin OUT_DIR="$OUT/app-seek" FRAMES=${FRAMES:-30} COUNTS="1000000 10000000" LAYOUTS="soa gpu" THREADS=all RENDERERS=compute SEEK=1 scripts/measure-app.sh

echo "== bench on $(nproc) cores"
"$bin" bench ${BENCH_FLAGS:-} --only "${BENCH_ONLY:-render,threads,bandwidth,gather,ecs-vs-soa,switch}" --out "$OUT/bench" >/dev/null
sed -n '/^## /,$p' "$OUT/bench/results.md"
