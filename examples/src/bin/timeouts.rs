//! Deadlines: for connecting, for each request, for a whole turn, and for shutting down.
//!
//! ```text
//! cargo run -p codex-app-examples --bin timeouts -- "Count slowly to 1000"
//! ```
//!
//! The binary is `$CODEX_BIN`, else `codex` on `PATH`.

use std::time::Duration;

use codex_app_client::protocol::*;
use codex_app_client::{Client, ClientError, CodexCommand, ExitReason};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prompt = std::env::args().nth(1).unwrap_or_else(|| "Count slowly to 1000".to_owned());
    let connecting = Client::builder()
        // A server that does not answer `initialize` within 20 s is killed and `spawn` fails
        // with `ClientError::Timeout` (the default is 60 s; it is never unbounded).
        .handshake_timeout(Duration::from_secs(20))
        // Each request waits at most 30 s for its answer (default: no limit). A late answer
        // is an `Event::Orphan` on the notification streams.
        .request_timeout(Duration::from_secs(30))
        .spawn(&CodexCommand::new())
        .await;
    let client = match connecting {
        Ok(client) => client,
        Err(ClientError::CodexNotFound(e)) => return Err(format!("install codex first: {e}").into()),
        Err(ClientError::Timeout(after)) => return Err(format!("codex did not start within {after:?}").into()),
        Err(e) => return Err(e.into()),
    };
    let thread = client.thread_start(ThreadStartParams::default()).await?;

    // A whole turn gets 20 s: past that, interrupt it and wait (bounded too) for its end.
    let mut turn = thread.turn(prompt).await?;
    let reading = async {
        while let Some(event) = turn.next().await {
            if let Some(ServerNotification::ItemAgentMessageDelta { params, .. }) = event.notification() {
                print!("{}", params.delta);
            }
        }
    };
    if tokio::time::timeout(Duration::from_secs(20), reading).await.is_err() {
        eprintln!("\n[20 s are up: interrupting]");
        turn.interrupt().await?;
        match tokio::time::timeout(Duration::from_secs(10), turn.wait()).await {
            Ok(ended) => eprintln!("[turn ended: {:?}]", ended?.status),
            Err(_) => eprintln!("[the turn did not end within 10 s of the interrupt]"),
        }
    }

    // Shutdown waits 5 s for the server to exit after its stdin closes, then kills it.
    let exit = client.shutdown(Duration::from_secs(5)).await;
    if exit.reason == ExitReason::ShutdownTimedOut || exit.killed_after.is_some() {
        eprintln!("[{exit}]");
    }
    Ok(())
}
