#!/usr/bin/env bash
# Rehearse the whole upgrade routine (docs/upgrading.md) for other codex releases, each
# in a scratch copy of the repository (tracked files as they are in the work tree):
#
#   1. install that codex from npm (into a cache folder, reused across runs)
#   2. cargo xtask regen --codex <it>           vendor its schema, regenerate the crate
#   3. build the whole workspace, every target but the examples (xtask and its xtask-traffic
#      binary included), and codex-app-client with all its features and without (its
#      server-request handler is generated; its tests are written for the vendored release,
#      and a regen from a release out of the range leaves them out, see `written_for_codex!`;
#      its examples teach the vendored release's types and are left out)
#   4. cargo xtask record --codex <it>          record every scenario into traffic/fixtures/<v>/
#   5. cargo xtask drift traffic/fixtures/<v>/*   zero drift expected on what was recorded
#   6. clippy -D warnings, with `experimental` (workspace) and without (the protocol crate and the
#      client alone)
#
# A scenario that does not fit a release (a method or member its schema does not have) fails
# at run time with the member named; it is listed in the summary and does not fail the release.
# Nothing here is committed; the repository itself is not touched.
#
#   scripts/check-codex-versions.sh                        # 0.120.0 0.140.0 0.160.0 0.169.0 0.171.0
#   scripts/check-codex-versions.sh 0.140.0
#   KEEP=1 scripts/check-codex-versions.sh 0.140.0          # keep the scratch copies
#   COMPILE_ONLY=1 scripts/check-codex-versions.sh 0.120.0  # regen + `cargo check` of every
#                                                           # target but the examples, the
#                                                           # client's with all features (CI)
#
# Environment:
#   SCRATCH           the scratch folder (default: a new temp dir; removed at the end unless KEEP=1)
#   CODEX_VERSIONS_DIR where releases are installed (default: $SCRATCH/codex; give a lasting
#                     folder to install each release once)
#   CARGO_TARGET_DIR  shared by all copies (default: $SCRATCH/target), so dependencies build once
#
# Prints one summary row per release at the end; exits non-zero when any step of any release
# failed (recording excepted, see above).
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(0.120.0 0.140.0 0.160.0 0.169.0 0.171.0)
# Every target but the example programs (the `codex-app-examples` package, left out of each
# `--workspace` command): they teach the types of the vendored release (docs/upgrading.md, "After the
# regen"), as the pinned tests are written against them.
targets=(--lib --bins --tests --benches)
scratch="${SCRATCH:-$(mktemp -d -t codex-versions.XXXXXX)}"
installs="${CODEX_VERSIONS_DIR:-$scratch/codex}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$scratch/target}"
export CARGO_TERM_COLOR=never
command -v npm >/dev/null || { echo "check-codex-versions: npm is required to install codex releases" >&2; exit 1; }
mkdir -p "$scratch" "$installs"
echo "check-codex-versions: scratch $scratch, target $CARGO_TARGET_DIR"

rows=()
failed=()

# Runs a step, its output to $log; prints ok/FAILED. Usage: step NAME CMD...
step() {
    local name="$1"
    shift
    printf '  %-8s ' "$name"
    if "$@" >>"$log" 2>&1; then
        echo ok
        return 0
    fi
    echo "FAILED (log: $log)"
    tail -n 25 "$log" | sed 's/^/    | /'
    return 1
}

for v in "${versions[@]}"; do
    echo "=== codex $v"
    started=$(date +%s)
    copy="$scratch/repo-$v"
    log="$scratch/codex-$v.log"
    : >"$log"
    status=ok types=- build=- recorded=- drift=- clippy=-

    bin="$installs/codex-$v/node_modules/.bin/codex"
    if [ ! -x "$bin" ] && ! step install npm install --silent --no-audit --no-fund --prefix "$installs/codex-$v" "@openai/codex@$v"; then
        rows+=("$(printf '%-9s %-7s %s' "$v" "FAILED" "npm install failed")")
        failed+=("$v")
        continue
    fi

    rm -rf "$copy" && mkdir -p "$copy"
    (cd "$repo" && git ls-files -z | xargs -0 cp --parents -t "$copy")
    cd "$copy" || exit 1

    if step regen cargo xtask regen --codex "$bin"; then
        types=$(grep -o -E 'codex [^ ]+: [0-9]+ types' "$log" | tail -1 | awk '{print $3}')
        if [ -n "${COMPILE_ONLY:-}" ]; then
            if step check cargo check --workspace --exclude codex-app-examples "${targets[@]}" \
                && step check-stable cargo check -p codex-app-protocol "${targets[@]}" \
                && step check-client cargo check -p codex-app-client "${targets[@]}" --all-features \
                && step check-client-stable cargo check -p codex-app-client; then
                build=checked
            else
                build=FAILED status=FAILED
            fi
        elif step build cargo build --workspace --exclude codex-app-examples "${targets[@]}" \
            && step build-client cargo build -p codex-app-client "${targets[@]}" --all-features \
            && step build-client-stable cargo build -p codex-app-client; then
            build=ok
            # Each scenario is recorded on its own so that one that does not fit is reported
            # by name; the others are still recorded.
            ok=() notfit=()
            names=$(cargo xtask record --list 2>>"$log")
            for scenario in $names; do
                if cargo xtask record --codex "$bin" "$scenario" >>"$log" 2>&1; then
                    ok+=("$scenario")
                else
                    # The first finding that says why (a method or member the schema lacks), else
                    # the error line itself.
                    reason=$(grep -A3 "^$scenario .*FAILED" "$log" | grep -o -m1 -E '(unknown-method|unknown-field|undecodable|unknown-variant|round-trip).*' \
                        || grep -m1 "^$scenario .*FAILED" "$log" | sed "s/^$scenario *FAILED: //")
                    reason=${reason:0:110}
                    notfit+=("$scenario${reason:+ ($reason)}")
                fi
            done
            recorded="${#ok[@]}/$(echo $names | wc -w)"
            echo "  record   $recorded recorded${ok:+: ${ok[*]}}"
            for n in "${notfit[@]}"; do echo "           not recorded: $n"; done
            if [ ${#ok[@]} -gt 0 ]; then
                if step drift cargo xtask drift traffic/fixtures/"$v"/*.ndjson; then
                    drift=0
                else
                    drift=$(grep -o -E '^  total +[0-9]+' "$log" | tail -1 | awk '{print $2}')
                    status=FAILED
                fi
            fi
        else
            build=FAILED status=FAILED
        fi
        if [ -n "${COMPILE_ONLY:-}" ]; then
            :
        elif step clippy cargo clippy --workspace --exclude codex-app-examples "${targets[@]}" -- -D warnings \
            && step clippy-stable cargo clippy -p codex-app-protocol "${targets[@]}" -- -D warnings \
            && step clippy-client cargo clippy -p codex-app-client "${targets[@]}" -- -D warnings \
            && step clippy-client-all cargo clippy -p codex-app-client "${targets[@]}" --all-features -- -D warnings; then
            clippy=ok
        else
            clippy=FAILED status=FAILED
        fi
    else
        status=FAILED
    fi
    cd "$repo" || exit 1
    [ "$status" = ok ] || failed+=("$v")
    rows+=("$(printf '%-9s %-7s %6s %-6s %-9s %-6s %-7s %5ss' "$v" "$status" "$types" "$build" "$recorded" "$drift" "$clippy" "$(($(date +%s) - started))")")
    [ -n "${KEEP:-}" ] || rm -rf "$copy"
done

echo
printf '%-9s %-7s %6s %-6s %-9s %-6s %-7s %6s\n' codex result types build recorded drift clippy time
for row in "${rows[@]}"; do echo "$row"; done
[ -n "${KEEP:-}" ] || [ -n "${SCRATCH:-}" ] || rm -rf "$scratch"
[ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}"; exit 1; }
echo "all ok: ${versions[*]}"
