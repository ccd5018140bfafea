//! Recorded codex app-server traffic: the transcript format, the drift check and the typed
//! summary. Used by applications' tests (below), by `cargo xtask record` / `cargo xtask drift`
//! and by this crate's tests in its workspace, which check every committed fixture
//! (`fixtures/<codex version>/*.ndjson`, not in the package).
//!
//! - [`transcript`]: reading and writing `{"dir", "line"}` transcripts and one-sided NDJSON.
//! - [`drift`]: decoding every line with the typed crate and reporting where wire and types
//!   disagree.
//! - [`summary`]: one line per message (direction, method, typed variant, key fields), for
//!   snapshot tests.
//!
//! # The drift check in your tests
//!
//! Record a session of your application with `codex-app-client`'s tap
//! (`Client::builder().tap(Tap::create(path)?)`), then check the transcript: the test fails on
//! any line the types do not read as the server wrote it.
//!
//! ```no_run
//! use codex_app_traffic::{drift, Format};
//!
//! let transcript = std::path::Path::new("session.ndjson");
//! let report = codex_app_traffic::check_file(transcript, Format::Transcript).expect("the transcript reads");
//! assert_eq!(report.drift_count(), 0, "{}", drift::render(&[("session".into(), report.clone())]));
//! ```

pub mod drift;
pub mod summary;
pub mod transcript;
pub mod unrecognized;

pub use drift::{check, check_file, Finding, Kind, Report};
pub use transcript::{Dir, Entry, Format, Side};

/// The folder of the committed fixtures for the codex version the protocol crate was
/// generated from: `traffic/fixtures/<CODEX_VERSION>`.
pub fn fixtures_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(codex_app_protocol::CODEX_VERSION)
}

/// Set (to anything but `0` or empty) to skip the tests that read the committed fixtures when
/// none are recorded for `CODEX_VERSION` yet (right after a regen, before `cargo xtask record`):
/// the protocol crate's variable for tests written against another release.
pub const SKIP_PINNED_TESTS_ENV: &str = codex_app_protocol::__test_support::SKIP_PINNED_TESTS_ENV;

/// The committed fixtures (`*.ndjson` in [`fixtures_dir`], sorted), or a message that says
/// none are recorded for this codex version and how to record them.
pub fn fixture_files() -> Result<Vec<std::path::PathBuf>, String> {
    let dir = fixtures_dir();
    let mut files: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", dir.display())),
    };
    files.sort();
    if files.is_empty() {
        let version = codex_app_protocol::CODEX_VERSION;
        return Err(format!(
            "no fixtures are recorded for codex {version} yet ({} has no *.ndjson): the protocol crate was generated \
             from codex {version}. Record its traffic with `cargo xtask record` (it runs that codex: install it with \
             `CODEX_VERSION={version} scripts/install-codex.sh`), then review the typed summaries with \
             `cargo insta review`. To run the other tests before recording, set {SKIP_PINNED_TESTS_ENV}=1.",
            dir.display()
        ));
    }
    Ok(files)
}

/// For tests that read the committed fixtures: the files, or `None` (after printing why) when
/// there are none and [`SKIP_PINNED_TESTS_ENV`] is set.
///
/// # Panics
/// When there are no fixtures for `CODEX_VERSION` and the variable is not set: a test over the
/// fixtures must not pass without any.
pub fn fixtures_for_test(test: &str) -> Option<Vec<std::path::PathBuf>> {
    match fixture_files() {
        Ok(files) => Some(files),
        Err(message) if codex_app_protocol::__test_support::skipping_pinned_tests() => {
            eprintln!("SKIPPED {test}: {message}");
            None
        }
        Err(message) => panic!("{test}: {message}"),
    }
}

/// The committed fixture of `scenario` for a test (see [`fixtures_for_test`]); panics when the
/// others are recorded but this one is missing.
pub fn fixture_for_test(test: &str, scenario: &str) -> Option<std::path::PathBuf> {
    let files = fixtures_for_test(test)?;
    let path = fixtures_dir().join(format!("{scenario}.ndjson"));
    assert!(
        files.contains(&path),
        "{test}: no fixture {} (record it with `cargo xtask record {scenario}`)",
        path.display()
    );
    Some(path)
}
