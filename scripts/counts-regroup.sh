#!/usr/bin/env bash
# Proves that the counts check (`cargo bench --bench counts`) moves when a layout's code does, and
# not when the compiler regroups code no layout calls. In a scratch worktree of the current tree
# (uncommitted changes included), against the committed baseline:
#
#   1. regroup: the entity-layouts crate (app, bench, driver) built in ONE codegen unit instead of
#      the default, with a large unrelated function added to the app and to the library.
#      Expected: every count within 1% of the baseline (exit 0 from the check).
#   2. slowdown: a 5% slowdown written into one kernel (`regen_columns`, which soa and chunks run).
#      Expected: the check fails and names soa and chunks.
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

# A function of some 3,000 lines that no layout calls, kept alive behind a condition the compiler
# cannot see through (an environment variable nobody sets).
unrelated_function() {
    local name="$1"
    echo
    echo "/// scripts/counts-regroup.sh: code no layout calls, to regroup the crate's codegen units."
    echo "#[inline(never)]"
    echo "pub fn ${name}(seed: u64) -> u64 {"
    echo "    let mut h = seed;"
    for i in $(seq 1 1500); do
        echo "    h = std::hint::black_box(h.rotate_left($((i % 63 + 1))) ^ 0x$(printf '%016x' $((i * 2654435761))));"
        echo "    if h % $((i + 7)) == 3 { h = h.wrapping_mul($((i | 1))); }"
    done
    echo "    h"
    echo "}"
}

count() {
    # The check's own output is the evidence; its exit code says which way it went.
    (cd "$scratch/tree" && cargo bench --bench counts -- --tolerance "$1")
}

status=0
for step in "${which[@]}"; do
    case "$step" in
    regroup)
        echo "== regroup: entity-layouts in one codegen unit, plus 3,000 unrelated lines in the app and the library"
        fresh_tree
        mkdir -p "$scratch/tree/.cargo"
        cat >"$scratch/tree/.cargo/config.toml" <<'EOF'
[profile.release.package.entity-layouts]
codegen-units = 1
EOF
        unrelated_function regroup_unrelated_app >>"$scratch/tree/src/app/mod.rs"
        unrelated_function regroup_unrelated_lib >>"$scratch/tree/src/lib.rs"
        # Called where the compiler cannot prove it never runs.
        perl -0pi -e 's/(fn main\(\) -> ExitCode \{\n)/$1    if std::env::var_os("ENTITY_LAYOUTS_REGROUP_NEVER").is_some() {\n        println!("{} {}", app::regroup_unrelated_app(1), entity_layouts::regroup_unrelated_lib(2));\n    }\n/' "$scratch/tree/src/main.rs"
        grep -q ENTITY_LAYOUTS_REGROUP_NEVER "$scratch/tree/src/main.rs" || {
            echo "counts-regroup: could not find fn main in src/main.rs" >&2
            exit 2
        }
        if count 1; then
            echo "== regroup: every count within 1% of the baseline, as expected"
        else
            echo "== regroup: FAILED: regrouping code no layout calls moved a count" >&2
            status=1
        fi
        ;;
    slowdown)
        echo "== slowdown: about 5% more work written into regen_columns (soa, chunks)"
        fresh_tree
        kernel="$scratch/tree/core/src/layout/kernels.rs"
        perl -0pi -e 's/\*e = regen_one\(\*e, r, self\.dt\);/*e = regen_one(*e, r, self.dt) + S::ZERO * r * r;/' "$kernel"
        grep -q 'S::ZERO \* r \* r' "$kernel" || {
            echo "counts-regroup: regen_columns' loop was not found in $kernel" >&2
            exit 2
        }
        if count 2; then
            echo "== slowdown: FAILED: the check passed a slower kernel" >&2
            status=1
        else
            echo "== slowdown: the check failed on the slower kernel, as expected"
        fi
        ;;
    *)
        echo "counts-regroup: unknown step '$step'; accepted: regroup, slowdown" >&2
        exit 2
        ;;
    esac
done
exit "$status"
