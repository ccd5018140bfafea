//! The handshake, in memory: the server's release read from the `userAgent` codex writes for
//! any client name, a server below the supported range, and a reconnect to another release.
//! Raw JSON only (no generated types). A server below the range holds whatever release the
//! crate is built from; the others are written against what the vendored release's range says
//! of 0.169.0 (a member and a method it lacks), and are pinned to it (`written_for_codex!`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use codex_app_client::transport::memory::{MemoryTransport, ServerEnd};
use codex_app_client::*;
use serde_json::{json, Value};

const T: Duration = Duration::from_secs(20);

async fn recv(server: &mut ServerEnd) -> Value {
    tokio::time::timeout(T, server.recv_json()).await.expect("the client sends").expect("open")
}

/// Plays the server's side of the handshake with `result`; returns the `initialize` params.
async fn handshake(server: &mut ServerEnd, result: Value) -> Value {
    let init = recv(server).await;
    assert_eq!(init["method"], "initialize");
    server.send(json!({"id": init["id"], "result": result}).to_string()).await.unwrap();
    assert_eq!(recv(server).await, json!({"method": "initialized"}));
    init["params"].clone()
}

/// What the client logged through `tracing` while the guard lives (on this thread: the tests
/// that read it run on a current-thread runtime).
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Logs {
    fn capture() -> (Logs, tracing::subscriber::DefaultGuard) {
        let logs = Logs::default();
        let writer = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        (logs, tracing::subscriber::set_default(subscriber))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What the real codex 0.100.0 answers `initialize` (its whole result: no `codexHome`, no
/// platform members, which the crate's `InitializeResponse` requires).
fn result_of_0_100(name: &str) -> Value {
    json!({"userAgent": format!("{name}/0.100.0 (Debian 12.0.0; x86_64) xterm ({name}; 1.0)")})
}

#[tokio::test]
async fn below_the_floor_warn_connects_and_logs_the_range_and_error_names_it() {
    let (logs, _guard) = Logs::capture();
    let (transport, mut server) = MemoryTransport::pair(8);
    let builder = Client::builder().client_info("My App", "1.0");
    let (client, _) = tokio::join!(builder.connect(transport), handshake(&mut server, result_of_0_100("My App")));
    let client = client.expect("Warn connects to a release below the range");
    let check = client.version_check().expect("read");
    assert_eq!(check.server.as_deref(), Some("0.100.0"));
    assert_eq!(check.support(), Some(protocol::availability::Support::Older));
    // The result did not decode as the crate's type: kept as it came.
    assert!(client.initialize_response().is_none());
    assert_eq!(client.initialize_result(), Some(result_of_0_100("My App")));
    let range = format!("codex {} to {}", protocol::availability::FLOOR, protocol::CODEX_VERSION);
    let logged = logs.text();
    assert!(logged.contains("WARN") && logged.contains(&range) && logged.contains("0.100.0"), "{logged}");
    // It goes on: a request is sent and answered.
    let (answer, ()) = tokio::join!(client.request_raw("thread/list", json!({})), async {
        let request = recv(&mut server).await;
        assert_eq!(request["method"], "thread/list");
        server
            .send(json!({"id": request["id"], "result": {"data": [], "nextCursor": null}}).to_string())
            .await
            .unwrap();
    });
    assert_eq!(answer.expect("answered"), json!({"data": [], "nextCursor": null}));
    client.shutdown(Duration::from_secs(1)).await;

    let (transport, mut server) = MemoryTransport::pair(8);
    let builder = Client::builder().client_info("My App", "1.0").version_policy(VersionPolicy::Error);
    let server_side = async {
        let init = recv(&mut server).await;
        server.send(json!({"id": init["id"], "result": result_of_0_100("My App")}).to_string()).await.unwrap();
        // No `initialized`: the client ends the connection.
        tokio::time::timeout(T, async { while server.recv().await.is_some() {} }).await.expect("the client closes");
    };
    let (client, ()) = tokio::join!(builder.connect(transport), server_side);
    let error = client.expect_err("Error refuses a release below the range");
    assert!(matches!(error, ClientError::VersionMismatch(_)), "{error:?}");
    let text = error.to_string();
    assert!(text.contains("0.100.0") && text.contains(&range), "{text}");
}

// What 0.169.0 lacks is a fact of the range of codex 0.171.0: after a regen from another
// release these tests are left out, and one test says so.
codex_app_client::protocol::__test_support::written_for_codex! { "0.171.0",

/// A `userAgent` as codex writes it for the client `name` (codex 0.171.0 for "My App":
/// `My App/0.171.0 (Debian 12.0.0; x86_64) xterm (My App; 0.0.0)`).
fn user_agent(name: &str, version: &str) -> String {
    format!("{name}/{version} (Debian 12.0.0; x86_64) xterm ({name}; 0.0.0)")
}

/// The `initialize` result of a release that sends everything the crate's type requires.
fn full_result(user_agent: &str) -> Value {
    json!({"userAgent": user_agent, "codexHome": "/tmp/h", "platformFamily": "unix", "platformOs": "linux"})
}

/// A member the crate's newest release has and 0.169.0 lacks (added in 0.171.0).
fn list_with_a_member_of_0_171() -> Value {
    json!({"includedThreadIds": ["t"]})
}

#[tokio::test]
async fn the_release_is_read_after_any_client_name() {
    for name in ["My App", "tools/agent/v2", "Äpp ünïcode 名前", "x/1.2.3 (y)"] {
        let (transport, mut server) = MemoryTransport::pair(8);
        let builder = Client::builder().client_info(name, "0.0.0");
        let (client, params) =
            tokio::join!(builder.connect(transport), handshake(&mut server, full_result(&user_agent(name, "0.169.0"))));
        let client = client.expect("connect");
        assert_eq!(params["clientInfo"]["name"], name);
        assert_eq!(client.server_version().map(|r| r.to_string()).as_deref(), Some("0.169.0"), "{name:?}");
        // Checked against that release: a member it lacks is refused, nothing sent.
        let refused = tokio::time::timeout(T, client.request_raw("thread/list", list_with_a_member_of_0_171()))
            .await
            .expect("refused at once")
            .unwrap_err();
        assert!(
            matches!(&refused, ClientError::UnknownToServer { server, .. } if server == "0.169.0"),
            "{name:?}: {refused:?}"
        );
        // The server side closes first, so the shutdown does not wait for it.
        drop(server);
        client.shutdown(Duration::from_secs(1)).await;
    }
}

/// Opens the next of a list of in-memory connections.
type Connect = Box<dyn Fn() -> std::future::Ready<Result<MemoryTransport, TransportError>> + Send + Sync>;

/// A client that reconnects, and the server end of each of its connections in order.
fn reconnecting(builder: ClientBuilder, connections: usize) -> (ClientBuilder, Connect, Vec<ServerEnd>) {
    let (mut transports, mut servers) = (Vec::new(), Vec::new());
    for _ in 0..connections {
        let (transport, server) = MemoryTransport::pair(64);
        transports.push(transport);
        servers.push(server);
    }
    transports.reverse();
    let transports = Mutex::new(transports);
    let connect: Connect = Box::new(move || {
        let next = transports.lock().unwrap().pop();
        std::future::ready(next.ok_or_else(|| TransportError::new("connecting", "no more connections")))
    });
    let policy = RetryPolicy::default().max_retries(3).initial_delay(Duration::from_millis(5));
    (builder.reconnect(policy), connect, servers)
}

/// The next `ReleaseChanged` and `Reconnected` of `events`, in order.
async fn release_change(events: &mut Notifications) -> (VersionCheck, VersionCheck) {
    let mut changed = None;
    loop {
        match tokio::time::timeout(T, events.next()).await.expect("in time").expect("open") {
            Event::ReleaseChanged(change) => changed = Some((change.previous.clone(), change.current.clone())),
            Event::Reconnected(_) => return changed.expect("ReleaseChanged comes before Reconnected"),
            _ => {}
        }
    }
}

/// Sends `thread/list` with a member 0.171.0 added: `true` when the server got it.
async fn list_reaches(client: &Client, server: &mut ServerEnd) -> bool {
    let sent = client.request_raw("thread/list", list_with_a_member_of_0_171());
    let served = async {
        let request = recv(server).await;
        assert_eq!(request["params"], list_with_a_member_of_0_171());
        server
            .send(json!({"id": request["id"], "result": {"data": [], "nextCursor": null}}).to_string())
            .await
            .unwrap();
    };
    tokio::pin!(sent, served);
    tokio::select! {
        outcome = &mut sent => match outcome {
            Err(ClientError::UnknownToServer { .. }) => false,
            other => panic!("{other:?}"),
        },
        () = &mut served => {
            sent.await.expect("answered");
            true
        }
    }
}

#[tokio::test]
async fn a_reconnect_to_another_release_is_checked_against_the_new_one_and_said() {
    let (logs, _guard) = Logs::capture();
    let name = "My App";
    let (mut builder, connect, servers) = reconnecting(Client::builder().client_info(name, "1.0"), 3);
    let mut events = builder.notifications();
    let [mut first, mut second, mut third]: [ServerEnd; 3] = servers.try_into().ok().unwrap();
    let (client, _) =
        tokio::join!(builder.connect_with(connect), handshake(&mut first, full_result(&user_agent(name, "0.169.0"))));
    let client = client.expect("connect");
    let unavailable = || client.request_raw("modelProvider/default/set", json!({"provider": "openai"}));

    // 0.169.0: the member and the method of 0.171.0 are refused, nothing sent.
    assert!(!list_reaches(&client, &mut first).await);
    assert!(matches!(unavailable().await, Err(ClientError::Unavailable { .. })));

    // codex updated to the crate's release and restarted.
    drop(first);
    handshake(&mut second, full_result(&user_agent(name, protocol::CODEX_VERSION))).await;
    let (previous, current) = release_change(&mut events).await;
    assert_eq!(previous.server.as_deref(), Some("0.169.0"));
    assert_eq!(current.server.as_deref(), Some(protocol::CODEX_VERSION));
    assert_eq!(client.server_version().map(|r| r.to_string()).as_deref(), Some(protocol::CODEX_VERSION));
    assert!(logs.text().contains("the server's codex release changed"), "{}", logs.text());
    // Now both are sent.
    assert!(list_reaches(&client, &mut second).await);
    let (answer, ()) = tokio::join!(unavailable(), async {
        let request = recv(&mut second).await;
        assert_eq!(request["method"], "modelProvider/default/set");
        second.send(json!({"id": request["id"], "result": {}}).to_string()).await.unwrap();
    });
    answer.expect("sent and answered");

    // And back to 0.169.0: refused again.
    drop(second);
    handshake(&mut third, full_result(&user_agent(name, "0.169.0"))).await;
    let (previous, current) = release_change(&mut events).await;
    assert_eq!(
        (previous.server.as_deref(), current.server.as_deref()),
        (Some(protocol::CODEX_VERSION), Some("0.169.0"))
    );
    assert!(!list_reaches(&client, &mut third).await);
    assert!(matches!(unavailable().await, Err(ClientError::Unavailable { .. })));
    client.shutdown(Duration::from_secs(1)).await;
}

/// A request checked against the release before a reconnect, and still waiting to be sent
/// when the connection is back: sent when the release is the same, failed with `Disconnected`
/// (retryable, nothing sent) when it changed; sent again, it is checked against the new one.
#[tokio::test]
async fn a_request_checked_against_the_release_before_a_reconnect_is_not_sent_to_another() {
    for new_release in ["0.169.0", protocol::CODEX_VERSION] {
        let name = "My App";
        let (first, first_server) = MemoryTransport::pair(64);
        let (second, mut second_server) = MemoryTransport::pair(64);
        let transports = Arc::new(Mutex::new(vec![second]));
        // The reconnect's connect says it was called, then waits for the gate.
        let (called, mut calls) = tokio::sync::mpsc::unbounded_channel();
        let (gate, gates) = tokio::sync::watch::channel(false);
        let connect = move || {
            let (transports, called, mut gates) = (transports.clone(), called.clone(), gates.clone());
            async move {
                let _ = called.send(());
                let _ = gates.wait_for(|open| *open).await;
                let next = transports.lock().unwrap().pop();
                next.ok_or_else(|| TransportError::new("connecting", "no more connections"))
            }
        };
        let connect = {
            let first = Mutex::new(Some(first));
            move || {
                let taken = first.lock().unwrap().take();
                let then = connect();
                async move {
                    match taken {
                        Some(first) => Ok(first),
                        None => then.await,
                    }
                }
            }
        };
        let policy = RetryPolicy::default().max_retries(3).initial_delay(Duration::from_millis(5));
        let builder = Client::builder().client_info(name, "1.0").reconnect(policy);
        let mut first_server = first_server;
        let (client, _) = tokio::join!(
            builder.connect_with(connect),
            handshake(&mut first_server, full_result(&user_agent(name, "0.169.0")))
        );
        let client = client.expect("connect");
        drop(first_server);
        // The connection dropped and the client is connecting again (its pending requests
        // already failed): a request now is checked against 0.169.0 and waits.
        tokio::time::timeout(T, calls.recv()).await.expect("reconnecting").unwrap();
        let waiting = tokio::spawn({
            let client = client.clone();
            async move { client.request_raw("thread/list", json!({})).await }
        });
        tokio::time::timeout(T, async {
            while client.pending_requests() == 0 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the request waits");
        gate.send_replace(true);
        let init = recv(&mut second_server).await;
        let result = full_result(&user_agent(name, new_release));
        second_server.send(json!({"id": init["id"], "result": result}).to_string()).await.unwrap();
        assert_eq!(recv(&mut second_server).await["method"], "initialized");
        if new_release == "0.169.0" {
            let request = recv(&mut second_server).await;
            assert_eq!(request["method"], "thread/list");
            second_server.send(json!({"id": request["id"], "result": {}}).to_string()).await.unwrap();
            waiting.await.unwrap().expect("sent to the same release");
        } else {
            let outcome = tokio::time::timeout(T, waiting).await.unwrap().unwrap();
            assert!(matches!(outcome, Err(ClientError::Disconnected)), "{outcome:?}");
            // Sent again, it is checked against the new release (and sent).
            let (again, ()) = tokio::join!(client.request_raw("thread/list", list_with_a_member_of_0_171()), async {
                let request = recv(&mut second_server).await;
                assert_eq!(request["params"], list_with_a_member_of_0_171(), "the first was not sent");
                second_server.send(json!({"id": request["id"], "result": {}}).to_string()).await.unwrap();
            });
            again.expect("answered");
        }
        client.shutdown(Duration::from_secs(1)).await;
    }
}

}
