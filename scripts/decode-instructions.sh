#!/usr/bin/env bash
# The instructions the typed decode executes per line, counted by valgrind's callgrind: a
# count that neither the load of a shared machine nor the code layout of one build moves, for
# telling a change in what the decode does from the few percent that timings move between two
# builds of the same code (docs/performance.md).
#
# For each tree given (default: this one), it builds that tree's `xtask-traffic` in release,
# runs `bench --rounds 1 --lines LINES` under callgrind three times (`--only "decode typed"`,
# `--only "two-step"`, and with no benchmark, for the set-up) and prints per decoded line, for
# the one-pass decode and the two-step one: instructions, level-1 instruction-cache misses and
# mispredicted branches (callgrind's simulated cache and predictor, not this machine's). With
# two trees, the last columns are the second's count over the first's.
#
#   scripts/decode-instructions.sh                       # this tree
#   scripts/decode-instructions.sh ../base .             # a worktree of another commit, then this
#   LINES=5000 scripts/decode-instructions.sh            # fewer lines (default 20000)
#
# Needs valgrind (`apt install valgrind`); about 40 s per tree after its build.
set -euo pipefail

command -v valgrind >/dev/null || { echo "valgrind not found: install it (apt install valgrind)" >&2; exit 2; }
lines=${LINES:-20000}
trees=("$@")
[ ${#trees[@]} -gt 0 ] || trees=("$(cd "$(dirname "$0")/.." && pwd)")
[ ${#trees[@]} -le 2 ] || { echo "usage: $0 [TREE [TREE]]" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# counts TREE ONLY: "instructions I1-misses mispredicts" of one callgrind run.
counts() {
    (cd "$1" && valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes \
        --callgrind-out-file="$out/callgrind.out" target/release/xtask-traffic \
        bench --rounds 1 --lines "$lines" --only "$2" >/dev/null 2>"$out/log") \
        || { cat "$out/log" >&2; exit 1; }
    awk '/ I +refs:/ {i=$NF} / I1 +misses:/ {m=$NF} / Mispredicts:/ {b=$3} END {print i, m, b}' "$out/log" | tr -d ,
}

# One warm-up round and one timed round: each line is decoded twice.
decodes=$((2 * lines))
declare -A result
for tree in "${trees[@]}"; do
    echo "building $tree ..." >&2
    (cd "$tree" && cargo build --release --quiet -p xtask --bin xtask-traffic --features client-bench)
    # Assigned first, so that a failed run stops the script (`set -e`).
    setup=$(counts "$tree" "no benchmark has this name")
    both=$(counts "$tree" "decode typed")
    two_step=$(counts "$tree" "two-step")
    read -r si sm sb <<<"$setup"
    read -r ai am ab <<<"$both"
    read -r ti tm tb <<<"$two_step"
    # "decode typed" runs both decodes; the set-up is in every run.
    result["$tree one-pass"]="$(((ai - ti) / decodes)) $(((am - tm) / decodes)) $(((ab - tb) / decodes))"
    result["$tree two-step"]="$(((ti - si) / decodes)) $(((tm - sm) / decodes)) $(((tb - sb) / decodes))"
done

printf '%s lines, per decoded line (callgrind)\n' "$lines"
printf '%-10s %-40s %12s %10s %12s' decode tree instructions "I1 misses" mispredicts
[ ${#trees[@]} -eq 2 ] && printf ' %10s %10s %12s' "(to first)" "(to first)" "(to first)"
echo
for decode in one-pass two-step; do
    for tree in "${trees[@]}"; do
        read -r i m b <<<"${result["$tree $decode"]}"
        printf '%-10s %-40s %12s %10s %12s' "$decode" "$(basename "$(cd "$tree" && pwd)")" "$i" "$m" "$b"
        if [ ${#trees[@]} -eq 2 ] && [ "$tree" = "${trees[1]}" ]; then
            read -r i0 m0 b0 <<<"${result["${trees[0]} $decode"]}"
            awk -v a="$i" -v b="$i0" -v c="$m" -v d="$m0" -v e="$b" -v f="$b0" \
                'BEGIN {printf " %10.3f %10.3f %12.3f", a/b, c/d, e/f}'
        fi
        echo
    done
done
