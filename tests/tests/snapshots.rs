//! Snapshots of the typed summary of every fixture: one line per message with direction,
//! method, typed variant and a few key fields. After re-recording with a new codex
//! (`cargo xtask record`), `cargo insta review` shows what changed on the wire, message by
//! message.
//!
//! Snapshots are named by scenario, not by codex version, so an upgrade is a diff of the same
//! snapshot.

use codex_app_traffic::summary::summarize;
use codex_app_traffic::transcript;
use codex_app_traffic::{fixtures_dir, Format};

fn summary(scenario: &str) -> String {
    let path = fixtures_dir().join(format!("{scenario}.ndjson"));
    let entries = transcript::read_file(&path, Format::Transcript).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    format!("codex {}\n{}", codex_app_protocol::CODEX_VERSION, summarize(&entries))
}

macro_rules! snapshot {
    ($($scenario:ident),* $(,)?) => {
        $(
            #[test]
            fn $scenario() {
                insta::assert_snapshot!(stringify!($scenario), summary(stringify!($scenario)));
            }
        )*

        /// Every fixture has a snapshot test above.
        #[test]
        fn every_fixture_is_snapshotted() {
            let known = [$(stringify!($scenario)),*];
            for entry in std::fs::read_dir(fixtures_dir()).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|x| x == "ndjson") {
                    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
                    assert!(known.contains(&name.as_str()), "fixture `{name}` has no snapshot test; add it to `snapshot!` in {}", file!());
                }
            }
        }
    };
}

snapshot!(lifecycle, streaming, reasoning, command_approval, dynamic_tool, upstream_failure, protocol_errors, interrupt);
