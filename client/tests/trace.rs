//! The W3C trace context of the requests the client sends (the envelope's `trace`): from a
//! `with_trace` scope, else from the builder's `trace_context`, else none; a retry carries the
//! same; the client's own `initialize` carries none.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use codex_app_client::protocol::roundtrip::reencode;
use codex_app_client::protocol::CODEX_VERSION;
use codex_app_client::trace::{with_trace, TraceContext};
use codex_app_client::transport::memory::{MemoryTransport, ServerEnd};
use codex_app_client::{Client, ClientBuilder};
use serde_json::{json, Value};

const T: Duration = Duration::from_secs(5);

async fn connect(builder: ClientBuilder) -> (Client, ServerEnd) {
    let (transport, mut server) = MemoryTransport::pair(64);
    let play = async {
        let init = server.recv_json().await.expect("initialize");
        assert_eq!(init.get("trace"), None, "the client's own initialize carries no trace: {init}");
        let result = json!({"userAgent": format!("test/{CODEX_VERSION} (x)"), "codexHome": "/h",
                            "platformFamily": "unix", "platformOs": "linux"});
        server.send(json!({"id": init["id"], "result": result}).to_string()).await.unwrap();
        server.recv_json().await.expect("initialized");
    };
    let (client, ()) = tokio::join!(builder.connect(transport), play);
    (client.expect("connect"), server)
}

/// Answers the next request with `{}` and returns it.
async fn answer(server: &mut ServerEnd) -> Value {
    let request = tokio::time::timeout(T, server.recv_json()).await.expect("a request").expect("a request");
    server.send(json!({"id": request["id"], "result": {}}).to_string()).await.unwrap();
    request
}

fn context(n: u8) -> TraceContext {
    TraceContext { traceparent: Some(format!("00-{n:032x}-{n:016x}-01")), tracestate: Some(format!("k={n}")) }
}

async fn sent_trace(client: &Client, server: &mut ServerEnd, scope: Option<TraceContext>) -> Option<Value> {
    let request = client.request_raw("some/method", json!({"a": 1}));
    let (result, sent) = match scope {
        Some(scope) => tokio::join!(with_trace(scope, request), answer(server)),
        None => tokio::join!(request, answer(server)),
    };
    result.expect("answered");
    assert_eq!(sent["params"], json!({"a": 1}));
    sent.get("trace").cloned()
}

#[tokio::test]
async fn a_scope_gives_its_requests_a_trace() {
    let (client, mut server) = connect(Client::builder()).await;
    assert_eq!(sent_trace(&client, &mut server, None).await, None);
    let traced = sent_trace(&client, &mut server, Some(context(1))).await;
    assert_eq!(traced, Some(reencode(context(1)).unwrap()));
    assert_eq!(traced.unwrap()["traceparent"], format!("00-{:032x}-{:016x}-01", 1, 1));
    assert_eq!(sent_trace(&client, &mut server, None).await, None, "the scope ended");
}

#[tokio::test]
async fn the_builders_context_is_asked_for_each_request_outside_a_scope() {
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let builder = Client::builder().trace_context(move || {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        (n % 2 == 0).then(|| context(2))
    });
    let (client, mut server) = connect(builder).await;
    assert_eq!(sent_trace(&client, &mut server, None).await, Some(reencode(context(2)).unwrap()));
    assert_eq!(sent_trace(&client, &mut server, None).await, None, "the function said none");
    // A scope wins, and the function is not asked.
    assert_eq!(sent_trace(&client, &mut server, Some(context(3))).await, Some(reencode(context(3)).unwrap()));
    assert_eq!(asked.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_retried_request_carries_the_same_trace() {
    let (client, mut server) = connect(Client::builder()).await;
    let request = with_trace(context(4), client.request_raw("some/method", json!({})));
    let play = async {
        let first = server.recv_json().await.unwrap();
        let overloaded =
            json!({"id": first["id"], "error": {"code": -32001, "message": "Server overloaded; retry later."}});
        server.send(overloaded.to_string()).await.unwrap();
        let second = answer(&mut server).await;
        (first, second)
    };
    let (result, (first, second)) = tokio::time::timeout(T * 4, async { tokio::join!(request, play) }).await.unwrap();
    result.expect("answered after the retry");
    assert_ne!(first["id"], second["id"]);
    assert_eq!(first["trace"], second["trace"]);
    assert_eq!(second["trace"], reencode(context(4)).unwrap());
}
