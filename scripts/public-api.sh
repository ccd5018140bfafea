#!/usr/bin/env bash
# The public API of each published crate, one item a line (`kind path`; a type's own methods as
# `function Type::method`), from rustdoc's JSON: what a user can name, without the items hidden
# from the docs. The lists are committed in `public-api/<crate>.txt`, so that an addition to or
# a removal from a crate's API is a decision a reviewer sees in the diff.
#
#   scripts/public-api.sh          # write public-api/*.txt
#   scripts/public-api.sh --check  # fail (with the diff) when a list differs from the crate (CI)
#
# Each crate is documented with every feature (the largest API a user can have). Needs the
# nightly toolchain (rustdoc's JSON output is unstable) and python3; builds into
# target/public-api (`PUBLIC_API_TARGET` overrides: CI gives the folder of its nightly docs
# build, whose dependencies are built). The generated protocol types are
# listed too: a regen that changes them changes `public-api/codex-app-protocol.txt` (regen it
# with this script after `cargo xtask regen`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target="${PUBLIC_API_TARGET:-$root/target/public-api}"
check=false
case "${1:-}" in
    --check) check=true ;;
    "") ;;
    *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac
crates=(codex-app-protocol codex-app-client codex-app-traffic)
packages=()
for crate in "${crates[@]}"; do packages+=(-p "$crate"); done
# One command for the three (cargo runs their rustdoc side by side, over one build of the
# protocol crate: the traffic crate's `inspect` is on for the client's too, which adds nothing
# to the client's items).
RUSTDOCFLAGS="-Z unstable-options --output-format json" CARGO_TARGET_DIR="$target" cargo +nightly doc -q \
    --manifest-path "$root/Cargo.toml" --no-deps --all-features "${packages[@]}"
status=0
for crate in "${crates[@]}"; do
    list=$(python3 "$root/scripts/public-api.py" "$target/doc/${crate//-/_}.json")
    file="$root/public-api/$crate.txt"
    if $check; then
        if ! diff -u --label "$file (committed)" --label "$crate (built)" "$file" <(printf '%s\n' "$list"); then
            echo "$crate: its public API differs from public-api/$crate.txt; if the change is meant, run scripts/public-api.sh and commit the list" >&2
            status=1
        fi
    else
        mkdir -p "$root/public-api"
        printf '%s\n' "$list" >"$file"
        echo "$file: $(wc -l <"$file") items"
    fi
done
exit $status
