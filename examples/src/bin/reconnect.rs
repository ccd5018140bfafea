//! A turn over a WebSocket that survives a dropped connection: the client reconnects, resumes
//! the thread and the turn's events go on on the same handle.
//!
//! ```text
//! codex app-server --listen ws://127.0.0.1:4500 --ws-auth capability-token --ws-token-file token.txt
//! cargo run -p codex-app-examples --bin reconnect -- ws://127.0.0.1:4500 "$(cat token.txt)" "Count to 100 slowly"
//! ```
//!
//! Cut the connection while it runs (restart a proxy, drop the network for a moment): the
//! program prints `[reconnected]` and the answer goes on.

use std::time::Duration;

use codex_app_client::protocol::ServerNotification;
use codex_app_client::{Client, Event, RetryPolicy};
use futures_util::StreamExt;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(|| "ws://127.0.0.1:4500".to_owned());
    let token = args.next();
    let prompt = args.next().unwrap_or_else(|| "Say hello".to_owned());
    let policy = RetryPolicy::default().max_retries(20).max_delay(Duration::from_secs(5));
    let client = Client::builder().reconnect(policy).connect_ws(&url, token.as_deref()).await?;
    let mut reconnects = client.notifications().filter(|e| std::future::ready(matches!(e, Event::Reconnected(_))));
    tokio::spawn(async move {
        while reconnects.next().await.is_some() {
            eprintln!("[reconnected]");
        }
    });
    let thread = client.thread_start(Default::default()).await?;
    let mut turn = thread.turn(prompt).await?;
    while let Some(event) = turn.next().await {
        if let Some(ServerNotification::ItemAgentMessageDelta { params, .. }) = event.notification() {
            print!("{}", params.delta);
        }
    }
    println!();
    turn.wait().await?;
    client.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
