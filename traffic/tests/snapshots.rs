//! Snapshots of the typed summary of every fixture: one line per message with direction,
//! method, typed variant and a few key fields. After re-recording with a new codex
//! (`cargo xtask record`), `cargo insta review` shows what changed on the wire, message by
//! message.
//!
//! Snapshots are named by scenario, not by codex version, and hold no release number: an
//! upgrade is a diff of the same snapshot, empty when the new release behaves as the previous
//! one did.

use crate::support::{fixture_for_test, fixtures_for_test};
use codex_app_traffic::summary::summarize;
use codex_app_traffic::transcript;
use codex_app_traffic::Format;

/// The summary of the fixture of `scenario`; `None` when fixture tests are skipped.
fn summary(scenario: &str) -> Option<String> {
    let path = fixture_for_test(scenario, scenario)?;
    let entries =
        transcript::read_file(&path, Format::Transcript).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(summarize(&entries))
}

macro_rules! snapshot {
    ($($scenario:ident),* $(,)?) => {
        $(
            #[test]
            fn $scenario() {
                if let Some(summary) = summary(stringify!($scenario)) {
                    insta::assert_snapshot!(stringify!($scenario), summary);
                }
            }
        )*

        /// Every fixture has a snapshot test above.
        #[test]
        fn every_fixture_is_snapshotted() {
            let known = [$(stringify!($scenario)),*];
            let Some(files) = fixtures_for_test("every_fixture_is_snapshotted") else { return };
            for path in files {
                let name = path.file_stem().unwrap().to_string_lossy().into_owned();
                assert!(known.contains(&name.as_str()), "fixture `{name}` has no snapshot test; add it to `snapshot!` in {}", file!());
            }
        }
    };
}

snapshot!(
    lifecycle,
    streaming,
    reasoning,
    command_approval,
    dynamic_tool,
    upstream_failure,
    protocol_errors,
    interrupt
);
