#!/usr/bin/env bash
# Does recording a clip change what the app measures? Runs the real app in a 1280x720 window
# (under Xvfb where there is no display) with the same script twice, once recording a clip the
# whole time, in interleaved rounds of fresh processes, and prints each run's simulate p50 per
# layout from the app's own summary (steady frames only).
#
#   scripts/measure-clip.sh                     # 1M entities, soa then boxed, 3 rounds
#   COUNT=200000 ROUNDS=5 scripts/measure-clip.sh
#
# Environment: BIN (the release binary), COUNT, LAYOUTS, FRAMES (steady frames per layout),
# ROUNDS, OUT_DIR (scripts, logs and the clips).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-${CARGO_TARGET_DIR:-target}/release/entity-layouts}
COUNT=${COUNT:-1000000}
LAYOUTS=${LAYOUTS:-"soa boxed"}
FRAMES=${FRAMES:-150}
ROUNDS=${ROUNDS:-3}
OUT_DIR=${OUT_DIR:-measure-clip-out}

if [ ! -x "$BIN" ]; then
    cargo build --release
fi
mkdir -p "$OUT_DIR"

write_script() { # $1: "record" or "plain"
    echo "count $COUNT"
    echo "wait $(( COUNT / 250000 + 10 ))"
    [ "$1" = record ] && echo "record"
    for layout in $LAYOUTS; do
        echo "layout $layout"
        echo "wait $(( COUNT / 250000 + 4 + FRAMES ))"
    done
    echo "exit"
}
write_script plain >"$OUT_DIR/plain.script"
write_script record >"$OUT_DIR/record.script"

run() { # $1: plain|record, $2: round
    local args=(--size 1280x720 --script "$OUT_DIR/$1.script" --export-dir "$OUT_DIR/clips")
    if [ -n "${DISPLAY:-}" ]; then
        "$BIN" "${args[@]}"
    else
        xvfb-run -a -s "-screen 0 1280x720x24" "$BIN" "${args[@]}"
    fi >"$OUT_DIR/$1-$2.log" 2>&1
    echo "== $1, round $2"
    grep -E "^\s+[a-z0-9-]+ +threads=" "$OUT_DIR/$1-$2.log" | grep -v "n=0 " |
        sed -E 's/^\s+([a-z0-9-]+).* n=([0-9]+).*frame p50 +([0-9.]+) ms.*simulate p50 +([0-9.]+) ms.*/  \1 n=\2 frame p50 \3 ms, simulate p50 \4 ms/'
    grep -h "] clip " "$OUT_DIR/$1-$2.log" || true
}

for round in $(seq 1 "$ROUNDS"); do
    run plain "$round"
    run record "$round"
done
