//! No decoded value is leaked when a decode fails partway, at any depth: each line is cut
//! short at one byte after another and decoded, so the reader fails wherever the cut falls (in
//! a member, a list's item, a map's value, an option's value, a union's arm, after a tag that
//! came last), with the values built so far dropped on the way out. Counted by the binary's
//! allocator (`counting.rs`), per thread.
//!
//! Written against the types of the vendored codex release (see `written_for_codex!`).

codex_app_protocol::__test_support::written_for_codex! { "0.171.0",

use std::collections::BTreeMap;

use codex_app_protocol::{AgentMessageDeltaNotification, TypedClientMessage, TypedServerMessage};
use serde_json::Value;

use super::counting;

/// Where a cut decode left memory allocated after it returned its error.
#[derive(Debug)]
#[allow(dead_code)] // Read through `Debug`.
struct Leak {
    cut: usize,
    bytes: isize,
    blocks: isize,
}

/// What cutting a line short left allocated: how many cuts failed, and where memory was left.
struct Failed {
    cuts: usize,
    leaks: Vec<Leak>,
}

/// At most this many cuts per line (evenly spread): the longest lines are cut in as many places
/// as the others, not at each of their bytes.
const MAX_CUTS: usize = 600;

/// `line`, decoded whole (it must decode), then cut short at each byte (or at `MAX_CUTS` of
/// them) and decoded again: each cut must fail and leave nothing allocated.
fn failing_at_each_cut(line: &str, decode: impl Fn(&str) -> bool) -> Failed {
    assert!(decode(line), "{line}: does not decode whole");
    let step = line.len().div_ceil(MAX_CUTS).max(1);
    let mut failed = Failed { cuts: 0, leaks: Vec::new() };
    for cut in (1..line.len()).step_by(step).filter(|cut| line.is_char_boundary(*cut)) {
        let before = counting::in_use();
        let decoded = decode(&line[..cut]);
        let after = counting::in_use();
        assert!(!decoded, "{line}: decoded when cut at byte {cut}");
        failed.cuts += 1;
        if after != before {
            failed.leaks.push(Leak { cut, bytes: after.0 - before.0, blocks: after.1 - before.1 });
        }
    }
    failed
}

fn server(line: &str) -> bool {
    TypedServerMessage::from_line_with(line, |_| Some("thread/start")).is_ok()
}

#[test]
fn a_decode_failing_partway_leaks_nothing() {
    let delta = r#"{"delta":"some text of the delta","itemId":"item-1","threadId":"thread-1","turnId":"turn-1"}"#;
    // The decode itself allocates (the struct's strings), and gives it all back.
    let before = counting::in_use();
    let decoded = serde_json::from_str::<AgentMessageDeltaNotification>(delta).unwrap();
    assert!(counting::in_use().0 > before.0, "the decoded struct holds heap data");
    drop(decoded);
    assert_eq!(counting::in_use(), before);

    let item = |item: &str| format!(r#"{{"method":"item/completed","params":{{"threadId":"t","turnId":"u","item":{item}}}}}"#);
    let cases = [
        ("struct", failing_at_each_cut(&format!(r#"{{"method":"item/agentMessage/delta","params":{delta}}}"#), server)),
        (
            "tagged union, tag first",
            failing_at_each_cut(&item(r#"{"type":"agentMessage","id":"item-1","text":"some text"}"#), server),
        ),
        (
            "tagged union, tag last (read twice)",
            failing_at_each_cut(&item(r#"{"id":"item-1","text":"some text","type":"agentMessage"}"#), server),
        ),
        (
            // A map of tagged unions (tag first and last), a member given twice, a `null`.
            "map of unions",
            failing_at_each_cut(
                r#"{"id":3,"method":"applyPatchApproval","params":{"callId":"call-1","conversationId":"thread-1","fileChanges":{"src/a.rs":{"type":"add","content":"fn a() {}"},"src/b.rs":{"content":"fn b() {}","type":"add"}},"reason":"first","reason":"second","grantRoot":null}}"#,
                server,
            ),
        ),
    ];
    for (what, Failed { cuts, leaks }) in cases {
        assert!(cuts > 40, "{what}: only {cuts} cuts");
        assert!(leaks.is_empty(), "{what}: left allocated after the error: {leaks:?}");
    }
}

/// Every line of the recorded traffic of the vendored release that decodes, its params and
/// results typed by their methods (a response's by the method of the request it answers), cut
/// short at each byte.
#[test]
fn no_value_of_the_recorded_traffic_leaks_when_its_decode_fails_partway() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../traffic/fixtures/0.171.0");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let (mut checked, mut cuts, mut leaks) = (0, 0, Vec::new());
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let mut methods: BTreeMap<(bool, String), String> = BTreeMap::new();
        for (n, record) in std::fs::read_to_string(&file).unwrap().lines().enumerate() {
            let record: Value = serde_json::from_str(record).unwrap();
            let from_client = record["dir"] == "c2s";
            let line = record["line"].as_str().unwrap();
            // A line that is no JSON (the traffic of protocol errors) holds nothing to decode.
            let Ok(message) = serde_json::from_str::<Value>(line) else { continue };
            let id = message.get("id").map(Value::to_string);
            let request_method = match (message.get("method").and_then(Value::as_str), &id) {
                (Some(method), Some(id)) => {
                    methods.insert((from_client, id.clone()), method.to_owned());
                    None
                }
                (None, Some(id)) => methods.get(&(!from_client, id.clone())).cloned(),
                _ => None,
            };
            let method_of = |_: &codex_app_protocol::RequestId| request_method.clone();
            let decode = |text: &str| match from_client {
                true => TypedClientMessage::from_line_with(text, method_of).is_ok(),
                false => TypedServerMessage::from_line_with(text, method_of).is_ok(),
            };
            if !decode(line) {
                continue;
            }
            let failed = failing_at_each_cut(line, decode);
            checked += 1;
            cuts += failed.cuts;
            leaks.extend(failed.leaks.into_iter().map(|leak| (format!("{name}:{}", n + 1), leak)));
        }
    }
    assert!(checked > 100 && cuts > 20000, "only {checked} lines and {cuts} cuts checked");
    assert!(leaks.is_empty(), "left allocated after the error (line, leak): {leaks:?}");
}

}
