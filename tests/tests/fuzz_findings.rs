//! Regression tests for what fuzzing found in the drift check (issue 10).

use codex_app_traffic::drift::{self, Kind};
use codex_app_traffic::transcript::{Dir, Entry};
use codex_app_traffic::{Format, Side};

fn check(dir: Dir, lines: &[String]) -> drift::Report {
    let entries: Vec<Entry> =
        lines.iter().enumerate().map(|(i, l)| Entry { number: i + 1, ..Entry::new(dir, l.clone()) }).collect();
    drift::check(&entries, Format::Transcript)
}

/// A method name longer than a format width allows is printed, cut, without a panic.
#[test]
fn render_takes_any_method_name() {
    let method = "m".repeat(70_000);
    let report = check(Dir::S2c, &[format!(r#"{{"method":"{method}","params":{{}}}}"#)]);
    assert_eq!(report.findings[0].kind, Kind::UnknownMethod);
    let text = drift::render(&[("file".to_owned(), report)]);
    assert!(text.lines().any(|l| l.contains("mmm...") && l.len() < 200), "the table cuts the name");
}

/// Valid JSON nested deeper than the decoder follows is not called `not-json`.
#[test]
fn deep_json_is_not_called_not_json() {
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let report = check(Dir::S2c, &[format!(r#"{{"method":"thread/archived","params":{deep}}}"#)]);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    assert_eq!(report.findings[0].kind, Kind::Undecodable, "{}", report.findings[0]);
    let report = check(Dir::S2c, &["[[[".to_owned()]);
    assert_eq!(report.findings[0].kind, Kind::NotJson);
}

/// Thousands of unknown union arms in one line are each reported once (the walk keeps a set
/// of the paths it reported, not a list it searches).
#[test]
fn many_unknown_arms_in_one_line() {
    let n = 5_000;
    let items: Vec<String> = (0..n).map(|i| format!(r#"{{"type":"zz{i}","id":"{i}"}}"#)).collect();
    let line = format!(
        r#"{{"method":"turn/completed","params":{{"threadId":"t","turn":{{"id":"u","items":[{}],"status":"completed"}}}}}}"#,
        items.join(",")
    );
    let report = check(Dir::S2c, &[line]);
    let unknown = report.findings.iter().filter(|f| f.kind == Kind::UnknownVariant).count();
    assert_eq!(unknown, n, "{:?}", report.findings.iter().take(3).collect::<Vec<_>>());
}

/// One side's NDJSON goes through the same checks.
#[test]
fn one_sided_files_too() {
    let entries = vec![Entry { number: 1, ..Entry::new(Dir::C2s, r#"{"id":null,"method":"thread/start","params":{}}"#) }];
    let report = drift::check(&entries, Format::OneSided(Side::Client));
    assert_eq!(report.findings[0].kind, Kind::NotAMessage, "{}", report.findings[0]);
}
