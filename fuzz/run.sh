#!/usr/bin/env bash
# Seeds the corpora (seed.sh), builds the fuzz targets and runs each for SECONDS (default 10):
# one after the other, or as many at once as there are cores for the smoke run.
#
#   fuzz/run.sh --smoke                   # CI's smoke run: every target for 12 s, one per core
#   fuzz/run.sh 600                       # long runs: every target, 10 minutes each
#   fuzz/run.sh 600 drift                 # one target
#   cd fuzz && cargo +nightly fuzz run -O --codegen-units 16 decode_server -- -max_total_time=600
#   cd fuzz && cargo +nightly fuzz run --dev -s none --features drift drift -- -max_total_time=600
#
# Long runs use two builds, both with coverage: the decode, line reader and generator targets
# are cargo-fuzz's release build with AddressSanitizer and 16 codegen units instead of its
# default of 1 (both cores compile the large generated crate); the drift target (feature
# `drift`: the drift check's crate, which instantiates every generated type's decoder three
# times over) is an unoptimized `--dev` build without AddressSanitizer: optimized, it takes
# over 8 CPU-minutes to build, and unoptimized with AddressSanitizer it runs 4 inputs a
# second where it runs 80 without (AddressSanitizer finds memory errors of unsafe code, and
# the drift check and the crates it runs have none). The smoke run builds every target at
# once like the drift target (`--dev -s none`: about 2 CPU-minutes instead of 20), which is
# what a minute of fuzzing in CI is worth. Build and run take the same flags, or
# `cargo fuzz run` would build again.
#
# A crash is written to fuzz/artifacts/<target>/ and fails the run; reproduce it with
# `cd fuzz && cargo +nightly fuzz run <flags of run.sh> <target> artifacts/<target>/<file>`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
smoke=false
if [ "${1:-}" = --smoke ]; then
    smoke=true
    shift
fi
if $smoke; then seconds=12; else seconds="${1:-10}"; shift || true; fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(decode_server decode_client line_reader drift codegen)
./seed.sh
flags_of() {
    if $smoke; then
        echo --dev -s none --features drift
    elif [ "$1" = drift ]; then
        echo --dev -s none --features drift
    else
        echo -O --codegen-units 16
    fi
}
if $smoke; then
    # shellcheck disable=SC2046
    cargo +nightly fuzz build $(flags_of all)
else
    for t in "${targets[@]}"; do
        # shellcheck disable=SC2046
        cargo +nightly fuzz build $(flags_of "$t") "$t"
    done
fi
mkdir -p logs
# One target: the inputs earlier runs found (fuzz/regressions/<target>-*), each once, then
# SECONDS of fuzzing. Its output goes to logs/; it prints what it found and fails on a finding.
run_target() {
    local t=$1 status=0
    local regressions=(regressions/"$t"-*)
    if [ -e "${regressions[0]}" ]; then
        echo "=== $t: ${#regressions[@]} regression input(s)"
        # shellcheck disable=SC2046
        cargo +nightly fuzz run $(flags_of "$t") "$t" "${regressions[@]}" > "logs/$t-regressions.log" 2>&1 || {
            tail -40 "logs/$t-regressions.log"
            echo "fuzz $t: a regression input FAILED"
            return 1
        }
    fi
    echo "=== fuzz $t for ${seconds}s"
    # -timeout: an input slower than 10 s is a finding (e.g. quadratic work).
    # shellcheck disable=SC2046
    cargo +nightly fuzz run $(flags_of "$t") "$t" -- -max_total_time="$seconds" -timeout=10 -print_final_stats=1 > "logs/$t.log" 2>&1 || status=$?
    grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)|SUMMARY|panicked' "logs/$t.log" | sed "s/^/$t: /" || true
    if [ "$status" -ne 0 ]; then
        tail -40 "logs/$t.log"
        echo "fuzz $t: FAILED (the input is in fuzz/artifacts/$t/)"
        return 1
    fi
}
# As many targets at once as the machine has cores (a fuzzer runs on one): a long run's
# targets one after the other, as its SECONDS say.
jobs=1
if $smoke; then jobs=$(nproc 2>/dev/null || echo 1); fi
failed=0
running=0
for t in "${targets[@]}"; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n || failed=1
        running=$((running - 1))
    fi
    run_target "$t" &
    running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
    wait -n || failed=1
    running=$((running - 1))
done
exit "$failed"
