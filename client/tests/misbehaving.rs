//! The client against a server that misbehaves on purpose ([`server`]): responses nobody
//! asked for, late and out-of-order answers, lines that are not messages, requests without a
//! valid id, floods, overload and draining errors, turns whose end cannot be read, sockets
//! closed half way, a process that dies or will not exit. Public API only.
//!
//! Written against the types of the vendored codex release; after a regen from a release out
//! of the range these tests are left out and one test says so (see `written_for_codex!`).

codex_app_client::protocol::__test_support::written_for_codex! { "0.171.0",

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use codex_app_client::protocol::jsonrpc::ErrorObject;
use codex_app_client::protocol::*;
use codex_app_client::*;
use serde_json::{json, Value};

use server::{Logs, Misbehaving, T};

/// The misbehaving server, and what the tests read the client's logs with.
mod server {
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use codex_app_client::protocol::CODEX_VERSION;
    use codex_app_client::transport::memory::{MemoryTransport, ServerEnd};
    use codex_app_client::transport::{LineSender, Transport};
    use codex_app_client::{Client, ClientBuilder, ServerExit};
    use serde_json::{json, Value};
    use tokio::sync::watch;

    pub const T: Duration = Duration::from_secs(10);

    /// The `initialize` result of the pinned release.
    pub fn initialize_result() -> Value {
        json!({"userAgent": format!("misbehaving/{CODEX_VERSION} (test)"), "codexHome": "/tmp/h", "platformFamily": "unix", "platformOs": "linux"})
    }

    /// A server played by the test over the in-memory transport, whose sending side (the
    /// client's writes) can be held shut: a server that does not read.
    pub struct Misbehaving {
        pub end: ServerEnd,
        /// `false`: the client's writes wait.
        pub reading: watch::Sender<bool>,
    }

    impl Misbehaving {
        /// A client connected to a misbehaving server; `before` is sent before the
        /// `initialize` response.
        pub async fn connect(builder: ClientBuilder, before: &[&str]) -> (Client, Misbehaving) {
            let (transport, end) = MemoryTransport::pair(4096);
            let (reading, gate) = watch::channel(true);
            let transport = Gated { inner: transport, gate };
            let mut server = Misbehaving { end, reading };
            let play = async {
                let init = server.recv().await;
                for line in before {
                    server.send(line).await;
                }
                server.send(&json!({"id": init["id"], "result": initialize_result()}).to_string()).await;
                assert_eq!(server.recv().await["method"], "initialized");
            };
            let (client, ()) = tokio::join!(builder.connect(transport), play);
            (client.expect("connect"), server)
        }

        pub async fn send(&self, line: &str) {
            self.end.send(line).await.expect("the client is there");
        }

        /// The next line of the client, as JSON.
        pub async fn recv(&mut self) -> Value {
            tokio::time::timeout(T, self.end.recv_json()).await.expect("a line in time").expect("the client's side is open")
        }

        /// The next request of the client, checked to be `method`.
        pub async fn request(&mut self, method: &str) -> Value {
            let request = self.recv().await;
            assert_eq!(request["method"], method, "{request}");
            request
        }

        pub async fn answer(&self, request: &Value, result: Value) {
            self.send(&json!({"id": request["id"], "result": result}).to_string()).await;
        }

        pub async fn error(&self, request: &Value, error: Value) {
            self.send(&json!({"id": request["id"], "error": error}).to_string()).await;
        }
    }

    /// The in-memory transport, with the client's writes held while `gate` is `false`.
    struct Gated {
        inner: MemoryTransport,
        gate: watch::Receiver<bool>,
    }

    struct GatedSender<S> {
        inner: S,
        gate: watch::Receiver<bool>,
    }

    impl Transport for Gated {
        type Sender = GatedSender<<MemoryTransport as Transport>::Sender>;
        type Receiver = <MemoryTransport as Transport>::Receiver;

        fn split(self) -> (Self::Sender, Self::Receiver) {
            let (sender, receiver) = self.inner.split();
            (GatedSender { inner: sender, gate: self.gate }, receiver)
        }
    }

    impl<S: LineSender + Sync> LineSender for GatedSender<S> {
        async fn send(&mut self, line: String) -> std::io::Result<()> {
            let _ = self.gate.wait_for(|open| *open).await;
            self.inner.send(line).await
        }

        async fn close(&mut self) -> std::io::Result<()> {
            self.inner.close().await
        }
    }

    /// What the client logged through `tracing` while the guard lives (on this thread: the
    /// tests run on a current-thread runtime).
    #[derive(Clone, Default)]
    pub struct Logs(Arc<Mutex<Vec<u8>>>);

    impl Logs {
        pub fn capture() -> (Logs, tracing::subscriber::DefaultGuard) {
            let logs = Logs::default();
            let writer = logs.clone();
            let subscriber = tracing_subscriber::fmt()
                .with_max_level(tracing::Level::DEBUG)
                .with_ansi(false)
                .with_writer(move || writer.clone())
                .finish();
            (logs.clone(), tracing::subscriber::set_default(subscriber))
        }

        pub fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
        }

        /// How many logged lines contain `needle`.
        pub fn count(&self, needle: &str) -> usize {
            self.text().lines().filter(|l| l.contains(needle)).count()
        }
    }

    impl Write for Logs {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A shell script standing in for `codex app-server`: it answers `initialize` as the pinned
    /// release does, then runs `then`.
    pub fn script(dir: &std::path::Path, then: &str) -> std::path::PathBuf {
        let path = dir.join("server.sh");
        let init = json!({"id": 1, "result": initialize_result()}).to_string();
        let text = format!("#!/bin/sh\nread init\necho '{init}'\nread initialized\n{then}\n");
        crate::executable::write(&path, &text);
        path
    }

    /// A WebSocket server on loopback that plays the handshake, then gives the socket to the
    /// test.
    pub async fn websocket() -> (String, tokio::task::JoinHandle<tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>>) {
        use futures_util::{SinkExt, StreamExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}", listener.local_addr().unwrap());
        let accept = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let mut ws = tokio_tungstenite::accept_async(stream).await.unwrap();
            let init: Value = serde_json::from_str(ws.next().await.unwrap().unwrap().to_text().unwrap()).unwrap();
            let answer = json!({"id": init["id"], "result": initialize_result()}).to_string();
            ws.send(tokio_tungstenite::tungstenite::Message::text(answer)).await.unwrap();
            let initialized = ws.next().await.unwrap().unwrap();
            assert!(initialized.to_text().unwrap().contains("initialized"));
            ws
        });
        (url, accept)
    }

    /// The exit of a connection that ended, from a request that failed with it.
    pub fn exited(outcome: Result<Value, codex_app_client::ClientError>) -> ServerExit {
        match outcome {
            Err(codex_app_client::ClientError::ServerExited(exit)) => exit,
            other => panic!("expected the server to have exited, got {other:?}"),
        }
    }
}

async fn next_event(events: &mut Notifications) -> Event {
    tokio::time::timeout(T, events.next()).await.expect("an event in time").expect("the stream is open")
}

fn orphan(event: Event) -> Arc<Orphan> {
    match event {
        Event::Orphan(orphan) => orphan,
        other => panic!("expected an orphan, got {other:?}"),
    }
}

fn undecodable(event: Event) -> Arc<DecodeReport> {
    match event {
        Event::Undecodable(report) => report,
        other => panic!("expected an undecodable line, got {other:?}"),
    }
}

fn turn_json(id: &str, status: &str) -> Value {
    json!({"id": id, "items": [], "status": status, "error": null})
}

fn text_turn(thread: &str) -> TurnStartParams {
    TurnStartParams::new(vec![UserInput::Text(TextUserInput::new("hi".into()))], thread.into())
}

/// A turn started on `thread` with id `turn`.
async fn start_turn(client: &Client, server: &mut Misbehaving, thread: &str, turn: &str) -> TurnHandle {
    let (handle, ()) = tokio::join!(client.start_turn(text_turn(thread)), async {
        let request = server.request("turn/start").await;
        server.answer(&request, json!({"turn": turn_json(turn, "inProgress")})).await;
    });
    handle.expect("turn/start")
}

#[tokio::test]
async fn responses_nobody_waits_for_are_events_and_logged() {
    let (logs, _guard) = Logs::capture();
    let (client, server) = Misbehaving::connect(Client::builder(), &[]).await;
    let mut events = client.notifications();
    for n in 0..8 {
        let line = match n % 2 {
            0 => json!({"id": 1000 + n, "result": {"n": n}}),
            _ => json!({"id": format!("s-{n}"), "error": {"code": -32603, "message": "no"}}),
        };
        server.send(&line.to_string()).await;
    }
    server.send(r#"{"id":null,"error":{"code":-32700,"message":"parse error"}}"#).await;
    for n in 0..8 {
        let orphan = orphan(next_event(&mut events).await);
        assert_eq!(orphan.is_error(), n % 2 == 1, "{orphan:?}");
        assert!(orphan.late.is_none());
        assert_eq!(orphan.line_number, 2 + n as u64);
        match &orphan.answer {
            Ok(result) => assert_eq!(result.to_value().unwrap(), json!({"n": n})),
            Err(error) => assert_eq!(error.code, -32603),
        }
    }
    let last = orphan(next_event(&mut events).await);
    assert_eq!((last.id.clone(), last.is_error()), (None, true));
    assert_eq!(logs.count("a response with an id the client is not waiting for"), 9, "{}", logs.text());
}

#[tokio::test]
async fn late_answers_after_a_timeout_or_a_dropped_future_are_events_that_name_their_request() {
    let (logs, _guard) = Logs::capture();
    let builder = Client::builder().request_timeout(Duration::from_millis(200));
    let (client, mut server) = Misbehaving::connect(builder, &[]).await;
    let mut events = client.notifications();

    let (outcome, request) = tokio::join!(client.request_raw("slow/one", json!({})), server.request("slow/one"));
    assert!(matches!(outcome, Err(ClientError::Timeout(_))), "{outcome:?}");
    server.answer(&request, json!({"late": true})).await;
    let late = orphan(next_event(&mut events).await);
    assert_eq!(late.id, Some(serde_json::from_value(request["id"].clone()).unwrap()));
    let expected = ("slow/one", Abandoned::TimedOut(Duration::from_millis(200)));
    assert_eq!(late.late.as_ref().map(|l| (l.method.as_str(), l.abandoned)), Some(expected));

    // A future dropped before its answer: the answer, and an error answer, are named too.
    for error in [false, true] {
        let call = client.request_raw("dropped/one", json!({}));
        let request = tokio::select! {
            _ = call => panic!("answered before the server saw it"),
            request = server.request("dropped/one") => request,
        };
        // The `Abandon` was sent when the call was dropped; the connection handles commands in
        // order, so it has handled it once it answers this.
        client.connection_stats().await.unwrap();
        match error {
            false => server.answer(&request, json!({})).await,
            true => server.error(&request, json!({"code": -32603, "message": "late"})).await,
        }
        let late = orphan(next_event(&mut events).await);
        assert_eq!(late.is_error(), error);
        assert_eq!(late.late.as_ref().map(|l| (l.method.as_str(), l.abandoned)), Some(("dropped/one", Abandoned::Dropped)));
    }
    assert_eq!(client.pending_requests(), 0);
    assert_eq!(logs.count("a late answer"), 3, "{}", logs.text());
}

#[tokio::test]
async fn answers_in_any_order_reach_their_own_requests() {
    let (client, mut server) = Misbehaving::connect(Client::builder(), &[]).await;
    let calls: Vec<_> = (0..5)
        .map(|n| {
            let client = client.clone();
            tokio::spawn(async move { client.request_raw(&format!("m/{n}"), json!({"n": n})).await })
        })
        .collect();
    let mut requests = Vec::new();
    for _ in 0..5 {
        requests.push(server.recv().await);
    }
    for request in requests.iter().rev() {
        server.answer(request, json!({"echo": request["params"]["n"]})).await;
    }
    for (n, call) in calls.into_iter().enumerate() {
        assert_eq!(call.await.unwrap().unwrap(), json!({"echo": n}));
    }
}

#[tokio::test]
async fn lines_during_the_handshake_are_seen_by_a_stream_taken_from_the_builder() {
    let mut builder = Client::builder();
    let mut events = builder.notifications();
    let before = ["{\"broken", r#"{"method":"thread/archived","params":{"threadId":"t"}}"#];
    let (_client, _server) = Misbehaving::connect(builder, &before).await;
    let report = undecodable(next_event(&mut events).await);
    assert_eq!(report.line_number, Some(1));
    match next_event(&mut events).await {
        Event::Notification(n) => assert_eq!(n.method(), "thread/archived"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn lines_that_are_not_messages_are_events_with_their_line_numbers_and_logged() {
    let (logs, _guard) = Logs::capture();
    let (client, mut server) = Misbehaving::connect(Client::builder(), &[]).await;
    let mut events = client.notifications();
    let bad = ["", "not json", "{\"id\":1,", "[1,2,3]", "42", "null", r#"{"id":true,"result":{}}"#, r#"{"method":7}"#, r#"{"params":{}}"#];
    for line in bad {
        server.send(line).await;
    }
    for (n, line) in bad.iter().enumerate() {
        let report = undecodable(next_event(&mut events).await);
        assert_eq!(report.line_number, Some(2 + n as u64), "{line:?}: {report}");
    }
    assert_eq!(logs.count("a server line did not decode"), bad.len(), "{}", logs.text());
    let (outcome, ()) = tokio::join!(client.request_raw("still/works", Value::Null), async {
        let request = server.request("still/works").await;
        server.answer(&request, json!({"ok": 1})).await;
    });
    assert_eq!(outcome.unwrap(), json!({"ok": 1}));
}

#[tokio::test]
async fn requests_without_a_valid_id_are_answered_with_a_null_id() {
    let (client, mut server) = Misbehaving::connect(Client::builder(), &[]).await;
    let mut events = client.notifications();
    let requests = [
        r#"{"id":null,"method":"item/tool/call","params":{}}"#,
        r#"{"id":{"a":1},"method":"item/commandExecution/requestApproval","params":{}}"#,
        r#"{"id":[1],"method":"x/y"}"#,
        r#"{"id":1.5,"method":"x/y"}"#,
    ];
    for line in requests {
        server.send(line).await;
    }
    for line in requests {
        let answer = server.recv().await;
        assert_eq!(answer["id"], Value::Null, "{line} -> {answer}");
        assert!(answer.as_object().unwrap().contains_key("id"), "{answer}");
        assert_eq!(answer["error"]["code"], ErrorObject::INVALID_REQUEST, "{answer}");
        undecodable(next_event(&mut events).await);
    }
}

#[tokio::test]
async fn every_server_request_of_a_flood_is_answered_while_the_server_does_not_read() {
    let (client, mut server) = Misbehaving::connect(Client::builder(), &[]).await;
    server.reading.send_replace(false);
    let approval = |id: usize| {
        json!({"id": id, "method": "item/commandExecution/requestApproval",
               "params": {"threadId": "t", "turnId": "u", "itemId": "c", "startedAtMs": 0, "command": "ls", "cwd": "/w", "reason": null}})
        .to_string()
    };
    const N: usize = 3000;
    for id in 0..N {
        let line = match id % 3 {
            0 => approval(id),
            1 => format!(r#"{{"id":{id},"method":"item/tool/call","params":{{"bad":true}}}}"#), // does not decode
            _ => format!(r#"{{"id":{id},"method":"some/futureRequest","params":{{}}}}"#),
        };
        server.send(&line).await;
    }
    // A request of the client waits behind them, and is still sent.
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.request_raw("after/flood", Value::Null).await }
    });
    // Once its task sent it (on a busy machine, that can take longer than any fixed pause).
    tokio::time::timeout(T, async {
        while client.pending_requests() == 0 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the request was sent");
    server.reading.send_replace(true);
    let mut answered = HashSet::new();
    let mut request = None;
    while answered.len() < N || request.is_none() {
        let line = server.recv().await;
        if line["method"] == "after/flood" {
            request = Some(line);
            continue;
        }
        let id = line["id"].as_u64().expect("an id") as usize;
        assert!(answered.insert(id), "answered twice: {id}");
        if id % 3 == 0 {
            assert_eq!(line["result"]["decision"], "decline", "{line}");
        } else {
            assert!(line.get("error").is_some(), "{line}");
        }
    }
    server.answer(request.as_ref().unwrap(), json!({})).await;
    assert_eq!(call.await.unwrap().unwrap(), json!({}));
}

#[tokio::test(start_paused = true)]
async fn an_overloaded_server_is_retried_with_backoff_and_jitter() {
    let (client, mut server) = Misbehaving::connect(Client::builder(), &[]).await;
    let overloaded = json!({"code": -32001, "message": "Server overloaded; retry later."});
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.request_raw("busy/method", json!({"k": 1})).await }
    });
    let mut ids = HashSet::new();
    let mut at = Vec::new();
    for attempt in 0..3 {
        let request = server.request("busy/method").await;
        assert_eq!(request["params"], json!({"k": 1}));
        assert!(ids.insert(request["id"].to_string()), "a retry has a new id");
        at.push(tokio::time::Instant::now());
        match attempt {
            2 => server.answer(&request, json!({"done": true})).await,
            _ => server.error(&request, overloaded.clone()).await,
        }
    }
    assert_eq!(call.await.unwrap().unwrap(), json!({"done": true}));
    let first = at[1] - at[0];
    let second = at[2] - at[1];
    assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(110), "{first:?}");
    assert!(second >= Duration::from_millis(100) && second <= Duration::from_millis(210), "{second:?}");

    // Off: the first refusal is the caller's, marked retryable.
    let (client, mut server) = Misbehaving::connect(Client::builder().retry(RetryPolicy::none()), &[]).await;
    let (outcome, request) = tokio::join!(client.request_raw("busy/method", Value::Null), async {
        let request = server.request("busy/method").await;
        server.error(&request, overloaded.clone()).await;
        request
    });
    let _ = request;
    let error = outcome.unwrap_err();
    assert!(error.is_retryable(), "{error:?}");

    // A policy's limit: after it, the error.
    let (client, mut server) = Misbehaving::connect(Client::builder().retry(RetryPolicy::default().max_retries(2)), &[]).await;
    let call = tokio::spawn(async move { client.request_raw("busy/method", Value::Null).await });
    for _ in 0..3 {
        let request = server.request("busy/method").await;
        server.error(&request, overloaded.clone()).await;
    }
    assert!(call.await.unwrap().unwrap_err().is_retryable());
}

#[tokio::test]
async fn a_draining_server_refusal_is_its_own_error_and_is_not_retried() {
    let (client, mut server) = Misbehaving::connect(Client::builder(), &[]).await;
    let (outcome, _) = tokio::join!(client.request_raw("thread/start", json!({})), async {
        let request = server.request("thread/start").await;
        server.error(&request, json!({"code": -32600, "message": "server is shutting down", "data": {"reason": "serverShuttingDown"}})).await;
    });
    match outcome {
        Err(ClientError::ServerShuttingDown(error)) => assert_eq!(error.message, "server is shutting down"),
        other => panic!("expected ServerShuttingDown, got {other:?}"),
    }
    // Any other -32600 is a plain server error.
    let (outcome, _) = tokio::join!(client.request_raw("thread/start", json!({})), async {
        let request = server.request("thread/start").await;
        server.error(&request, json!({"code": -32600, "message": "Not initialized"})).await;
    });
    assert!(matches!(outcome, Err(ClientError::Server(e)) if e.code == -32600));
}

#[tokio::test]
async fn a_turn_ends_with_the_decode_error_when_its_turn_completed_does_not_decode() {
    let (client, mut server) = Misbehaving::connect(Client::builder(), &[]).await;
    let mut turn = start_turn(&client, &mut server, "t", "u").await;
    let bad = json!({"method": "turn/completed", "params": {"threadId": "t", "turn": {"id": "u", "items": "not a list", "status": "completed"}}});
    server.send(&bad.to_string()).await;
    let outcome = tokio::time::timeout(T, turn.wait()).await.expect("wait returns");
    match outcome {
        Err(ClientError::Decode(report)) => {
            assert_eq!(report.method.as_deref(), Some("turn/completed"), "{report}");
            assert!(report.path.as_ref().map(ToString::to_string).as_deref().unwrap_or_default().contains("items"), "{report}");
        }
        other => panic!("expected the decode error, got {other:?}"),
    }
    assert!(turn.is_finished());

    // Also when it comes before the `turn/start` response.
    let (handle, ()) = tokio::join!(client.start_turn(text_turn("t")), async {
        let request = server.request("turn/start").await;
        let bad = json!({"method": "turn/completed", "params": {"threadId": "t", "turn": {"id": "v", "status": 7}}});
        server.send(&bad.to_string()).await;
        server.answer(&request, json!({"turn": turn_json("v", "inProgress")})).await;
    });
    let mut turn = handle.unwrap();
    assert!(matches!(tokio::time::timeout(T, turn.wait()).await.unwrap(), Err(ClientError::Decode(_))));
}

#[tokio::test]
async fn a_failed_turn_is_an_error_of_wait() {
    let (client, mut server) = Misbehaving::connect(Client::builder(), &[]).await;
    let mut turn = start_turn(&client, &mut server, "t", "u").await;
    let mut failed = turn_json("u", "failed");
    failed["error"] = json!({"message": "the model is unavailable", "codexErrorInfo": null, "additionalDetails": null});
    server.send(&json!({"method": "turn/completed", "params": {"threadId": "t", "turn": failed}}).to_string()).await;
    match tokio::time::timeout(T, turn.wait()).await.unwrap() {
        Err(ClientError::TurnFailed(failure)) => {
            assert_eq!((failure.thread_id.as_str(), failure.turn_id.as_str()), ("t", "u"));
            assert_eq!(failure.message.as_deref(), Some("the model is unavailable"));
        }
        other => panic!("expected TurnFailed, got {other:?}"),
    }
    // The completed turn is still there.
    assert!(turn.completed().is_some());
}

#[tokio::test]
async fn a_turn_ends_when_its_thread_closes_or_the_connection_ends() {
    let (client, mut server) = Misbehaving::connect(Client::builder(), &[]).await;
    let mut closed = start_turn(&client, &mut server, "t", "u").await;
    let mut other = start_turn(&client, &mut server, "t2", "w").await;
    server.send(r#"{"method":"thread/closed","params":{"threadId":"t"}}"#).await;
    match tokio::time::timeout(T, closed.wait()).await.unwrap() {
        Err(ClientError::ThreadClosed { thread_id }) => assert_eq!(thread_id, "t"),
        other => panic!("expected ThreadClosed, got {other:?}"),
    }
    drop(server);
    match tokio::time::timeout(T, other.wait()).await.unwrap() {
        Err(ClientError::ServerExited(exit)) => assert_eq!(exit.reason, ExitReason::EndOfStream),
        other => panic!("expected ServerExited, got {other:?}"),
    }
}

#[tokio::test]
async fn a_half_closed_websocket_ends_the_connection_its_requests_and_its_turns() {
    use tokio::io::AsyncWriteExt;
    let (url, accept) = server::websocket().await;
    let (client, ws) = tokio::join!(Client::builder().connect_ws(&url, None), accept);
    let (client, mut ws) = (client.unwrap(), ws.unwrap());
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.request_raw("never/answered", Value::Null).await }
    });
    tokio::time::timeout(T, async {
        while client.pending_requests() == 0 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the request was sent");
    // The server's side of the socket ends without a close frame; its reading side stays open.
    ws.get_mut().shutdown().await.unwrap();
    let exit = server::exited(tokio::time::timeout(T, pending).await.unwrap().unwrap());
    assert_eq!(exit.reason, ExitReason::EndOfStream, "{exit}");
    assert!(matches!(client.closed(), Some(ClientError::ServerExited(_))));
}

#[tokio::test]
async fn a_websocket_closed_cleanly_by_either_side_is_a_clean_end() {
    // By the server: a close frame.
    let (url, accept) = server::websocket().await;
    let (client, ws) = tokio::join!(Client::builder().connect_ws(&url, None), accept);
    let (client, mut ws) = (client.unwrap(), ws.unwrap());
    let mut events = client.notifications();
    ws.close(None).await.unwrap();
    assert!(tokio::time::timeout(T, events.next()).await.unwrap().is_none());
    match client.closed() {
        Some(ClientError::ServerExited(exit)) => {
            assert_eq!(exit.reason, ExitReason::EndOfStream);
            assert!(exit.is_clean(), "{exit}");
        }
        other => panic!("{other:?}"),
    }
    // By the client: shutdown.
    let (url, accept) = server::websocket().await;
    let (client, ws) = tokio::join!(Client::builder().connect_ws(&url, None), accept);
    let (client, ws) = (client.unwrap(), ws.unwrap());
    let server = tokio::spawn(async move {
        use futures_util::StreamExt;
        let mut ws = ws;
        while let Some(Ok(_)) = ws.next().await {} // answers the close frame, then ends
    });
    let exit = client.shutdown(Duration::from_secs(2)).await;
    assert_eq!(exit.reason, ExitReason::Shutdown, "{exit}");
    assert!(exit.is_clean(), "{exit}");
    server.await.unwrap();
}

#[tokio::test]
async fn a_server_that_dies_mid_request_fails_it_with_its_status_and_its_stderr_as_it_came() {
    let (logs, _guard) = Logs::capture();
    let dir = tempfile::tempdir().unwrap();
    let program = server::script(
        dir.path(),
        "printf '\\033[1;31mERROR\\033[0m the model broke (NO_COLOR=%s)\\n' \"$NO_COLOR\" >&2\nread request\nexit 3",
    );
    let client = Client::builder().spawn(&CodexCommand::new().program(program)).await.unwrap();
    // The stderr line is logged as it arrives, before the server ends.
    let deadline = tokio::time::Instant::now() + T;
    while logs.count("the model broke") == 0 {
        assert!(tokio::time::Instant::now() < deadline, "stderr was not forwarded: {}", logs.text());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(client.closed().is_none());
    let exit = server::exited(tokio::time::timeout(T, client.request_raw("thread/list", json!({}))).await.unwrap());
    assert_eq!(exit.reason, ExitReason::EndOfStream);
    assert_eq!(exit.status.as_deref(), Some("exit status: 3"));
    assert_eq!(exit.stderr_tail, vec!["ERROR the model broke (NO_COLOR=1)".to_owned()], "{exit}");
    assert!(!exit.to_string().contains('\u{1b}'), "{exit}");
    assert!(logs.text().contains("codex_app_client::server_stderr"), "{}", logs.text());
}

#[tokio::test]
async fn a_server_that_will_not_exit_is_killed_and_the_exit_says_how_long_the_client_waited() {
    let dir = tempfile::tempdir().unwrap();
    let program = server::script(dir.path(), "trap '' TERM HUP\nexec sleep 60 < /dev/null");
    let client = Client::builder().spawn(&CodexCommand::new().program(program)).await.unwrap();
    let exit = client.shutdown(Duration::from_millis(800)).await;
    assert_eq!(exit.reason, ExitReason::ShutdownTimedOut, "{exit}");
    let waited = exit.killed_after.expect("killed");
    assert!(waited >= Duration::from_millis(800) && waited < Duration::from_secs(5), "{exit}");
    assert!(exit.to_string().contains("killed after waiting"), "{exit}");
    assert!(!exit.is_clean());
}

/// Answers approvals after a while, and never answers tool calls (noting when it is dropped).
struct SlowHandler {
    dropped: Arc<AtomicBool>,
    /// How many requests the handler began.
    began: Arc<std::sync::atomic::AtomicUsize>,
}

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl ServerRequestHandler for SlowHandler {
    async fn item_command_execution_request_approval(&self, _: CommandExecutionRequestApprovalParams) -> HandlerResult<CommandExecutionRequestApprovalResponse> {
        self.began.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok(CommandExecutionRequestApprovalResponse { decision: CommandExecutionApprovalDecision::Decline })
    }

    async fn item_tool_call(&self, _: DynamicToolCallParams) -> HandlerResult<DynamicToolCallResponse> {
        let _flag = SetOnDrop(self.dropped.clone());
        self.began.fetch_add(1, Ordering::SeqCst);
        std::future::pending().await
    }
}

#[tokio::test]
async fn shutdown_awaits_the_handlers_answers_then_cancels_what_is_left() {
    let dropped = Arc::new(AtomicBool::new(false));
    let began = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let builder = Client::builder().handler(SlowHandler { dropped: dropped.clone(), began: began.clone() });
    let (client, mut server) = Misbehaving::connect(builder, &[]).await;
    let approval = json!({"id": 7, "method": "item/commandExecution/requestApproval",
        "params": {"threadId": "t", "turnId": "u", "itemId": "c", "startedAtMs": 0, "command": "ls", "cwd": "/w", "reason": null}});
    let tool = json!({"id": 8, "method": "item/tool/call",
        "params": {"threadId": "t", "turnId": "u", "callId": "k", "tool": "x", "arguments": {}}});
    server.send(&approval.to_string()).await;
    server.send(&tool.to_string()).await;
    // Both are with the handler (however long the connection takes to read them).
    tokio::time::timeout(T, async {
        while began.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("both requests reach the handler");
    let shutdown = client.shutdown(Duration::from_millis(500));
    let play = async {
        // The answer in progress is sent before the client's side closes ...
        let answer = server.recv().await;
        assert_eq!(answer["id"], 7, "{answer}");
        // ... and nothing else: the client's side ends.
        assert!(tokio::time::timeout(T, server.end.recv()).await.unwrap().is_none());
        drop(server);
    };
    let (exit, ()) = tokio::join!(shutdown, play);
    assert!(dropped.load(Ordering::SeqCst), "the handler that never answers was cancelled");
    assert!(matches!(exit.reason, ExitReason::Shutdown | ExitReason::ShutdownTimedOut), "{exit}");
}


#[tokio::test]
async fn a_dropped_connection_reconnects_resumes_its_threads_and_its_turns_go_on() {
    use codex_app_client::transport::memory::{MemoryTransport, ServerEnd};
    use std::sync::Mutex;
    // Each connection the client opens is the next of these.
    let (first, mut server1) = MemoryTransport::pair(64);
    let (second, mut server2) = MemoryTransport::pair(64);
    let transports = Arc::new(Mutex::new(vec![second, first]));
    let connect = {
        let transports = transports.clone();
        move || {
            let next = transports.lock().unwrap().pop();
            async move { next.ok_or_else(|| TransportError::new("connecting", "no more connections")) }
        }
    };
    async fn recv(server: &mut ServerEnd) -> Value {
        tokio::time::timeout(T, server.recv_json()).await.unwrap().unwrap()
    }
    async fn handshake(server: &mut ServerEnd) -> Value {
        let init = recv(server).await;
        assert_eq!(init["method"], "initialize");
        server.send(json!({"id": init["id"], "result": server::initialize_result()}).to_string()).await.unwrap();
        assert_eq!(recv(server).await["method"], "initialized");
        init
    }
    let policy = RetryPolicy::default().max_retries(3).initial_delay(Duration::from_millis(10));
    let (client, first_init) = tokio::join!(Client::builder().reconnect(policy).connect_with(connect), handshake(&mut server1));
    let client = client.unwrap();
    let mut events = client.notifications();
    let (thread, ()) = tokio::join!(client.request_raw("thread/start", json!({})), async {
        let request = recv(&mut server1).await;
        server1.send(json!({"id": request["id"], "result": {"thread": {"id": "t"}}}).to_string()).await.unwrap();
    });
    assert_eq!(thread.unwrap()["thread"]["id"], "t");
    let (turn, ()) = tokio::join!(client.start_turn(text_turn("t")), async {
        let request = recv(&mut server1).await;
        server1.send(json!({"id": request["id"], "result": {"turn": turn_json("u", "inProgress")}}).to_string()).await.unwrap();
    });
    let mut turn = turn.unwrap();
    let delta = |text: &str| json!({"method": "item/agentMessage/delta", "params": {"threadId": "t", "turnId": "u", "itemId": "m", "delta": text}}).to_string();
    server1.send(&delta("Hel")).await.unwrap();
    // A request in flight when the connection drops fails, and may be sent again.
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.request_raw("in/flight", Value::Null).await }
    });
    assert_eq!(recv(&mut server1).await["method"], "in/flight");
    drop(server1);
    let outcome = tokio::time::timeout(T, pending).await.unwrap().unwrap();
    assert!(matches!(outcome, Err(ClientError::Disconnected)), "{outcome:?}");
    assert!(outcome.unwrap_err().is_retryable());

    // The second connection: the same handshake, then the thread is resumed.
    let second_init = handshake(&mut server2).await;
    assert_eq!(second_init["params"], first_init["params"]);
    let resume = recv(&mut server2).await;
    assert_eq!((resume["method"].as_str(), resume["params"].clone()), (Some("thread/resume"), json!({"threadId": "t"})));
    server2.send(json!({"id": resume["id"], "result": {"thread": {"id": "t"}}}).to_string()).await.unwrap();
    server2.send(&delta("lo")).await.unwrap();
    server2.send(&json!({"method": "turn/completed", "params": {"threadId": "t", "turn": turn_json("u", "completed")}}).to_string()).await.unwrap();
    let mut text = String::new();
    while let Some(event) = tokio::time::timeout(T, turn.next()).await.unwrap() {
        if let Some(ServerNotification::ItemAgentMessageDelta { params, .. }) = event.notification() {
            text.push_str(&params.delta);
        }
    }
    assert_eq!(text, "Hello");
    assert!(turn.wait().await.is_ok());
    loop {
        match next_event(&mut events).await {
            Event::Reconnected(attempts) => {
                assert_eq!(attempts, 1);
                break;
            }
            _ => continue,
        }
    }
    // Requests work on the new connection; the resume's answer was the client's own.
    let (outcome, ()) = tokio::join!(client.request_raw("after/reconnect", Value::Null), async {
        let request = recv(&mut server2).await;
        server2.send(json!({"id": request["id"], "result": {"ok": true}}).to_string()).await.unwrap();
    });
    assert_eq!(outcome.unwrap(), json!({"ok": true}));
    assert!(client.closed().is_none());

    // When the policy gives up, the connection ends.
    drop(server2);
    let outcome = tokio::time::timeout(T, client.request_raw("x", Value::Null)).await.unwrap();
    assert!(matches!(outcome, Err(ClientError::ServerExited(_)) | Err(ClientError::Disconnected)), "{outcome:?}");
}
}
