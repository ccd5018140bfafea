#!/usr/bin/env bash
# Seeds the corpora (seed.sh), builds every fuzz target and runs each for SECONDS (default 10),
# one after the other. CI runs it as a smoke test; for a long run:
#
#   fuzz/run.sh 600                       # every target, 10 minutes each
#   fuzz/run.sh 600 drift                 # one target
#   cd fuzz && cargo +nightly fuzz run -O --codegen-units 16 decode_server -- -max_total_time=600
#   cd fuzz && cargo +nightly fuzz run --dev --features drift drift -- -max_total_time=600
#
# Two builds, both with AddressSanitizer and coverage: the decode, line reader and generator
# targets are cargo-fuzz's release build with 16 codegen units instead of its default of 1 (both
# cores compile the large generated crate); the drift target (feature `drift`: the drift check's
# crate, which instantiates every generated type's decoder three times over) is an unoptimized
# `--dev` build, minutes cheaper to build and fast enough to fuzz. Build and run take the same
# flags, or `cargo fuzz run` would build again.
#
# A crash is written to fuzz/artifacts/<target>/ and fails the run; reproduce it with
# `cd fuzz && cargo +nightly fuzz run <flags of run.sh> <target> artifacts/<target>/<file>`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
seconds="${1:-10}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(decode_server decode_client line_reader drift codegen)
./seed.sh
flags_of() {
    if [ "$1" = drift ]; then echo --dev --features drift; else echo -O --codegen-units 16; fi
}
for t in "${targets[@]}"; do
    # shellcheck disable=SC2046
    cargo +nightly fuzz build $(flags_of "$t") "$t"
done
mkdir -p logs
for t in "${targets[@]}"; do
    echo "=== fuzz $t for ${seconds}s"
    # -timeout: an input slower than 10 s is a finding (e.g. quadratic work).
    status=0
    cargo +nightly fuzz run $(flags_of "$t") "$t" -- -max_total_time="$seconds" -timeout=10 -print_final_stats=1 > "logs/$t.log" 2>&1 || status=$?
    grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)|SUMMARY|panicked' "logs/$t.log" || true
    if [ "$status" -ne 0 ]; then
        tail -40 "logs/$t.log"
        echo "fuzz $t: FAILED (the input is in fuzz/artifacts/$t/)"
        exit 1
    fi
done
