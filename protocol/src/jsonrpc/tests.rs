use super::*;
use crate::{ClientResponse, TypedServerMessage};

fn method_of(id: &RequestId) -> Option<&'static str> {
    (*id == RequestId::Integer(1)).then_some("thread/archive")
}

/// Lines in the member order codex writes take the one-pass decode, and it gives what
/// the two-step decode gives.
#[test]
fn codex_member_order_is_decoded_in_one_pass() {
    let lines = [
        r#"{"method":"thread/name/updated","params":{"threadId":"t","threadName":"n"},"emittedAtMs":7}"#,
        r#"{"method":"thread/archived","params":{"threadId":"t"}}"#,
        r#"{"method":"item/tool/call","id":0,"params":{"threadId":"t","turnId":"u","callId":"c","tool":"x","arguments":{}}}"#,
        r#"{"id":1,"result":{}}"#,
        r#"{"id":2,"result":{"anything":[1,2]}}"#,
        r#"{"error":{"code":-32600,"message":"Not initialized"},"id":3}"#,
        r#"{"method":"some/futureNotification","params":{"x":1},"emittedAtMs":1}"#,
        r#"{"jsonrpc":"2.0","method":"some/futureNotification"}"#,
    ];
    for line in lines {
        let one =
            TypedServerMessage::one_pass(line, &method_of).unwrap_or_else(|e| panic!("{line}: not one pass: {e}"));
        let two = TypedServerMessage::from_envelope_with(Parts::parse(line).unwrap(), method_of).unwrap();
        assert_eq!(one, two, "{line}");
    }
    let typed = TypedServerMessage::from_line_with(r#"{"id":1,"result":{}}"#, method_of).unwrap();
    assert!(matches!(typed, Message::Response(TypedResponse { result: ClientResponse::ThreadArchive(_), .. })));
    let unknown = TypedServerMessage::from_line_with(r#"{"id":2,"result":{}}"#, method_of).unwrap();
    assert!(matches!(unknown, Message::Response(TypedResponse { result: ClientResponse::Unrecognized(_), .. })));
}

/// Whether the vendored schema gives every notification the envelope member `emittedAtMs`
/// (codex added it within the range: a regen from an older release has none).
fn declares_emitted_at() -> bool {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../vendor-schemas/stable/codex_app_server_protocol.schemas.json");
    let bundle: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect(path)).expect("the bundle is JSON");
    bundle["definitions"]["ServerNotification"]["properties"].get("emittedAtMs").is_some()
}

/// Other member orders, and lines that do not decode, are handed to the two-step path,
/// which decodes them (or reports the error with its path).
#[test]
fn other_orders_and_errors_take_the_two_step_path() {
    let cases = [
        // params before method; id after params; result before id; error and method.
        (r#"{"params":{"threadId":"t"},"method":"thread/archived"}"#, true),
        (
            r#"{"method":"item/tool/call","params":{"threadId":"t","turnId":"u","callId":"c","tool":"x","arguments":{}},"id":0}"#,
            true,
        ),
        (r#"{"result":{},"id":1}"#, true),
        (r#"{"id":1,"result":{},"id":2}"#, true),
        (r#"{"method":"thread/archived","params":{"threadId":7}}"#, false),
        (r#"{"method":"thread/archived","error":{"code":1,"message":"m"}}"#, false),
        (r#"{"jsonrpc":"1.0","method":"thread/archived","params":{"threadId":"t"}}"#, false),
    ];
    // An envelope member of the wrong type, where the schema declares it (without it, the
    // member is an unknown one, skipped).
    let emitted_at = r#"{"method":"thread/archived","params":{"threadId":"t"},"emittedAtMs":"soon"}"#;
    let emitted_at = declares_emitted_at().then_some((emitted_at, false));
    for (line, decodes) in cases.into_iter().chain(emitted_at) {
        assert!(TypedServerMessage::one_pass(line, &method_of).is_err(), "{line}: expected the two-step path");
        let two = Parts::parse(line)
            .map_err(|e| e.to_string())
            .and_then(|parts| TypedServerMessage::from_envelope_with(parts, method_of).map_err(|e| e.to_string()));
        assert_eq!(two.is_ok(), decodes, "{line}: {two:?}");
        let via_line = TypedServerMessage::from_line_with(line, method_of);
        match (&via_line, &two) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{line}"),
            (Err(a), Err(b)) => assert!(a.to_string().ends_with(b.as_str()), "{line}: {a} vs {b}"),
            _ => panic!("{line}: {via_line:?} vs {two:?}"),
        }
    }
    let error =
        TypedServerMessage::from_line_with(r#"{"method":"thread/archived","params":{"threadId":7}}"#, method_of)
            .unwrap_err();
    assert_eq!(error.path().map(|p| p.to_string()).as_deref(), Some("params.threadId"));
}
