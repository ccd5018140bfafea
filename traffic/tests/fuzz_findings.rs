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

/// Issue 21: a line deeper than a `Value` follows that the crate decodes (a 129-deep unknown
/// member) is labelled by what the crate does (the member is unknown, and dropped), not
/// `undecodable`; deep unknown params are an unknown method.
#[test]
fn deep_lines_the_crate_decodes_get_its_labels() {
    for depth in [129, 100_000] {
        let deep = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let report =
            check(Dir::S2c, &[format!(r#"{{"method":"thread/archived","params":{{"threadId":"t","zz":{deep}}}}}"#)]);
        assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
        assert_eq!(report.findings[0].kind, Kind::UnknownField, "{}", report.findings[0]);
        assert_eq!(
            report.findings[0].path.as_ref().map(ToString::to_string).as_deref(),
            Some("params.zz"),
            "{}",
            report.findings[0]
        );
        let report = check(Dir::S2c, &[format!(r#"{{"method":"some/later","params":{deep}}}"#)]);
        assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
        assert_eq!(report.findings[0].kind, Kind::UnknownMethod, "{}", report.findings[0]);
    }
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
    let entries =
        vec![Entry { number: 1, ..Entry::new(Dir::C2s, r#"{"id":1.5,"method":"thread/start","params":{}}"#) }];
    let report = drift::check(&entries, Format::OneSided(Side::Client));
    assert_eq!(report.findings[0].kind, Kind::NotAMessage, "{}", report.findings[0]);
}

/// A method with `"id": null` from a client is a notification, as codex reads it (0.100.0,
/// 0.169.0 and 0.171.0 log `{"id":null,"method":"initialized"}` as the notification
/// `initialized`; `thread/list` so sent is not answered); from a server, it is no message.
#[test]
fn a_method_with_a_null_id() {
    let initialized = check(Dir::C2s, &[r#"{"id":null,"method":"initialized"}"#.to_owned()]);
    assert_eq!((initialized.typed, initialized.findings.len()), (1, 0), "{:?}", initialized.findings);
    let list = check(Dir::C2s, &[r#"{"id":null,"method":"thread/list","params":{}}"#.to_owned()]);
    assert!(matches!(&list.findings[..], [f] if f.kind == Kind::UnknownMethod), "{:?}", list.findings);
    let server = check(Dir::S2c, &[r#"{"id":null,"method":"item/tool/call","params":{}}"#.to_owned()]);
    assert!(matches!(&server.findings[..], [f] if f.kind == Kind::NotAMessage), "{:?}", server.findings);
}

/// Finding 2: an integer outside 64 bits in a `Value` member comes back as a float; the drift
/// check compares numbers by their text and reports it where it is.
#[test]
fn big_integers_in_value_members_are_drift() {
    let line =
        r#"{"id":1,"method":"thread/start","params":{"config":{"n":123456789012345678901234567890}}}"#.to_owned();
    let report = check(Dir::C2s, &[line]);
    let found: Vec<_> = report.drift().map(|f| (f.kind, f.path.as_ref().map(ToString::to_string))).collect();
    assert_eq!(found, [(Kind::RoundTrip, Some("params.config.n".to_owned()))], "{:?}", report.findings);
    // Integers that fit, and big numbers inside strings, are not.
    let line = r#"{"id":1,"method":"thread/start","params":{"config":{"n":18446744073709551615,"s":"123456789012345678901234567890"}}}"#;
    assert_eq!(check(Dir::C2s, &[line.to_owned()]).drift_count(), 0);
}

/// A request's W3C trace context (the envelope's `trace`) is typed: no drift, in either
/// direction.
#[test]
fn a_requests_trace_is_no_drift() {
    let trace =
        r#""trace":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"a=b"}"#;
    let report = check(Dir::C2s, &[format!(r#"{{"id":1,"method":"thread/list","params":{{}},{trace}}}"#)]);
    assert_eq!(report.findings, [], "{:?}", report.findings);
    let line = format!(
        r#"{{"id":0,"method":"item/commandExecution/requestApproval","params":{{"threadId":"t","turnId":"u","itemId":"i"}},{trace}}}"#
    );
    assert_eq!(check(Dir::S2c, &[line]).findings, []);
}
