//! Every method of the schema, typed end to end: decoded from a minimal valid message into its
//! own variant (not the catch-all) and encoded back to the same JSON value.

use super::common;

use super::common::{bundle, methods, Minimal};
use codex_app_protocol::roundtrip;
use codex_app_protocol::*;
use serde_json::{json, Value};

fn check_round_trip<M>(
    line: &Value,
    decode: impl Fn(&str) -> Result<M, jsonrpc::DecodeError>,
    encode: impl Fn(&M) -> String,
) -> M {
    let text = line.to_string();
    let message = decode(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let back: Value = serde_json::from_str(&encode(&message)).unwrap();
    assert!(roundtrip::equivalent(line, &back), "round trip of {text}: {:?}", roundtrip::differences(line, &back));
    message
}

fn params_value(bundle: &Value, params: &Option<Value>) -> Option<Value> {
    let schema = params.as_ref()?;
    if schema.get("type") == Some(&json!("null")) {
        return None;
    }
    Some(Minimal { bundle }.of(schema))
}

#[test]
fn every_client_request_is_typed_and_round_trips() {
    let bundle = bundle();
    let all = methods(&bundle, "ClientRequest");
    assert!(!all.is_empty());
    for (i, (method, params)) in all.iter().enumerate() {
        let mut line = json!({ "id": i, "method": method });
        if let Some(p) = params_value(&bundle, params) {
            line["params"] = p;
        }
        let message = check_round_trip(&line, ClientMessage::from_line, ClientMessage::to_line);
        match message {
            Message::Request(ClientRequest::Unrecognized { .. }) => panic!("{method} decoded as Unrecognized"),
            Message::Request(r) => {
                assert_eq!(r.method(), method);
                assert_eq!(r.id(), &RequestId::Integer(i as i64));
            }
            other => panic!("{method}: {other:?}"),
        }
    }
}

#[test]
fn every_server_request_and_notification_is_typed_and_round_trips() {
    let bundle = bundle();
    // The envelope member every notification may carry, where the vendored schema declares it
    // beside the union's arms (codex added it within the range).
    let emitted_at = bundle["definitions"]["ServerNotification"]["properties"].get("emittedAtMs").is_some();
    for union in ["ServerRequest", "ServerNotification"] {
        for (i, (method, params)) in methods(&bundle, union).iter().enumerate() {
            let mut line = json!({ "method": method });
            if union == "ServerRequest" {
                line = json!({ "id": i, "method": method });
            } else if emitted_at {
                line["emittedAtMs"] = json!(1_790_000_000_000_i64);
            }
            if let Some(p) = params_value(&bundle, params) {
                line["params"] = p;
            }
            match check_round_trip(&line, ServerMessage::from_line, ServerMessage::to_line) {
                Message::Request(ServerRequest::Unrecognized { .. })
                | Message::Notification(ServerNotification::Unrecognized { .. }) => {
                    panic!("{method} decoded as Unrecognized")
                }
                Message::Request(r) => assert_eq!(r.method(), method),
                Message::Notification(n) => assert_eq!(n.method(), method),
                other => panic!("{method}: {other:?}"),
            }
        }
    }
}

#[test]
fn every_response_is_typed_by_its_method() {
    let bundle = bundle();
    // Response types from the convention and the override table, as the generator pairs them;
    // here it is enough that each method's result decodes to its own variant.
    for (i, (method, _)) in methods(&bundle, "ClientRequest").iter().enumerate() {
        let result = minimal_response(&bundle, method);
        let line = json!({ "id": i, "result": result }).to_string();
        let Ok(Message::Response(response)) = ServerMessage::from_line(&line) else { panic!("{line}") };
        let typed = ClientResponse::decode(method, &response.result).unwrap_or_else(|e| panic!("{method}: {e}"));
        assert!(!matches!(typed, ClientResponse::Unrecognized(_)), "{method}");
        let back = roundtrip::reencode(&typed).unwrap();
        assert!(roundtrip::equivalent(&result, &back), "{method}: {:?}", roundtrip::differences(&result, &back));
    }
}

/// The minimal result of a client request, found through its marker's response type name.
fn minimal_response(bundle: &Value, method: &str) -> Value {
    struct ResponseName;
    impl RequestVisitor for ResponseName {
        type Output = &'static str;
        fn visit<R: Request>(self) -> &'static str {
            std::any::type_name::<R::Response>()
        }
        fn unrecognized(self) -> &'static str {
            panic!("unknown method")
        }
    }
    let full = ClientRequest::visit_method(method, ResponseName);
    let name = full.rsplit("::").next().unwrap();
    if name == "Value" {
        return json!({});
    }
    let defs = &bundle["definitions"];
    let schema =
        defs.get(name).or_else(|| defs["v2"].get(name)).unwrap_or_else(|| panic!("{method}: no definition {name}"));
    Minimal { bundle }.of(schema)
}

#[test]
fn markers_carry_the_schema_method_names() {
    struct MethodName;
    impl RequestVisitor for MethodName {
        type Output = Option<&'static str>;
        fn visit<R: Request>(self) -> Self::Output {
            Some(R::METHOD)
        }
        fn unrecognized(self) -> Self::Output {
            None
        }
    }
    impl NotificationVisitor for MethodName {
        type Output = Option<&'static str>;
        fn visit<N: Notification>(self) -> Self::Output {
            Some(N::METHOD)
        }
        fn unrecognized(self) -> Self::Output {
            None
        }
    }
    let bundle = bundle();
    for (union, visit) in [
        ("ClientRequest", ClientRequest::visit_method::<MethodName> as fn(&str, MethodName) -> Option<&'static str>),
        ("ServerRequest", ServerRequest::visit_method::<MethodName>),
        ("ServerNotification", ServerNotification::visit_method::<MethodName>),
        ("ClientNotification", ClientNotification::visit_method::<MethodName>),
    ] {
        for (method, _) in methods(&bundle, union) {
            assert_eq!(visit(&method, MethodName), Some(method.as_str()), "{union}");
        }
        assert_eq!(visit("no/such/method", MethodName), None);
    }
    assert_eq!(request::ThreadStart::METHOD, "thread/start");
    assert_eq!(notification::TurnCompleted::METHOD, "turn/completed");
}

/// Without the feature the crate matches the stable bundle exactly: experimental-only methods
/// are not typed. With it, they are.
#[test]
fn experimental_methods_are_typed_only_with_the_feature() {
    let stable: Vec<String> = methods(&common::bundle_of("stable"), "ClientRequest").into_iter().map(|m| m.0).collect();
    let experimental = common::bundle_of("experimental");
    let experimental_only: Vec<(String, Option<Value>)> =
        methods(&experimental, "ClientRequest").into_iter().filter(|m| !stable.contains(&m.0)).collect();
    assert!(experimental_only.iter().any(|m| m.0 == "mock/experimentalMethod"));
    for (method, params) in &experimental_only {
        let mut line = json!({ "id": 1, "method": method });
        if let Some(p) = params_value(&experimental, params) {
            line["params"] = p;
        }
        let typed = match ClientMessage::from_line(&line.to_string()) {
            Ok(Message::Request(ClientRequest::Unrecognized { .. })) => false,
            Ok(Message::Request(r)) => r.method() == method,
            other => panic!("{method}: {other:?}"),
        };
        assert_eq!(typed, cfg!(feature = "experimental"), "{method}");
    }
}
