#!/usr/bin/env bash
# A user's project outside the workspace, built from the packaged crates: `codex-app-protocol`
# without features as a dependency and `codex-app-traffic` as a dev-dependency. Checks that
# adding the drift check changes nothing of the user's API (cargo unifies a dev-dependency's
# features into the test builds):
#
# - an exhaustive `match` over the stable `ServerRequest` (every variant the stable surface
#   has, no wildcard) compiles under `cargo build` and under `cargo test`;
# - the drift check, in the user's test build, passes on a stable-only session (the pinned
#   codex's recorded handshake, then messages of the stable schema).
#
# The crates are packaged without verification (`.ci/run` verifies the packages) and unpacked;
# the project takes them through `[patch.crates-io]`, as it would take the published crates,
# with the workspace's locked versions of the other dependencies. Everything goes under
# target/user-project (WORK overrides). Usage: scripts/user-project.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-$root/target/user-project}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/protocol/Cargo.toml" | head -1)
codex=$(sed -n 's/^pub const CODEX_VERSION: &str = "\(.*\)";$/\1/p' "$root"/protocol/src/generated/*.rs | head -1)
[ -n "$version" ] && [ -n "$codex" ] || { echo "cannot read the crates' version or CODEX_VERSION" >&2; exit 1; }
# The handshake as the pinned codex recorded it (without the experimental opt-in), then
# messages of the stable schema written here: a whole recorded session is not stable-only, as
# codex sends some experimental members (`thread/start`'s `multiAgentMode`, ...) to clients
# that did not opt in (docs/drift-check.md).
fixture="$root/traffic/fixtures/$codex/command_approval.ndjson"
[ -f "$fixture" ] || { echo "no fixture $fixture (record it with \`cargo xtask record command_approval\`)" >&2; exit 1; }
if head -3 "$fixture" | grep -q 'experimentalApi'; then
    echo "$fixture's handshake opts into the experimental API: it is not a stable-only session" >&2
    exit 1
fi

echo "packaging codex-app-protocol, codex-app-traffic $version"
rm -rf "$work/pkg" "$work/app"
mkdir -p "$work/pkg" "$work/app/src" "$work/app/tests"
cargo package -q --no-verify --allow-dirty --manifest-path "$root/Cargo.toml" --target-dir "$work/target" \
    -p codex-app-protocol -p codex-app-traffic
for crate in codex-app-protocol codex-app-traffic; do
    tar -xzf "$work/target/package/$crate-$version.crate" -C "$work/pkg"
done

# The stable `ServerRequest`'s variants, read from the generated source: every method of its
# table without `cfg(feature = "experimental")`, and the catch-all.
arms=$(python3 - "$root/protocol/src/generated/methods.rs" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
block = text[text.index("pub enum ServerRequest;"):]
block = block[block.index("methods {"):block.index("\n    }\n")]
names = [m.group(2) for m in re.finditer(r'^\s*((?:#\[[^\]]*\]\s*)*)(\w+) = "', block, re.M)
         if 'feature = "experimental"' not in m.group(1)]
if not names:
    sys.exit("no stable ServerRequest variant found in " + sys.argv[1])
for n in names:
    print(f'        ServerRequest::{n} {{ .. }} => "{n}",')
print('        ServerRequest::Unrecognized { .. } => "Unrecognized",')
EOF
)

cat >"$work/app/Cargo.toml" <<EOF
[package]
name = "user-app"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
codex-app-protocol = "${version%.*}"

[dev-dependencies]
codex-app-traffic = "${version%.*}"

[patch.crates-io]
codex-app-protocol = { path = "../pkg/codex-app-protocol-$version" }
codex-app-traffic = { path = "../pkg/codex-app-traffic-$version" }

[workspace]
EOF
cp "$root/Cargo.lock" "$work/app/Cargo.lock"
cat >"$work/app/src/lib.rs" <<EOF
//! A user's code over the stable API: no wildcard, so a variant the dependencies' features add
//! fails the build (E0004).
use codex_app_protocol::ServerRequest;

pub fn kind(request: &ServerRequest) -> &'static str {
    match request {
$arms
    }
}
EOF
head -3 "$fixture" >"$work/app/tests/session.ndjson"
cat >>"$work/app/tests/session.ndjson" <<'EOF'
{"dir":"c2s","line":"{\"id\":2,\"method\":\"thread/archive\",\"params\":{\"threadId\":\"t-1\"}}"}
{"dir":"s2c","line":"{\"id\":2,\"result\":{}}"}
{"dir":"s2c","line":"{\"method\":\"thread/archived\",\"params\":{\"threadId\":\"t-1\"}}"}
{"dir":"s2c","line":"{\"method\":\"item/commandExecution/requestApproval\",\"id\":0,\"params\":{\"threadId\":\"t-1\",\"turnId\":\"u-1\",\"itemId\":\"call-1\",\"command\":\"ls\"}}"}
{"dir":"c2s","line":"{\"id\":0,\"result\":{\"decision\":\"decline\"}}"}
EOF
cat >"$work/app/tests/drift.rs" <<'EOF'
use codex_app_traffic::{drift, Format};

#[test]
fn a_stable_session_has_no_drift() {
    let transcript = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/session.ndjson");
    let report = codex_app_traffic::check_file(&transcript, Format::Transcript).expect("the transcript reads");
    assert_eq!(report.drift_count(), 0, "{}", drift::render(&[("session".into(), report.clone())]));
    assert_eq!((report.lines, report.typed), (8, 8), "every line is typed");
}

#[test]
fn the_match_is_the_stable_one() {
    // The library's exhaustive match, compiled in this test build too.
    let line = r#"{"id":1,"method":"some/newRequest","params":{}}"#;
    let request: codex_app_protocol::ServerRequest = serde_json::from_str(line).expect("decodes");
    assert_eq!(user_app::kind(&request), "Unrecognized");
}
EOF
# serde_json for the test above, at the locked version.
sed -i 's/^\[dev-dependencies\]$/[dev-dependencies]\nserde_json = "1"/' "$work/app/Cargo.toml"

cd "$work/app"
export CARGO_TARGET_DIR="$work/target"
echo "cargo build (the user's build: the protocol crate without features)"
cargo build -q
echo "cargo test (the user's test build: the drift check added as a dev-dependency)"
cargo test -q
echo "user project: the stable match compiles in both builds, the drift check passes"
