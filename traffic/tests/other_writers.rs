//! Lines written by another JSON writer than codex's: every line of every recorded release's
//! fixtures, both directions, written again with its members in another order, whitespace
//! between its tokens and its strings (keys, method names and values) escaped where JSON
//! allows it, is the same message. The drift check finds on it exactly what it finds on the
//! line as codex wrote it, each finding with the same kind, method and path: for the current
//! release, nothing but the lines marked bad.

use std::path::PathBuf;

use codex_app_traffic::drift::{self, Finding};
use codex_app_traffic::transcript;
use codex_app_traffic::Format;

use crate::rewrite::{rewrite_all, Choices};
use crate::support::{fixtures_dir, fixtures_for_test};

/// What the drift check says of a line, but the detail's text (which names columns).
fn finding(f: &Finding) -> String {
    format!(
        "{} {} {:?} {:?} {} expected={}",
        f.number,
        f.dir,
        f.kind,
        f.method,
        f.path.as_ref().map(ToString::to_string).unwrap_or_default(),
        f.expected
    )
}

#[test]
fn every_fixture_line_written_by_another_writer_is_the_same_message() {
    let Some(current) = fixtures_for_test("every_fixture_line_written_by_another_writer_is_the_same_message") else {
        return;
    };
    let root = fixtures_dir().parent().unwrap().to_path_buf();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|dir| dir.is_dir())
        .flat_map(|dir| std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok().map(|e| e.path())))
        .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
        .collect();
    paths.sort();
    let mut choices = Choices(0x9E37_79B9_7F4A_7C15);
    let mut lines = 0;
    for path in &paths {
        let entries = transcript::read_file(path, Format::Transcript).unwrap();
        let mut others = entries.clone();
        lines += rewrite_all(others.iter_mut().map(|e| &mut e.line), &mut choices);
        let as_codex_wrote = drift::check(&entries, Format::Transcript);
        let as_others_write = drift::check(&others, Format::Transcript);
        let found = |report: &drift::Report| report.findings.iter().map(finding).collect::<Vec<_>>();
        assert_eq!(found(&as_others_write), found(&as_codex_wrote), "{}", path.display());
        assert_eq!(
            (as_others_write.typed, &as_others_write.methods),
            (as_codex_wrote.typed, &as_codex_wrote.methods),
            "{}: other lines typed",
            path.display()
        );
        if current.contains(path) {
            let drift: Vec<String> = as_others_write.drift().map(ToString::to_string).collect();
            assert!(drift.is_empty(), "{}: {drift:#?}", path.display());
        }
    }
    assert!(paths.len() > current.len(), "no older release's fixtures");
    assert!(lines > 1000, "only {lines} lines rewritten");
}
