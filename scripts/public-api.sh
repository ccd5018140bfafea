#!/usr/bin/env bash
# The public API of the protocol crate, one item a line (`kind path`; a type's own methods as
# `function Type::method`), from rustdoc's JSON: what a user can name, without the items
# hidden from the docs. For reviewing what a change adds to or takes from the API:
#
#   scripts/public-api.sh > /tmp/after.txt
#   git stash; scripts/public-api.sh > /tmp/before.txt; git stash pop
#   diff /tmp/before.txt /tmp/after.txt
#
# FEATURES (default `experimental,inspect`) are the crate's features to document. Needs the
# nightly toolchain (rustdoc's JSON output is unstable) and python3; builds into
# target/public-api so as not to disturb the stable builds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target="$root/target/public-api"
CARGO_TARGET_DIR="$target" cargo +nightly rustdoc -q -p codex-app-protocol --features "${FEATURES:-experimental,inspect}" \
    --manifest-path "$root/Cargo.toml" -- -Z unstable-options --output-format json
python3 "$root/scripts/public-api.py" "$target/doc/codex_app_protocol.json"
