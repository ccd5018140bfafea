//! Regression tests for issue 21 (held-out fuzz and attack run): each fails on the code before
//! its fix.
//!
//! - Repeated tags next to deep nesting: decoded in bounded stack (a 256 KiB thread) and linear
//!   time (the duplicate-member fallback used to rewrite the text recursively, re-parsing each
//!   level: a stack overflow at 10,000 levels on a 2 MiB stack, quadratic time).
//! - Duplicated keys keep the last value in externally tagged unions and `error` objects.
//! - Error paths in multi-line JSON and in envelope members.
//!
//! Written against the types of the vendored codex release (see `written_for_codex!`).

codex_app_protocol::__test_support::written_for_codex! { "0.171.0",

use std::time::{Duration, Instant};

use codex_app_protocol::framing::DEFAULT_MAX_LINE_LEN;
use codex_app_protocol::roundtrip::reencode;
use codex_app_protocol::*;
use serde_json::{json, Value};

/// A stack far below the 2 MiB default of Rust threads and tokio workers.
const SMALL_STACK: usize = 256 * 1024;

/// Runs `f` on a thread with a 256 KiB stack (a stack overflow aborts the test binary).
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(SMALL_STACK).spawn(f).unwrap().join().unwrap()
}

/// `depth` nested arrays around `0`.
fn deep(depth: usize) -> String {
    format!("{}0{}", "[".repeat(depth), "]".repeat(depth))
}

/// `depth` nested objects `{"a":...}` around `0`.
fn deep_objects(depth: usize) -> String {
    format!("{}0{}", r#"{"a":"#.repeat(depth), "}".repeat(depth))
}

/// Lines with a union tag (or another member) given twice next to an unknown member nested
/// `depth` levels deep, each with what it must decode to (`None`: an error).
fn attack_lines(depth: usize) -> Vec<(&'static str, String)> {
    let d = deep(depth);
    let o = deep_objects(depth);
    vec![
        // The report's server line: `status` repeats `type`.
        ("s2c", format!(r#"{{"method":"thread/status/changed","params":{{"threadId":"t","status":{{"type":"idle","type":"active","activeFlags":[],"zz":{d}}}}}}}"#)),
        ("s2c", format!(r#"{{"method":"thread/status/changed","params":{{"threadId":"t","status":{{"type":"idle","zz":{o},"type":"active","activeFlags":[]}}}}}}"#)),
        // The tag after the deep member (the buffered path), and given twice there.
        ("s2c", format!(r#"{{"method":"thread/status/changed","params":{{"threadId":"t","status":{{"zz":{d},"type":"idle","type":"active","activeFlags":[]}}}}}}"#)),
        // The deep member first, params after the method, the envelope in another order.
        ("s2c", format!(r#"{{"params":{{"zz":{d},"threadId":"t","status":{{"type":"idle","type":"active","activeFlags":[]}}}},"method":"thread/status/changed"}}"#)),
        // Every object of the deep member gives its key twice.
        ("s2c", format!(r#"{{"method":"thread/status/changed","params":{{"threadId":"t","status":{{"type":"idle","type":"active","activeFlags":[],"zz":{}}}}}}}"#, r#"{"a":0,"a":"#.repeat(depth) + "0" + &"}".repeat(depth))),
        // An error object with its members given twice.
        ("s2c", format!(r#"{{"id":1,"error":{{"code":1,"message":"a","code":2,"zz":{d},"message":"b"}}}}"#)),
        // The report's client line: `turn/start` input repeats `type`.
        ("c2s", format!(r#"{{"id":1,"method":"turn/start","params":{{"threadId":"t","input":[{{"type":"image","type":"text","text":"x","zz":{d}}}]}}}}"#)),
        ("c2s", format!(r#"{{"id":1,"method":"turn/start","params":{{"threadId":"t","input":[{{"type":"image","zz":{o},"type":"text","text":"x"}}],"threadId":"u"}}}}"#)),
    ]
}

fn decode(dir: &str, line: &str) -> Result<Value, String> {
    match dir {
        "s2c" => ServerMessage::from_line(line).map(|m| serde_json::from_str(&m.to_line()).unwrap()).map_err(|e| e.to_string()),
        _ => ClientMessage::from_line(line).map(|m| serde_json::from_str(&m.to_line()).unwrap()).map_err(|e| e.to_string()),
    }
}

/// Done means 1: no input overflows the stack. Every line decodes on a 256 KiB stack, at
/// depths up to 40,000 (a recursive decode overflows it a few thousand levels down), with the last value of each
/// repeated member.
#[test]
fn repeated_tags_next_to_deep_nesting_decode_on_a_small_stack() {
    on_small_stack(|| {
        for depth in [100, 129, 10_000, 40_000] {
            for (dir, line) in attack_lines(depth) {
                assert!(line.len() < DEFAULT_MAX_LINE_LEN);
                if line.contains(r#""error""#) {
                    // The deep member is kept (an error object keeps its unknown members, as
                    // `Value`s): deeper than 128 levels it is an error, not an abort.
                    match decode(dir, &line) {
                        Ok(value) => assert_eq!((&value["error"]["code"], &value["error"]["message"]), (&json!(2), &json!("b"))),
                        Err(e) => assert!(depth > 128 && e.contains("recursion limit"), "depth {depth}: {e}"),
                    }
                    continue;
                }
                let value = decode(dir, &line).unwrap_or_else(|e| panic!("depth {depth}: {e}"));
                let params = &value["params"];
                if let Some(status) = params.get("status") {
                    assert_eq!(status, &json!({"type": "active", "activeFlags": []}), "depth {depth}");
                } else if let Some(input) = params.get("input") {
                    assert_eq!(input, &json!([{"type": "text", "text": "x"}]), "depth {depth}");
                } else {
                    panic!("{value}");
                }
            }
        }
    });
}

/// Done means 1: the duplicate-member fallback is linear: a line 100,000 levels deep decodes
/// in far less than the quadratic fallback it replaced took at a sixth of that depth (its
/// times: `docs/performance.md`). The bound on the wall clock is generous
/// (a debug build on a loaded machine) and tells linear from quadratic without comparing two
/// timings, which other work on the machine skews; the times by depth are printed
/// (`--nocapture`).
#[test]
fn repeated_tags_next_to_deep_nesting_decode_in_linear_time() {
    let time = |depth: usize| {
        let lines = attack_lines(depth);
        let start = Instant::now();
        for (dir, line) in &lines {
            // The error object's deep member is an error (a `Value` deeper than 128 levels).
            assert!(decode(dir, line).is_ok() || line.contains(r#""error""#));
        }
        start.elapsed()
    };
    let times: Vec<(usize, Duration)> = [1_000, 16_000, 100_000].into_iter().map(|depth| (depth, time(depth))).collect();
    // `--nocapture` shows them.
    println!("decode time of the attack lines by depth: {times:?}");
    let large = times[2].1;
    assert!(large < Duration::from_secs(30), "100,000 levels took {large:?}: is the fallback quadratic again?");
}

/// Done means 2: an externally tagged union whose key is given twice keeps its last value
/// (it failed with "invalid length 2, expected an object with a single key").
#[test]
fn external_union_keys_given_twice_keep_the_last_value() {
    let text = r#"{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["a"]},"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["b"]}}"#;
    let decision: CommandExecutionApprovalDecision = serde_json::from_str(text).unwrap();
    assert_eq!(reencode(&decision).unwrap(), json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["b"]}}));
    // An unknown key given twice, too; two different keys are no externally tagged value.
    let unknown: CommandExecutionApprovalDecision = serde_json::from_str(r#"{"later":1,"later":2}"#).unwrap();
    assert_eq!(reencode(&unknown).unwrap(), json!({"later": 2}));
    assert!(serde_json::from_str::<CommandExecutionApprovalDecision>(r#"{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":[]},"later":1}"#).is_err());
}

/// Done means 2: the members of an `error` object given twice keep their last value (it
/// failed with "duplicate field `code`").
#[test]
fn error_object_members_given_twice_keep_the_last_value() {
    let line = r#"{"id":1,"error":{"code":-32600,"message":"a","data":1,"x":1,"code":-32601,"message":"b","data":{"k":2},"x":2}}"#;
    let m = ServerMessage::from_line(line).unwrap();
    let Message::Error(e) = &m else { panic!("{m:?}") };
    assert_eq!((e.error.code, e.error.message.as_str()), (-32601, "b"));
    assert_eq!(e.error.data, Some(json!({"k": 2})));
    assert_eq!(e.error.extra.get("x"), Some(&json!(2)));
    // The two-step path (error before id) gives the same.
    let two = ServerMessage::from_line(r#"{"error":{"code":1,"code":2,"message":"m"},"id":1}"#).unwrap();
    assert!(matches!(two, Message::Error(ErrorResponse { error: ErrorObject { code: 2, .. }, .. })), "{two:?}");
    // Missing members still say which.
    let err = ServerMessage::from_line(r#"{"id":1,"error":{"message":"m"}}"#).unwrap_err();
    assert!(err.to_string().contains("missing field `code`"), "{err}");
}

/// Issue 34: a repeated union tag changes nothing but that tag. An earlier duplicate of
/// another member is judged alike with and without the repeated tag elsewhere in the params
/// (the fallback rewrote the whole params, so its first, mistyped value was no longer read),
/// and an error after the tag names the position in the text as sent, not in a rewrite.
#[test]
fn a_repeated_tag_changes_nothing_else() {
    let line = |input: &str, rest: &str| format!(r#"{{"id":1,"method":"turn/start","params":{{"input":{input},{rest}}}}}"#);
    let once = r#"[{"type":"text","text":"x"}]"#;
    let twice = r#"[{"type":"image","type":"text","text":"x"}]"#;
    // The same duplicate `threadId`, mistyped first: rejected either way, with the same error.
    let mistyped = r#""threadId":5,"threadId":"t""#;
    let errors: Vec<String> = [once, twice]
        .iter()
        .map(|input| ClientMessage::from_line(&line(input, mistyped)).unwrap_err().path().unwrap().to_string())
        .collect();
    assert_eq!(errors, ["params.threadId", "params.threadId"]);
    // Well typed: accepted either way, the last values kept.
    for input in [once, twice] {
        let m = ClientMessage::from_line(&line(input, r#""threadId":"s","threadId":"t""#)).unwrap();
        let back: Value = serde_json::from_str(&m.to_line()).unwrap();
        assert_eq!((&back["params"]["threadId"], &back["params"]["input"][0]["type"]), (&json!("t"), &json!("text")));
    }
    // An error after the repeated tag: its column is that of the line's params as sent.
    let params = r#"{"input":[{"type":"image","type":"text","text":7}],"threadId":"t"}"#;
    let err = ClientMessage::from_line(&format!(r#"{{"id":1,"method":"turn/start","params":{params}}}"#)).unwrap_err();
    let jsonrpc::DecodeErrorKind::Member { error, .. } = &err.kind else { panic!("{err}") };
    assert_eq!(error.path.to_string(), "input[0].text", "{err}");
    let seven = params.find(":7").unwrap() + 2;
    assert_eq!((error.source.line(), error.source.column()), (1, seven), "{err}");
}

/// Done means 3: error paths count lines, not only columns: a newline inside `params` (and
/// pretty-printed JSON through serde) gave `params.zz[2]` / `params.zz[1]`.
#[test]
fn error_paths_in_multi_line_json() {
    let line = "{\"method\":\"thread/archived\",\"params\":{\"zz\":[1,\n2,\n3],\n\"threadId\":7}}";
    let err = ServerMessage::from_line(line).unwrap_err();
    assert_eq!(err.path().map(|p| p.to_string()).as_deref(), Some("params.threadId"), "{err}");

    let pretty = serde_json::to_string_pretty(&json!({"method": "thread/archived", "params": {"zz": [1, 2, 3], "threadId": 7}})).unwrap();
    let err = serde_json::from_str::<ServerNotification>(&pretty).unwrap_err();
    assert!(err.to_string().contains("`params.threadId`"), "{err}");

    // Inside a buffered union (the tag after other members) too.
    let pretty = "{\"method\":\"thread/status/changed\",\"params\":{\"threadId\":\"t\",\"status\":{\n\"activeFlags\":[\n\"x\",\n7\n],\n\"type\":\"active\"}}}";
    let err = ServerMessage::from_line(pretty).unwrap_err();
    assert_eq!(err.path().map(|p| p.to_string()).as_deref(), Some("params.status.activeFlags[1]"), "{err}");
}

/// Done means 3: an error in an envelope member is reported at that member, not inside
/// `params`.
#[test]
fn error_paths_of_envelope_members() {
    let line = r#"{"method":"thread/archived","params":{"threadId":"t"},"emittedAtMs":"soon"}"#;
    let err = ServerMessage::from_line(line).unwrap_err();
    assert_eq!(err.path().map(|p| p.to_string()).as_deref(), Some("emittedAtMs"), "{err}");
    assert!(err.to_string().contains("`emittedAtMs` does not match its type"), "{err}");
    // Of an unknown method without params, and in the two-step order.
    for line in [r#"{"method":"some/later","emittedAtMs":[1]}"#, r#"{"emittedAtMs":true,"params":{"threadId":"t"},"method":"thread/archived"}"#] {
        let err = ServerMessage::from_line(line).unwrap_err();
        assert_eq!(err.path().map(|p| p.to_string()).as_deref(), Some("emittedAtMs"), "{line}: {err}");
    }
}

}
