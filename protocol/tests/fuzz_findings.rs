//! Regression tests for what fuzzing found (issue 10): each fails on the code before its fix.
//!
//! Written against the types of the vendored codex release (see `written_for_codex!`).

codex_app_protocol::__test_support::written_for_codex! { "0.171.0",

use codex_app_protocol::jsonrpc::DecodeErrorKind;
use codex_app_protocol::roundtrip::reencode;
use codex_app_protocol::*;
use serde_json::{json, Value};

fn reencoded<T: serde::de::DeserializeOwned + serde::Serialize>(v: Value) -> Value {
    let t: T = serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{v}: {e}"));
    reencode(&t).unwrap()
}

/// Finding 1: an untagged union picks the arm its schema picks (consts, required members,
/// closed objects), not the first arm whose decoder happens to accept the value.
#[test]
fn untagged_unions_pick_the_arm_the_schema_picks() {
    let number = json!({"type": "number", "minimum": 1.0, "maximum": 5.0});
    let s: McpElicitationPrimitiveSchema = serde_json::from_value(number.clone()).unwrap();
    assert!(matches!(s, McpElicitationPrimitiveSchema::Number(_)), "{s:?}");
    assert_eq!(reencode(&s).unwrap(), number);

    let legacy = json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]});
    assert_eq!(reencoded::<McpElicitationPrimitiveSchema>(legacy.clone()), legacy);
    let s: McpElicitationPrimitiveSchema = serde_json::from_value(legacy).unwrap();
    assert!(
        matches!(s, McpElicitationPrimitiveSchema::Enum(McpElicitationEnumSchema::LegacyTitled(_))),
        "{s:?}"
    );

    for v in [
        json!({"type": "string", "minLength": 1, "format": "email"}),
        json!({"type": "boolean", "default": true}),
        json!({"type": "string", "enum": ["x"]}),
        json!({"type": "string", "oneOf": [{"const": "x", "title": "X"}]}),
        json!({"type": "array", "items": {"type": "string", "enum": ["x"]}, "minItems": 1}),
        json!({"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}}),
    ] {
        assert_eq!(reencoded::<McpElicitationPrimitiveSchema>(v.clone()), v);
    }

    // The whole line of the report.
    let line = r#"{"id":0,"method":"mcpServer/elicitation/request","params":{"mode":"form","threadId":"t","serverName":"s","message":"m","requestedSchema":{"type":"object","properties":{"n":{"type":"number","minimum":1,"maximum":5}}}}}"#;
    let m = ServerMessage::from_line(line).unwrap();
    let back: Value = serde_json::from_str(&m.to_line()).unwrap();
    assert_eq!(back["params"]["requestedSchema"]["properties"]["n"], json!({"type": "number", "minimum": 1.0, "maximum": 5.0}));

    // A type a later release adds still decodes (into the arm whose members fit, its `type`
    // kept as `Unrecognized`) and round-trips.
    let later = json!({"type": "date", "title": "When"});
    assert_eq!(reencoded::<McpElicitationPrimitiveSchema>(later.clone()), later);
}

/// Finding 3: the members of an error object the JSON-RPC spec does not define are kept.
#[test]
fn error_objects_keep_unknown_members() {
    let line = r#"{"id":1,"error":{"code":-32600,"message":"m","retryAfterMs":10}}"#;
    let m = ServerMessage::from_line(line).unwrap();
    let back: Value = serde_json::from_str(&m.to_line()).unwrap();
    assert_eq!(back["error"]["retryAfterMs"], json!(10));
}

/// Finding 4: a member given twice keeps its last value everywhere, as `serde_json::Value`.
#[test]
fn duplicate_members_keep_the_last_value() {
    // A struct member.
    let p: ThreadArchivedNotification = serde_json::from_str(r#"{"threadId":"a","threadId":"b"}"#).unwrap();
    assert_eq!(p.thread_id, "b");
    // A member whose `null` is not its absence (`Option<Option<T>>`), both ways round.
    let p: ThreadListParams = serde_json::from_str(r#"{"sectionId":"a","sectionId":null}"#).unwrap();
    assert_eq!(p.section_id, Some(None));
    let p: ThreadListParams = serde_json::from_str(r#"{"sectionId":null,"sectionId":"a"}"#).unwrap();
    assert_eq!(p.section_id, Some(Some("a".to_owned())));
    // An envelope member.
    let line = r#"{"method":"thread/archived","params":{"threadId":"t"},"emittedAtMs":1,"emittedAtMs":2}"#;
    let Message::Notification(n) = ServerMessage::from_line(line).unwrap() else { panic!() };
    let back: Value = serde_json::from_str(&ServerMessage::Notification(n).to_line()).unwrap();
    assert_eq!(back["emittedAtMs"], json!(2));
    // A union tag, first or not, and a later tag is type-checked.
    for (input, kind) in [
        (r#"[{"type":"text","text":"hi","type":"image","url":"u"}]"#, "image"),
        (r#"[{"text":"hi","type":"text","url":"u","type":"image"}]"#, "image"),
        (r#"[{"type":"text","text":"hi","type":"text"}]"#, "text"),
    ] {
        let line = format!(r#"{{"id":1,"method":"turn/start","params":{{"threadId":"t","input":{input}}}}}"#);
        let m = ClientMessage::from_line(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
        let back: Value = serde_json::from_str(&m.to_line()).unwrap();
        assert_eq!(back["params"]["input"][0]["type"], json!(kind), "{line}");
    }
    let line = r#"{"id":1,"method":"turn/start","params":{"threadId":"t","input":[{"type":"text","text":"hi","type":5}]}}"#;
    assert!(ClientMessage::from_line(line).is_err(), "a later tag of the wrong type is an error");
}

/// Finding 5: a request with a `null` id is no notification, and a decode error carries the
/// id and the method.
#[test]
fn null_ids_and_ids_in_errors() {
    let line = r#"{"id":null,"method":"item/tool/call","params":{"threadId":"t","turnId":"u","callId":"c","tool":"x","arguments":{}}}"#;
    let e = ServerMessage::from_line(line).unwrap_err();
    assert!(matches!(e.kind, DecodeErrorKind::NotAMessage(_)), "{e}");
    assert_eq!(e.method.as_deref(), Some("item/tool/call"));
    assert!(TypedServerMessage::from_line(r#"{"method":"item/tool/call","id":null}"#).is_err());

    let e = ServerMessage::from_line(r#"{"id":"r-1","method":"item/tool/call","params":{"threadId":5}}"#).unwrap_err();
    assert_eq!((e.id, e.method.as_deref()), (Some(RequestId::String("r-1".into())), Some("item/tool/call")));
    let e = TypedServerMessage::from_line_with(r#"{"id":7,"result":{"thread":5}}"#, |_| Some("thread/start")).unwrap_err();
    assert_eq!((e.id, e.method.as_deref()), (Some(RequestId::Integer(7)), Some("thread/start")));
    // An error response may have a `null` id.
    assert!(matches!(ServerMessage::from_line(r#"{"id":null,"error":{"code":1,"message":"m"}}"#), Ok(Message::Error(_))));
}

/// Finding 6: errors inside a union arm decoded from buffered text have their whole path; a
/// path that starts with an index has no dot; a framing error names its line once.
#[test]
fn error_paths_inside_buffered_unions() {
    let path = |input: &str| {
        let line = format!(r#"{{"id":1,"method":"turn/start","params":{{"threadId":"t","input":{input}}}}}"#);
        ClientMessage::from_line(&line).unwrap_err().path().map(|p| p.to_string())
    };
    assert_eq!(path(r#"[{"text":5,"type":"text"}]"#).as_deref(), Some("params.input[0].text"));
    assert_eq!(path(r#"[{"type":"text","text":5}]"#).as_deref(), Some("params.input[0].text"));
    assert_eq!(path(r#"[{"text":"hi","type":5}]"#).as_deref(), Some("params.input[0].type"));
    // Inside an untagged union arm.
    let line = r#"{"id":0,"method":"mcpServer/elicitation/request","params":{"mode":"form","threadId":"t","serverName":"s","message":"m","requestedSchema":{"type":"object","properties":{"n":{"type":"number","minimum":"low"}}}}}"#;
    let e = ServerMessage::from_line(line).unwrap_err();
    assert_eq!(e.path().map(|p| p.to_string()).as_deref(), Some("params.requestedSchema.properties.n.minimum"), "{e}");

    let e = TypedServerMessage::from_line_with(r#"{"id":1,"result":[1]}"#, |_| Some("thread/start")).unwrap_err();
    assert!(!e.path().unwrap_or_default().to_string().contains(".["), "{:?}", e.path());

    let items: Vec<_> = ServerMessage::reader(&b"\xff\n"[..]).collect();
    let text = items[0].as_ref().unwrap_err().to_string();
    assert_eq!(text.matches("line 1").count(), 1, "{text}");
}

/// Findings 2 and 8: the params of an unknown method and the result of a response that cannot
/// be typed are kept as their exact text: big numbers stay exact, and they cost the memory of
/// their text, not a `Value` tree.
#[test]
fn unknown_params_and_results_are_kept_as_text() {
    for line in [
        r#"{"method":"zz/new","params":{"n":123456789012345678901234567890,"f":1e400}}"#,
        r#"{"id":1,"method":"zz/ask","params":[0.10000000000000000000001]}"#,
    ] {
        let m = ServerMessage::from_line(line).unwrap();
        assert_eq!(m.to_line(), line);
    }
    let line = r#"{"id":3,"result":{"n":123456789012345678901234567890}}"#;
    let m = TypedServerMessage::from_line(line).unwrap();
    let Message::Response(TypedResponse { result: ClientResponse::Unrecognized(raw), .. }) = &m else { panic!("{m:?}") };
    assert_eq!(raw.get(), r#"{"n":123456789012345678901234567890}"#);
    assert_eq!(m.to_line(), line);
}

}
