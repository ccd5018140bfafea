//! The handshake, in memory: the server's release read from the `userAgent` codex writes for
//! any client name, a server below the supported range, and a reconnect to another release.
//! Raw JSON only (no generated types), so these hold whatever release the crate is built from.

use std::time::Duration;

use codex_app_client::transport::memory::{MemoryTransport, ServerEnd};
use codex_app_client::*;
use serde_json::{json, Value};

const T: Duration = Duration::from_secs(20);

/// A `userAgent` as codex writes it for the client `name` (codex 0.171.0 for "My App":
/// `My App/0.171.0 (Debian 12.0.0; x86_64) xterm (My App; 0.0.0)`).
fn user_agent(name: &str, version: &str) -> String {
    format!("{name}/{version} (Debian 12.0.0; x86_64) xterm ({name}; 0.0.0)")
}

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
        let refused = client.request_raw("thread/list", list_with_a_member_of_0_171()).await.unwrap_err();
        assert!(
            matches!(&refused, ClientError::UnknownToServer { server, .. } if server == "0.169.0"),
            "{name:?}: {refused:?}"
        );
        client.shutdown(Duration::from_secs(1)).await;
    }
}
