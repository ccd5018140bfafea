#!/usr/bin/env bash
# Install the pinned `codex` CLI (npm package @openai/codex) into <repo>/.codex-bin/.
#
# Used by `cargo xtask record` (and anyone who wants to run the real `codex app-server`
# locally). The folder is git-ignored; never commit it (the package is about 400 MB).
#
#   scripts/install-codex.sh                      # installs 0.171.0
#   CODEX_VERSION=0.166.0 scripts/install-codex.sh
#
# Environment:
#   CODEX_VERSION       npm version to install (default 0.171.0)
#   CODEX_INSTALL_DIR   install prefix (default <repo>/.codex-bin)
#
# Idempotent: does nothing when the installed binary already reports that version.
# Prints the path of the binary on its last line of output (stdout).
set -euo pipefail

version="${CODEX_VERSION:-0.171.0}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="${CODEX_INSTALL_DIR:-$repo/.codex-bin}"
bin="$prefix/node_modules/.bin/codex"

die() {
    echo "install-codex: error: $*" >&2
    exit 1
}

installed_version() {
    # `codex --version` prints `codex-cli 0.171.0`.
    [ -x "$bin" ] || return 0
    "$bin" --version 2>/dev/null | awk '{ print $NF }' || true
}

if [ "$(installed_version)" = "$version" ]; then
    echo "install-codex: codex $version already installed in $prefix" >&2
    echo "$bin"
    exit 0
fi

command -v npm >/dev/null 2>&1 \
    || die "npm not found on PATH; install Node.js (which ships npm) and run this script again"

echo "install-codex: installing @openai/codex@$version into $prefix" >&2
mkdir -p "$prefix"
# --save-exact pins the version in $prefix/package.json (npm would otherwise write ^version).
npm install --prefix "$prefix" --save-exact --no-audit --no-fund \
    "@openai/codex@$version" >&2 \
    || die "npm install @openai/codex@$version failed (see npm output above)"

got="$(installed_version)"
[ "$got" = "$version" ] \
    || die "installed binary $bin reports version '${got:-<none>}', expected '$version'"

echo "install-codex: installed codex $version" >&2
echo "$bin"
