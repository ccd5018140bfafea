//! The committed fixtures (`traffic/fixtures/<CODEX_VERSION>/*.ndjson`, in the workspace, not in
//! the package) for the tests that read them.

use std::path::{Path, PathBuf};

use codex_app_protocol::__test_support::{skipping_pinned_tests, SKIP_PINNED_TESTS_ENV};

/// The folder of the committed fixtures for the codex version the protocol crate was
/// generated from: `traffic/fixtures/<CODEX_VERSION>`.
pub(crate) fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(codex_app_protocol::CODEX_VERSION)
}

/// The committed fixtures (`*.ndjson` in [`fixtures_dir`], sorted), or a message that says
/// none are recorded for this codex version and how to record them.
fn fixture_files() -> Result<Vec<PathBuf>, String> {
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
pub(crate) fn fixtures_for_test(test: &str) -> Option<Vec<PathBuf>> {
    match fixture_files() {
        Ok(files) => Some(files),
        Err(message) if skipping_pinned_tests() => {
            eprintln!("SKIPPED {test}: {message}");
            None
        }
        Err(message) => panic!("{test}: {message}"),
    }
}

/// The committed fixture of `scenario` for a test (see [`fixtures_for_test`]); panics when the
/// others are recorded but this one is missing.
pub(crate) fn fixture_for_test(test: &str, scenario: &str) -> Option<PathBuf> {
    let files = fixtures_for_test(test)?;
    let path = fixtures_dir().join(format!("{scenario}.ndjson"));
    assert!(
        files.contains(&path),
        "{test}: no fixture {} (record it with `cargo xtask record {scenario}`)",
        path.display()
    );
    Some(path)
}
