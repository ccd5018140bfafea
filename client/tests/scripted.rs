//! A server played in memory, for the tests that script it line by line: the handshake, and
//! the thread and turn objects of the vendored release as JSON (`typed`, `waiting`).

use std::time::Duration;

use codex_app_client::transport::memory::{MemoryTransport, ServerEnd};
use codex_app_client::*;
use serde_json::{json, Value};

/// How long a scripted step waits for the client.
pub const T: Duration = Duration::from_secs(5);

/// A client connected to a server played in memory, after the handshake.
pub async fn connect() -> (Client, ServerEnd) {
    connect_with(Client::builder()).await
}

/// [`connect`] with the client built by `builder`.
pub async fn connect_with(builder: ClientBuilder) -> (Client, ServerEnd) {
    let (transport, mut server) = MemoryTransport::pair(64);
    let play = async {
        let init = server.recv_json().await.expect("initialize");
        let result = json!({"userAgent": format!("test/{} (x)", protocol::CODEX_VERSION), "codexHome": "/h",
                            "platformFamily": "unix", "platformOs": "linux"});
        server.send(json!({"id": init["id"], "result": result}).to_string()).await.unwrap();
        server.recv_json().await.expect("initialized");
    };
    let (client, ()) = tokio::join!(builder.connect(transport), play);
    (client.expect("connect"), server)
}

/// A thread of the vendored release, idle and without turns.
pub fn thread_json(id: &str) -> Value {
    json!({"id": id, "environments": [], "extra": null, "sessionId": id, "forkedFromId": null,
           "attachedToThreadId": null, "parentThreadId": null, "preview": "", "ephemeral": false, "section": null,
           "sectionEnteredAt": null, "projectId": null, "historyMode": "paginated", "modelProvider": "mock",
           "model": "m", "reasoningEffort": null, "createdAt": 0, "updatedAt": 0, "recencyAt": 0,
           "status": {"type": "idle"}, "path": null, "cwd": "/w", "cliVersion": protocol::CODEX_VERSION, "originator": "t",
           "source": "vscode", "canAcceptDirectInput": true, "threadSource": null, "agentNickname": null,
           "agentRole": null, "gitInfo": null, "name": null, "daybreakEnabled": null, "turns": []})
}

/// A turn of the vendored release with `status`, without items.
pub fn turn_json(id: &str, status: &str) -> Value {
    json!({"id": id, "rootTurnId": id, "items": [], "itemsView": "notLoaded", "status": status, "error": null,
           "startedAt": null, "completedAt": null, "durationMs": null})
}

/// Answers the next request, which must be `method`, with `result`; returns its params.
pub async fn answer(server: &mut ServerEnd, method: &str, result: Value) -> Value {
    let request = tokio::time::timeout(T, server.recv_json()).await.expect("a request").expect("a request");
    assert_eq!(request["method"], method, "{request}");
    server.send(json!({"id": request["id"], "result": result}).to_string()).await.unwrap();
    request["params"].clone()
}

