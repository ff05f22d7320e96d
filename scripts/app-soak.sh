#!/usr/bin/env bash
# The windowed soak: a seeded random script (layouts, counts up to MAX, threads, churn, pauses,
# screenshots) through the real app under Xvfb with Mesa's software Vulkan, then the same script
# through the core without a window; the two final checksums must match.
#
#   scripts/app-soak.sh [ACTIONS=900] [MAX=200000] [SEED=7]    # 900 actions: about 10 minutes here
set -euo pipefail
cd "$(dirname "$0")/.."
actions=${1:-900}
max=${2:-200000}
seed=${3:-7}
out=${OUT:-target/app-soak}
mkdir -p "$out"
bin=target/release/entity-layouts
cargo build --release --quiet
"$bin" soak --write-script "$out/script.txt" --actions "$actions" --max-count "$max" --seed "$seed" --shots "$out/shots"
start=$(date +%s)
app_rc=0
xvfb-run -a -s "-screen 0 1280x720x24" "$bin" --layout soa --count 20000 --seed "$seed" \
    --script "$out/script.txt" > "$out/app.txt" 2> "$out/app-stderr.txt" || app_rc=$?
elapsed=$(( $(date +%s) - start ))
"$bin" replay "$out/script.txt" --layout soa --count 20000 --seed "$seed" > "$out/replay.txt"
app=$(grep '^final: ' "$out/app.txt")
core=$(grep '^final: ' "$out/replay.txt")
echo "actions: $actions, counts up to $max, seed $seed; the app ran ${elapsed} s, exit code $app_rc"
echo "app:    $app"
echo "replay: $core"
echo "refused actions: $(grep -c 'refused' "$out/app-stderr.txt" || true); screenshots: $(ls "$out/shots" | wc -l)"
if [ "$app_rc" -ne 0 ] || [ "${app##* }" != "${core##* }" ]; then
    echo "FAILED: the app's end differs from the core's, or the app failed"
    exit 1
fi
echo "ok: the same checksum"
