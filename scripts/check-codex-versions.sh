#!/usr/bin/env bash
# Regenerate the protocol crate from other codex releases and check that it compiles, with and
# without the `experimental` feature. Nothing here is committed or vendored: each release is
# installed from npm into a scratch folder and generated into a scratch copy of the repo.
#
#   scripts/check-codex-versions.sh                  # 0.60.1 0.100.0 0.140.0 0.166.0 0.169.0
#   scripts/check-codex-versions.sh 0.80.0 0.150.0
#
# Environment: SCRATCH (default: a new temp dir), CARGO_TARGET_DIR (shared by all versions).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(0.60.1 0.100.0 0.140.0 0.166.0 0.169.0)
scratch="${SCRATCH:-$(mktemp -d)}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$scratch/target}"
command -v npm >/dev/null || { echo "check-codex-versions: npm is required" >&2; exit 1; }

check() {
    local copy="$1" schema="$2" v="$3"
    shift 3
    cd "$copy" || return 1
    cargo run --quiet --package xtask --no-default-features -- regen \
        --stable "$schema/stable" "$@" --codex-version "$v" > regen.log || { cat regen.log; return 1; }
    tail -2 regen.log
    cargo check --quiet --package codex-app-protocol || return 1
    cargo check --quiet --package codex-app-protocol --features experimental || return 1
    cargo clippy --quiet --package codex-app-protocol --features experimental -- -D warnings || return 1
}

failed=()
for v in "${versions[@]}"; do
    echo "=== codex $v"
    bin="$scratch/codex-$v/node_modules/.bin/codex"
    if [ ! -x "$bin" ]; then
        npm install --silent --no-audit --no-fund --prefix "$scratch/codex-$v" "@openai/codex@$v" >/dev/null
    fi
    schema="$scratch/schema-$v"
    rm -rf "$schema" && mkdir -p "$schema"
    "$bin" app-server generate-json-schema --out "$schema/stable"
    experimental=()
    if "$bin" app-server generate-json-schema --experimental --out "$schema/experimental" 2>/dev/null; then
        experimental=(--experimental "$schema/experimental")
    else
        echo "codex $v has no --experimental: stable surface only"
    fi
    copy="$scratch/repo-$v"
    rm -rf "$copy" && mkdir -p "$copy"
    git -C "$repo" ls-files -z | (cd "$repo" && xargs -0 cp --parents -t "$copy")
    # `set -e` does not apply inside a condition, so every step is checked by hand.
    if check "$copy" "$schema" "$v" "${experimental[@]}"; then
        echo "codex $v: ok"
    else
        echo "codex $v: FAILED"
        failed+=("$v")
    fi
done
[ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}"; exit 1; }
echo "all ok: ${versions[*]}"
