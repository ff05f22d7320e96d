#!/usr/bin/env bash
# Proves that the counts check (`cargo bench --bench counts`) moves with a layout's own code and
# with nothing else. In a scratch worktree of the current tree (uncommitted changes included),
# against the committed baseline:
#
#   1. regroup: the entity-layouts crate (app, bench, runtime) built in ONE codegen unit instead
#      of the default; about 1,000 lines of code no layout calls added each to the app, the
#      library and the core (its `values` module, which no layout uses), all linked in; and
#      allocations no layout makes: 3 MB and a line of text on the main thread, and a 300 KB
#      buffer in the counting thread before its population is built.
#      Expected: every checked count within 1% of the baseline (exit 0 from the check).
#   2. slowdown: about 5% more work written into one layout's move loop (`move_records`, which
#      only `aos` runs). Expected: the check fails and names aos, and no other layout.
#
# Usage: scripts/counts-regroup.sh            (both; exit 0 when both behave as expected)
#        scripts/counts-regroup.sh regroup    (or: slowdown) one of them
#
# It builds in the project's target directory (CARGO_TARGET_DIR if set), so only the two crates
# of this repository are recompiled (a few minutes each); the next build of the checkout itself
# recompiles them again. Needs valgrind. Do not build the checkout while it runs.
set -euo pipefail

root="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
export CARGO_TERM_COLOR=never
which=("${@:-regroup slowdown}")
read -r -a which <<<"${which[*]}"

# The tree as it is now, uncommitted changes included.
rev="$(git -C "$root" stash create)"
rev="${rev:-HEAD}"
scratch="$(mktemp -d)"
cleanup() {
    git -C "$root" worktree remove --force "$scratch/tree" >/dev/null 2>&1 || true
    rm -rf "$scratch"
}
trap cleanup EXIT

fresh_tree() {
    git -C "$root" worktree remove --force "$scratch/tree" >/dev/null 2>&1 || true
    git -C "$root" worktree add --detach --quiet "$scratch/tree" "$rev"
}

# A function of some 1,000 lines that no layout calls, kept alive behind a condition the compiler
# cannot see through (an environment variable nobody sets).
unrelated_function() {
    local name="$1"
    echo
    echo "/// scripts/counts-regroup.sh: code no layout calls, to move the code around it."
    echo "#[inline(never)]"
    echo "pub fn ${name}(seed: u64) -> u64 {"
    echo "    let mut h = seed;"
    for i in $(seq 1 500); do
        echo "    h = std::hint::black_box(h.rotate_left($((i % 63 + 1))) ^ 0x$(printf '%016x' $((i * 2654435761))));"
        echo "    if h % $((i + 7)) == 3 { h = h.wrapping_mul($((i | 1))); }"
    done
    echo "    h"
    echo "}"
}

# Fails unless file $1 holds $2: the edit before it found what it looked for.
edited() {
    grep -qF "$2" "$1" || {
        echo "counts-regroup: could not edit $1 (its code changed?)" >&2
        exit 2
    }
}

count() {
    # The check's own output is the evidence; its exit code says which way it went.
    (cd "$scratch/tree" && cargo bench --bench counts -- --tolerance "$1")
}

status=0
for step in "${which[@]}"; do
    case "$step" in
    regroup)
        echo "== regroup: entity-layouts in one codegen unit, 1,000 unrelated lines each in the app, the library and the core, unrelated allocations before the population"
        fresh_tree
        tree="$scratch/tree"
        mkdir -p "$tree/.cargo"
        cat >"$tree/.cargo/config.toml" <<'EOF'
[profile.release.package.entity-layouts]
codegen-units = 1
EOF
        unrelated_function regroup_unrelated_app >>"$tree/src/app/mod.rs"
        unrelated_function regroup_unrelated_lib >>"$tree/src/lib.rs"
        unrelated_function regroup_unrelated_core >>"$tree/core/src/values.rs"
        # Called where the compiler cannot prove it never runs, after allocations that live as
        # long as the process.
        perl -0pi -e 's/(fn main\(\) -> ExitCode \{\n)/$1    let _unrelated = std::hint::black_box((vec![3u8; 3 << 20], format!("{:?}", std::env::args())));\n    if std::env::var_os("ENTITY_LAYOUTS_REGROUP_NEVER").is_some() {\n        println!("{} {} {}", app::regroup_unrelated_app(1), entity_layouts::regroup_unrelated_lib(2), entity_layouts_core::values::regroup_unrelated_core(3));\n    }\n/' "$tree/src/main.rs"
        edited "$tree/src/main.rs" ENTITY_LAYOUTS_REGROUP_NEVER
        # A big block in the counting thread before the population, alive while it is counted.
        perl -0pi -e 's/(\n    let mut swarm = Swarm::<f32>::with_count\(spec\.layout, SEED, spec\.n\)\?;)/\n    let _unrelated = std::hint::black_box(vec![1u8; 300_000]);$1/' "$tree/src/tools/counters/mod.rs"
        edited "$tree/src/tools/counters/mod.rs" 'vec![1u8; 300_000]'
        if count 1; then
            symbols="$(nm "$CARGO_TARGET_DIR/release/entity-layouts" | grep -c 'regroup_unrelated_' || true)"
            if [ "$symbols" -eq 3 ]; then
                echo "== regroup: every count within 1% of the baseline, as expected"
            else
                echo "== regroup: FAILED: the binary holds $symbols of the 3 unrelated functions, so the proof proved nothing" >&2
                status=1
            fi
        else
            echo "== regroup: FAILED: code or allocations no layout has moved a count" >&2
            status=1
        fi
        ;;
    slowdown)
        echo "== slowdown: about 5% more work written into aos's move loop (move_records)"
        fresh_tree
        kernel="$scratch/tree/core/src/layout/kernels.rs"
        perl -0pi -e 's/\(e\.x, e\.y\) = move_one\(e\.x, e\.y, e\.vx, e\.vy, self\.dt\);/(e.x, e.y) = move_one(e.x + S::ZERO * e.vy, e.y, e.vx, e.vy, self.dt);/' "$kernel"
        edited "$kernel" 'e.x + S::ZERO * e.vy'
        log="$scratch/slowdown.log"
        if count 2 2>&1 | tee "$log"; then
            echo "== slowdown: FAILED: the check passed a slower move loop" >&2
            status=1
        else
            moved="$(sed -n 's/^counts: MOVED //p' "$log")"
            others="$(grep -v '^aos: ' <<<"$moved" || true)"
            if [ -z "$moved" ]; then
                echo "== slowdown: FAILED: the check failed without naming a figure that moved" >&2
                status=1
            elif [ -n "$others" ]; then
                echo "== slowdown: FAILED: the check named layouts that do not run aos's move loop:" >&2
                echo "$others" >&2
                status=1
            else
                echo "== slowdown: the check failed on aos alone, as expected"
            fi
        fi
        ;;
    *)
        echo "counts-regroup: unknown step '$step'; accepted: regroup, slowdown" >&2
        exit 2
        ;;
    esac
done
exit "$status"
