//! The drift check over every committed fixture: recorded traffic of the codex release the
//! protocol crate was generated from must decode without drift.

use crate::support::{fixture_for_test, fixtures_dir, fixtures_for_test};
use codex_app_traffic::drift::{self, Kind};
use codex_app_traffic::transcript::{self, Dir};
use codex_app_traffic::Format;

/// The scenarios `cargo xtask record` records; each must have a committed fixture.
const SCENARIOS: &[&str] = &[
    "lifecycle",
    "streaming",
    "reasoning",
    "command_approval",
    "dynamic_tool",
    "upstream_failure",
    "protocol_errors",
    "interrupt",
];

#[test]
fn every_scenario_has_a_fixture() {
    let Some(files) = fixtures_for_test("every_scenario_has_a_fixture") else { return };
    let names: Vec<String> = files.iter().map(|p| p.file_stem().unwrap().to_string_lossy().into_owned()).collect();
    for scenario in SCENARIOS {
        assert!(
            names.iter().any(|n| n == scenario),
            "no fixture for scenario `{scenario}` in {}",
            fixtures_dir().display()
        );
    }
}

#[test]
fn no_drift_in_any_fixture() {
    let Some(files) = fixtures_for_test("no_drift_in_any_fixture") else { return };
    let mut reports = Vec::new();
    for path in files {
        let report = drift::check_file(&path, Format::Transcript).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(report.lines > 0, "{} is empty", path.display());
        reports.push((path.display().to_string(), report));
    }
    let drift: usize = reports.iter().map(|(_, r)| r.drift_count()).sum();
    assert_eq!(drift, 0, "drift in the committed fixtures:\n{}", drift::render(&reports));
    // Read with the experimental types, nothing of the experimental API is left out.
    let experimental: usize = reports.iter().map(|(_, r)| r.experimental_count()).sum();
    assert_eq!(experimental, 0, "{}", drift::render(&reports));
    // Every line is typed except the four deliberately bad ones.
    let (lines, typed): (usize, usize) = reports.iter().fold((0, 0), |(l, t), (_, r)| (l + r.lines, t + r.typed));
    assert_eq!(lines - typed, 4, "{}", drift::render(&reports));
}

/// The bad lines of `protocol_errors` are reported with the right kind, as expected; the
/// request with `"jsonrpc": "2.0"`, the string ids and the empty params are no drift.
#[test]
fn protocol_errors_bad_lines_are_expected_findings() {
    let Some(path) = fixture_for_test("protocol_errors_bad_lines_are_expected_findings", "protocol_errors") else {
        return;
    };
    let entries = transcript::read_file(&path, Format::Transcript).unwrap();
    let report = drift::check(&entries, Format::Transcript);
    let found: Vec<(Kind, Option<String>, bool)> =
        report.findings.iter().map(|f| (f.kind, f.path.as_ref().map(ToString::to_string), f.expected)).collect();
    assert_eq!(
        found,
        [
            (Kind::UnknownMethod, None, true),
            (Kind::Undecodable, Some("params.threadId".into()), true),
            (Kind::NotJson, None, true),
            // A member of the envelope given twice: codex answered nothing.
            (Kind::NotAMessage, None, true),
        ],
        "{}",
        drift::render(&[("protocol_errors".into(), report.clone())])
    );
    for f in &report.findings {
        assert!(entries.iter().any(|e| e.number == f.number && e.bad), "finding on a line not marked bad: {f}");
    }
    assert!(
        entries.iter().any(|e| !e.bad && e.line.contains(r#""jsonrpc":"2.0""#)),
        "the fixture has a request with jsonrpc"
    );
    assert_eq!(report.bad, 4);
    // What the check says of the line with a member twice is what codex did with it.
    assert!(!entries.iter().any(|e| e.dir == Dir::S2c && e.line.contains(r#""id":"twice""#)), "codex answered it");
}

/// A saved server stdout (`--from server`) checks without drift; its responses cannot be typed
/// without the requests and are counted, not reported.
#[test]
fn one_sided_server_output_of_every_fixture() {
    let Some(files) = fixtures_for_test("one_sided_server_output_of_every_fixture") else { return };
    for path in files {
        let entries = transcript::read_file(&path, Format::Transcript).unwrap();
        let stdout: String = entries.iter().filter(|e| e.dir == Dir::S2c).map(|e| format!("{}\n", e.line)).collect();
        let server = transcript::parse(&stdout, Format::OneSided(codex_app_traffic::Side::Server)).unwrap();
        let report = drift::check(&server, Format::OneSided(codex_app_traffic::Side::Server));
        assert_eq!(
            report.drift_count(),
            0,
            "{}:\n{}",
            path.display(),
            drift::render(&[("stdout".into(), report.clone())])
        );
        let responses =
            server.iter().filter(|e| e.line.contains(r#""result":"#) && !e.line.contains(r#""method":"#)).count();
        assert_eq!(report.untyped_responses, responses, "{}", path.display());
        // Error responses are typed without their requests.
        assert_eq!(report.typed + report.untyped_responses, report.lines, "{}", path.display());
    }
}
