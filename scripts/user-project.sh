#!/usr/bin/env bash
# A user's project outside the workspace, built from the packaged crates as an application
# without the experimental API builds them: `codex-app-client` and `codex-app-protocol` at
# their default features, `codex-app-traffic` as a dev-dependency. It checks:
#
# - that adding the drift check changes nothing of the user's API (cargo unifies a
#   dev-dependency's features into the test builds): an exhaustive `match` over the stable
#   `ServerRequest` (every variant the stable surface has, no wildcard) compiles under
#   `cargo check` (the user's build, type-checked: where a match is checked) and under
#   `cargo test` (built);
# - docs/drift-check.md's first two examples, as the user's own test files, on real sessions:
#   the first records a session of the pinned codex with the client's tap and checks it; the
#   second checks the sessions kept in `tests/sessions/`, here every session recorded without
#   the experimental opt-in (by `cargo xtask record`, from the real codex) of the floor, a
#   middle release and the newest release. Zero drift of the types; what codex sends of its
#   experimental API is reported apart, by path (a test of the project's own says so).
#
# The crates are packaged without verification (this build of them is the one CI makes) and unpacked;
# the project takes them through `[patch.crates-io]`, as it would take the published crates,
# with the workspace's locked versions of the other dependencies. The codex is the tests'
# pinned one (`.codex-bin/`, installed with npm when missing; `$CODEX_BIN` overrides), run
# with a throw-away CODEX_HOME. Everything goes under target/user-project (WORK overrides), the
# build too unless CARGO_TARGET_DIR is set.
# Usage: scripts/user-project.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-$root/target/user-project}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/protocol/Cargo.toml" | head -1)
codex=$(sed -n 's/^pub const CODEX_VERSION: &str = "\(.*\)";$/\1/p' "$root"/protocol/src/generated/*.rs | head -1)
floor=$(sed -n 's/^pub const FLOOR: &str = "\(.*\)";$/\1/p' "$root"/protocol/src/generated/*.rs | head -1)
[ -n "$version" ] && [ -n "$codex" ] && [ -n "$floor" ] || { echo "cannot read the crates' version, CODEX_VERSION or FLOOR" >&2; exit 1; }

# The recorded releases to check: the floor, the newest, and the first one between them.
middle=$(ls "$root/traffic/fixtures" | sort -V | awk -v f="$floor" -v c="$codex" '$0 != f && $0 != c' | head -1)
for release in "$floor" "$codex"; do
    [ -d "$root/traffic/fixtures/$release" ] || { echo "no fixtures of codex $release in traffic/fixtures (record them with \`cargo xtask record\`)" >&2; exit 1; }
done

echo "packaging codex-app-protocol, codex-app-client, codex-app-traffic $version"
rm -rf "$work/pkg" "$work/app"
mkdir -p "$work/pkg" "$work/app/src" "$work/app/tests/sessions"
cargo package -q --no-verify --allow-dirty --manifest-path "$root/Cargo.toml" --target-dir "$work/target" \
    -p codex-app-protocol -p codex-app-client -p codex-app-traffic
for crate in codex-app-protocol codex-app-client codex-app-traffic; do
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
codex-app-client = "${version%.*}"
codex-app-protocol = "${version%.*}"

[dev-dependencies]
codex-app-traffic = "${version%.*}"
serde_json = "1"
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }

[patch.crates-io]
codex-app-protocol = { path = "../pkg/codex-app-protocol-$version" }
codex-app-client = { path = "../pkg/codex-app-client-$version" }
codex-app-traffic = { path = "../pkg/codex-app-traffic-$version" }

[workspace]
EOF
# The workspace's build profiles (debug info, what is optimized): they change nothing the project
# checks, and with them the dependencies the workspace built in the same target folder (CI's
# earlier steps) are not built again.
awk '/^\[/ { keep = /^\[profile\./ } keep' "$root/Cargo.toml" >>"$work/app/Cargo.toml"
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

# The sessions: every recorded one that did not opt into the experimental API.
for release in $floor $middle $codex; do
    for session in "$root/traffic/fixtures/$release"/*.ndjson; do
        if ! grep -q 'experimentalApi' "$session"; then
            cp "$session" "$work/app/tests/sessions/$release-$(basename "$session")"
        fi
    done
done
count=$(ls "$work/app/tests/sessions" | wc -l)
[ "$count" -gt 0 ] || { echo "no recorded session without the experimental opt-in" >&2; exit 1; }
echo "sessions: $count, recorded without the experimental opt-in from codex $floor ${middle:+$middle }$codex"

# docs/drift-check.md's Rust blocks, in order: the first two are whole test files.
awk -v dir="$work/app/tests" '
    /^```rust/ { block++; file = dir "/doc_example_" block ".rs"; next }
    /^```/ { file = ""; next }
    file != "" && block <= 2 { print > file }
' "$root/docs/drift-check.md"
for n in 1 2; do
    [ -s "$work/app/tests/doc_example_$n.rs" ] || { echo "docs/drift-check.md has no Rust block $n" >&2; exit 1; }
done

cat >"$work/app/tests/stable_sessions.rs" <<'EOF'
//! What the drift check says of real sessions in a build without the experimental API.
use codex_app_traffic::{drift, Format, Kind};

#[test]
fn codex_leaks_are_reported_apart_by_path() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sessions");
    let mut reports = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let report = codex_app_traffic::check_file(&path, Format::Transcript).unwrap();
        reports.push((path.file_name().unwrap().to_string_lossy().into_owned(), report));
    }
    let text = drift::render(&reports);
    println!("{text}");
    for (name, report) in &reports {
        assert_eq!(report.drift_count(), 0, "{name}: {text}");
        // Only the deliberately bad lines of `protocol_errors` are not typed.
        assert_eq!(report.lines - report.typed, report.bad, "{name}: {text}");
        for f in report.experimental() {
            assert_eq!(f.kind, Kind::Experimental);
            assert!(f.method.is_some(), "{name}: {f}");
        }
    }
    // The newest release sends members of its experimental API to clients that did not opt in
    // (`thread/start`'s `result.multiAgentMode`, ...): each is named by its path.
    let newest = std::env::var("NEWEST").unwrap();
    let leaked: Vec<String> = reports
        .iter()
        .filter(|(name, _)| name.starts_with(&format!("{newest}-")))
        .flat_map(|(_, r)| r.experimental())
        .filter_map(|f| f.path.as_ref().map(ToString::to_string))
        .collect();
    assert!(leaked.iter().any(|p| p.starts_with("result.")), "no leaked member reported: {text}");
}

#[test]
fn the_match_is_the_stable_one() {
    // The library's exhaustive match, compiled in this test build too.
    let line = r#"{"id":1,"method":"some/newRequest","params":{}}"#;
    let request: codex_app_protocol::ServerRequest = serde_json::from_str(line).expect("decodes");
    assert_eq!(user_app::kind(&request), "Unrecognized");
}
EOF

codex_bin=${CODEX_BIN:-$root/.codex-bin/node_modules/.bin/codex}
if [ ! -x "$codex_bin" ]; then
    codex_bin=$("$root/scripts/install-codex.sh" | tail -1)
fi
# codex's home, and the temporary files of the user's tests (docs/drift-check.md's first example
# writes its session under `std::env::temp_dir()`), removed with it.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
codex_home=$scratch/codex-home
mkdir -p "$codex_home" "$scratch/tmp"

cd "$work/app"
# The build of the project: $CARGO_TARGET_DIR when set (CI gives the workspace's), else its own.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$work/target}"
echo "cargo check (the user's build: the crates at their default features)"
cargo check -q
echo "cargo test (the user's test build, the drift check added as a dev-dependency; codex $codex_bin)"
CODEX_BIN="$codex_bin" CODEX_HOME="$codex_home" NEWEST="$codex" TMPDIR="$scratch/tmp" cargo test -q
echo "user project: the stable match compiles in both builds; docs/drift-check.md's examples and the recorded sessions have no drift"
