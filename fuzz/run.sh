#!/usr/bin/env bash
# Seeds the corpora (seed.sh), builds every fuzz target and runs each for SECONDS (default 10),
# one after the other. CI runs it as a smoke test; for a long run:
#
#   fuzz/run.sh 600                       # every target, 10 minutes each
#   cd fuzz && cargo +nightly fuzz run decode_server -- -max_total_time=600
#
# A crash is written to fuzz/artifacts/<target>/ and fails the run; reproduce it with
# `cargo +nightly fuzz run <target> fuzz/artifacts/<target>/<file>`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
seconds="${1:-10}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(decode_server decode_client line_reader drift codegen)
./seed.sh
cargo +nightly fuzz build -O
mkdir -p logs
for t in "${targets[@]}"; do
    echo "=== fuzz $t for ${seconds}s"
    # -timeout: an input slower than 10 s is a finding (e.g. quadratic work).
    status=0
    cargo +nightly fuzz run -O "$t" -- -max_total_time="$seconds" -timeout=10 -print_final_stats=1 > "logs/$t.log" 2>&1 || status=$?
    grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)|SUMMARY|panicked' "logs/$t.log" || true
    if [ "$status" -ne 0 ]; then
        tail -40 "logs/$t.log"
        echo "fuzz $t: FAILED (the input is in fuzz/artifacts/$t/)"
        exit 1
    fi
done
