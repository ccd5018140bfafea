//! The drift check fires: fixture lines mutated in memory (a renamed, added, retyped or dropped
//! field, an unknown method, enum value or union tag, ...) are each reported with the right
//! kind, path and line, and nothing else is.

use crate::support::{fixtures_dir, fixtures_for_test};
use codex_app_traffic::drift::{self, Finding, Kind};
use codex_app_traffic::transcript::{self, Dir, Entry};
use codex_app_traffic::Format;

fn load(fixture: &str) -> Vec<Entry> {
    let path = fixtures_dir().join(format!("{fixture}.ndjson"));
    transcript::read_file(&path, Format::Transcript).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `fixture` with the first occurrence of `from` replaced by `to` in the first `dir` line that
/// contains both `marker` and `from`; returns the entries and the mutated line's number.
fn mutate(fixture: &str, dir: Dir, marker: &str, from: &str, to: &str) -> (Vec<Entry>, usize) {
    let mut entries = load(fixture);
    let entry = entries
        .iter_mut()
        .find(|e| e.dir == dir && e.line.contains(marker) && e.line.contains(from))
        .unwrap_or_else(|| panic!("{fixture}: no {dir} line with `{marker}` and `{from}`"));
    entry.line = entry.line.replacen(from, to, 1);
    let number = entry.number;
    (entries, number)
}

/// Checks the mutated transcript and returns its drift findings after asserting they are all
/// on the mutated line (the findings on lines marked bad, which are expected, are left out).
fn findings(entries: &[Entry], line: usize) -> Vec<Finding> {
    let report = drift::check(entries, Format::Transcript);
    let drift: Vec<Finding> = report.drift().cloned().collect();
    for f in &drift {
        assert_eq!(f.number, line, "finding on another line than the mutated one: {f}");
    }
    drift
}

/// Asserts exactly one finding of `kind` at `path` whose detail contains `detail`.
#[track_caller]
fn assert_one(found: &[Finding], kind: Kind, path: Option<&str>, detail: &str) {
    let rendered: Vec<String> = found.iter().map(ToString::to_string).collect();
    assert_eq!(found.len(), 1, "expected one finding, got {rendered:#?}");
    let f = &found[0];
    assert_eq!((f.kind, f.path.as_ref().map(ToString::to_string).as_deref()), (kind, path), "{f}");
    assert!(f.detail.contains(detail), "`{detail}` not in: {f}");
}

#[track_caller]
fn case(fixture: &str, dir: Dir, marker: &str, (from, to): (&str, &str), kind: Kind, path: Option<&str>, detail: &str) {
    let (entries, line) = mutate(fixture, dir, marker, from, to);
    assert_one(&findings(&entries, line), kind, path, detail);
}

const DELTA: &str = r#""method":"item/agentMessage/delta""#;
const ITEM_STARTED: &str = r#""method":"item/started""#;
const TURN_COMPLETED: &str = r#""method":"turn/completed""#;
const THREAD_STARTED: &str = r#""method":"thread/started""#;

#[test]
fn renamed_required_field_does_not_decode() {
    let Some(_) = fixtures_for_test("renamed_required_field_does_not_decode") else { return };
    case(
        "streaming",
        Dir::S2c,
        DELTA,
        (r#""delta":"#, r#""deltaText":"#),
        Kind::Undecodable,
        Some("params"),
        "missing field `delta`",
    );
}

#[test]
fn renamed_optional_field_is_an_unknown_field() {
    let Some(_) = fixtures_for_test("renamed_optional_field_is_an_unknown_field") else { return };
    let path = Some("params.turn.durationMillis");
    case(
        "streaming",
        Dir::S2c,
        TURN_COMPLETED,
        (r#""durationMs":"#, r#""durationMillis":"#),
        Kind::UnknownField,
        path,
        "skipped by the decoder",
    );
}

#[test]
fn added_field_is_an_unknown_field() {
    let Some(_) = fixtures_for_test("added_field_is_an_unknown_field") else { return };
    let (from, to) = (r#""thread":{"id":"#, r#""thread":{"colour":"blue","id":"#);
    case(
        "streaming",
        Dir::S2c,
        THREAD_STARTED,
        (from, to),
        Kind::UnknownField,
        Some("params.thread.colour"),
        "skipped by the decoder",
    );
}

#[test]
fn added_field_inside_a_union_arm() {
    let Some(_) = fixtures_for_test("added_field_inside_a_union_arm") else { return };
    // The tag comes first, as codex writes it: the arm decodes as it reads.
    let (from, to) = (r#"{"type":"agentMessage","#, r#"{"type":"agentMessage","mood":"happy","#);
    case(
        "streaming",
        Dir::S2c,
        ITEM_STARTED,
        (from, to),
        Kind::UnknownField,
        Some("params.item.mood"),
        "skipped by the decoder",
    );
    // The tag comes later: the union buffers the object first; the round trip finds the
    // member all the same, at the same path.
    let (from, to) = (r#"{"type":"agentMessage","#, r#"{"mood":"happy","type":"agentMessage","#);
    case(
        "streaming",
        Dir::S2c,
        ITEM_STARTED,
        (from, to),
        Kind::UnknownField,
        Some("params.item.mood"),
        "member not in the type",
    );
}

#[test]
fn unknown_envelope_member() {
    let Some(_) = fixtures_for_test("unknown_envelope_member") else { return };
    let (from, to) = (r#""emittedAtMs":0}"#, r#""emittedAtMs":0,"priority":1}"#);
    case("streaming", Dir::S2c, DELTA, (from, to), Kind::UnknownField, Some("priority"), "skipped by the decoder");
}

#[test]
fn changed_type_does_not_decode() {
    let Some(_) = fixtures_for_test("changed_type_does_not_decode") else { return };
    case(
        "streaming",
        Dir::S2c,
        DELTA,
        (r#""delta":"Hel""#, r#""delta":42"#),
        Kind::Undecodable,
        Some("params.delta"),
        "invalid type: integer `42`",
    );
    let (from, to) = (r#""data":[]"#, r#""data":{}"#);
    case(
        "lifecycle",
        Dir::S2c,
        r#""readStates""#,
        (from, to),
        Kind::Undecodable,
        Some("result.data"),
        "invalid type: map",
    );
}

#[test]
fn dropped_required_field_does_not_decode() {
    let Some(_) = fixtures_for_test("dropped_required_field_does_not_decode") else { return };
    let from = r#""threadId":"<uuid:2>","#;
    case(
        "streaming",
        Dir::S2c,
        TURN_COMPLETED,
        (from, ""),
        Kind::Undecodable,
        Some("params"),
        "missing field `threadId`",
    );
}

#[test]
fn unknown_methods() {
    let Some(_) = fixtures_for_test("unknown_methods") else { return };
    case(
        "streaming",
        Dir::S2c,
        THREAD_STARTED,
        ("thread/started", "thread/teleported"),
        Kind::UnknownMethod,
        None,
        "server notification",
    );
    case(
        "lifecycle",
        Dir::C2s,
        r#""method":"thread/list""#,
        ("thread/list", "thread/enumerate"),
        Kind::UnknownMethod,
        None,
        "client request",
    );
    case(
        "streaming",
        Dir::C2s,
        r#""method":"initialized""#,
        ("initialized", "ready"),
        Kind::UnknownMethod,
        None,
        "client notification",
    );
    // The server request is unknown; the client's answer to it cannot be typed either, and is
    // not reported a second time.
    let (entries, line) =
        mutate("dynamic_tool", Dir::S2c, r#""method":"item/tool/call""#, "item/tool/call", "item/tool/summon");
    assert_one(&findings(&entries, line), Kind::UnknownMethod, None, "server request");
}

#[test]
fn unknown_enum_value() {
    let Some(_) = fixtures_for_test("unknown_enum_value") else { return };
    let (from, to) = (r#""status":"completed","error""#, r#""status":"paused","error""#);
    case(
        "streaming",
        Dir::S2c,
        TURN_COMPLETED,
        (from, to),
        Kind::UnknownVariant,
        Some("params.turn.status"),
        r#"unknown enum value "paused""#,
    );
}

#[test]
fn unknown_union_tags() {
    let Some(_) = fixtures_for_test("unknown_union_tags") else { return };
    let (from, to) = (r#"{"type":"agentMessage","#, r#"{"type":"hologram","#);
    case(
        "streaming",
        Dir::S2c,
        ITEM_STARTED,
        (from, to),
        Kind::UnknownVariant,
        Some("params.item"),
        r#"unknown union variant `type: "hologram"`"#,
    );
    // Inside a response result, typed through the request's method.
    let (from, to) = (r#""status":{"type":"idle"}"#, r#""status":{"type":"dreaming"}"#);
    let detail = r#"`type: "dreaming"`"#;
    case(
        "streaming",
        Dir::S2c,
        r#""result":{"thread""#,
        (from, to),
        Kind::UnknownVariant,
        Some("result.thread.status"),
        detail,
    );
    // An externally tagged union (a plain string or a single-key object).
    let (from, to) = (r#""approvalPolicy":"untrusted""#, r#""approvalPolicy":"sometimes""#);
    let path = Some("result.approvalPolicy");
    case(
        "command_approval",
        Dir::S2c,
        r#""result":{"thread""#,
        (from, to),
        Kind::UnknownVariant,
        path,
        r#"unknown enum value "sometimes""#,
    );
    // In the client's answer to a server request (typed by `ServerResponse`).
    let (from, to) = (r#""decision":"accept""#, r#""decision":"maybe""#);
    case(
        "command_approval",
        Dir::C2s,
        r#""result""#,
        (from, to),
        Kind::UnknownVariant,
        Some("result.decision"),
        r#""maybe""#,
    );
}

#[test]
fn response_without_request() {
    let Some(_) = fixtures_for_test("response_without_request") else { return };
    let (from, to) = (r#"{"id":3,"result""#, r#"{"id":99,"result""#);
    case("lifecycle", Dir::S2c, "", (from, to), Kind::OrphanResponse, Some("id"), "no earlier c2s request has id 99");
    // A string id is not the integer with the same digits.
    let (from, to) = (r#"{"id":0,"result""#, r#"{"id":"0","result""#);
    case(
        "command_approval",
        Dir::C2s,
        "",
        (from, to),
        Kind::OrphanResponse,
        Some("id"),
        r#"no earlier s2c request has id "0""#,
    );
    let (from, to) = (r#""id":3}"#, r#""id":33}"#);
    case(
        "protocol_errors",
        Dir::S2c,
        "Already initialized",
        (from, to),
        Kind::OrphanResponse,
        Some("id"),
        "an error response",
    );
}

#[test]
fn client_lines_are_checked_too() {
    let Some(_) = fixtures_for_test("client_lines_are_checked_too") else { return };
    let (from, to) = (r#""clientInfo":{"#, r#""clientInfo":{"platform":"toaster","#);
    case(
        "streaming",
        Dir::C2s,
        r#""method":"initialize""#,
        (from, to),
        Kind::UnknownField,
        Some("params.clientInfo.platform"),
        "skipped by the decoder",
    );
    let (from, to) = (r#""text":"Say hello""#, r#""text":["Say hello"]"#);
    case(
        "streaming",
        Dir::C2s,
        r#""method":"turn/start""#,
        (from, to),
        Kind::Undecodable,
        Some("params.input[0].text"),
        "invalid type: sequence",
    );
}

#[test]
fn non_json_from_the_server_is_drift() {
    let Some(_) = fixtures_for_test("non_json_from_the_server_is_drift") else { return };
    let mut entries = load("streaming");
    let number = entries.len() + 1;
    entries.push(Entry { number, dir: Dir::S2c, line: "panicked at src/main.rs".into(), bad: false });
    assert_one(&findings(&entries, number), Kind::NotJson, None, "expected value");
    // A client line that is not JSON, but not marked bad, is drift too.
    entries.last_mut().unwrap().dir = Dir::C2s;
    assert_one(&findings(&entries, number), Kind::NotJson, None, "expected value");
    entries.last_mut().unwrap().bad = true;
    let report = drift::check(&entries, Format::Transcript);
    assert_eq!((report.findings.len(), report.drift_count()), (1, 0), "marked bad: reported but not drift");
}

#[test]
fn jsonrpc_member() {
    let Some(_) = fixtures_for_test("jsonrpc_member") else { return };
    // "2.0" is dropped by design, from either side.
    let (entries, _) = mutate("streaming", Dir::S2c, DELTA, r#"{"method""#, r#"{"jsonrpc":"2.0","method""#);
    assert_eq!(drift::check(&entries, Format::Transcript).findings, []);
    let (entries, line) = mutate("streaming", Dir::S2c, DELTA, r#"{"method""#, r#"{"jsonrpc":"1.0","method""#);
    assert_one(&findings(&entries, line), Kind::NotAMessage, None, "invalid value");
    let (entries, line) = mutate("streaming", Dir::S2c, DELTA, r#"{"method""#, r#"{"id":true,"method""#);
    assert_one(&findings(&entries, line), Kind::NotAMessage, None, "");
    let (entries, line) =
        mutate("streaming", Dir::S2c, DELTA, r#"{"method":"item/agentMessage/delta","params""#, r#"{"params""#);
    assert_one(&findings(&entries, line), Kind::NotAMessage, None, "no `method`, `result` or `error`");
}

#[test]
fn null_policy() {
    let Some(_) = fixtures_for_test("null_policy") else { return };
    // null and absent are the same for an optional member...
    let (entries, _) = mutate("streaming", Dir::S2c, TURN_COMPLETED, r#""error":null,"#, "");
    assert_eq!(drift::check(&entries, Format::Transcript).findings, []);
    // ... and an Option<Option<T>> member keeps an explicit null through the round trip.
    let (from, to) = (r#""params":{}"#, r#""params":{"excludedThreadIds":null,"sectionId":null}"#);
    let (entries, _) = mutate("lifecycle", Dir::C2s, r#""method":"thread/list""#, from, to);
    assert_eq!(drift::check(&entries, Format::Transcript).findings, []);
    // Numbers compare by value.
    let (entries, _) = mutate("streaming", Dir::S2c, DELTA, r#""emittedAtMs":0"#, r#""emittedAtMs":0.0"#);
    let found = drift::check(&entries, Format::Transcript).findings;
    assert!(
        found.iter().all(|f| f.kind == Kind::Undecodable),
        "a float in an integer member does not decode: {found:?}"
    );
}

codex_app_protocol::__test_support::written_for_codex! { "0.171.0",

/// One syntax for every path of a report: a member that does not decode and an unknown member,
/// both under a key that needs quoting (a file path with a slash, a space and a dot), are
/// reported at paths written alike.
#[test]
fn every_kind_of_finding_writes_its_path_alike() {
    let undecodable = r#"{"id":0,"method":"applyPatchApproval","params":{"callId":"c","conversationId":"t","fileChanges":{"src/a b.rs":{"type":"add","content":7}}}}"#;
    let unknown = r#"{"id":1,"method":"applyPatchApproval","params":{"callId":"c","conversationId":"t","fileChanges":{"src/a b.rs":{"type":"add","content":"x","zz":1}}}}"#;
    let entries = [Entry::new(Dir::S2c, undecodable), Entry::new(Dir::S2c, unknown)];
    let report = drift::check(&entries, Format::Transcript);
    let found: Vec<(Kind, Option<String>)> = report.drift().map(|f| (f.kind, f.path.as_ref().map(ToString::to_string))).collect();
    assert_eq!(
        found,
        [
            (Kind::Undecodable, Some(r#"params.fileChanges["src/a b.rs"].content"#.into())),
            (Kind::UnknownField, Some(r#"params.fileChanges["src/a b.rs"].zz"#.into())),
        ],
        "{report:?}"
    );
}

}
