//! Two turns at once, on two threads of one connection: each turn handle gets only its own
//! turn's events, whatever order the server interleaves them in.
//!
//! ```text
//! cargo run -p codex-app-examples --bin concurrent_turns
//! ```
//!
//! The binary is `$CODEX_BIN`, else `codex` on `PATH`.

use std::time::Duration;

use codex_app_client::protocol::*;
use codex_app_client::{Client, ClientError, CodexCommand, TurnHandle};

/// Reads one turn to its end: its streamed answer.
async fn collect(mut turn: TurnHandle) -> Result<String, ClientError> {
    let mut text = String::new();
    while let Some(event) = turn.next().await {
        if let Some(ServerNotification::ItemAgentMessageDelta { params, .. }) = event.notification() {
            text.push_str(&params.delta);
        }
    }
    turn.wait().await?; // an error when the turn failed
    Ok(text)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::spawn(&CodexCommand::new()).await?;
    let (poem, facts) = tokio::try_join!(
        client.thread_start(ThreadStartParams::default()),
        client.thread_start(ThreadStartParams::default()),
    )?;
    let (poem_turn, facts_turn) =
        tokio::try_join!(poem.turn("Write a haiku about rivers."), facts.turn("Name three facts about rivers."))?;
    // Both turns run on the server at the same time; each handle is read on its own task.
    let (poem_text, facts_text) =
        tokio::try_join!(tokio::spawn(collect(poem_turn)), tokio::spawn(collect(facts_turn)))?;
    println!("== {}\n{}\n", poem.id(), poem_text?);
    println!("== {}\n{}", facts.id(), facts_text?);
    client.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
