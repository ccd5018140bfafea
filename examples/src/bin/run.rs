//! Ask codex once, print its final answer: the shortest complete program.
//!
//! ```text
//! cargo run -p codex-app-examples --bin run -- "What is 2 + 2?"
//! ```
//!
//! The binary is `$CODEX_BIN`, else `codex` on `PATH`; the server uses your codex
//! configuration. Approvals are declined (the client's defaults approve nothing). While codex
//! retries (the model cannot be reached: offline, say) the program prints what it waits for on
//! stderr, and it gives the turn five minutes before it interrupts it and says what the turn
//! was still waiting for.

use std::time::Duration;

use codex_app_client::{Client, CodexCommand, RunOptions};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prompt = std::env::args().nth(1).unwrap_or_else(|| "Say hello".to_owned());
    let client = Client::spawn(&CodexCommand::new()).await?;
    let thread = client.thread_start(Default::default()).await?;
    let options = RunOptions::new().deadline(Duration::from_secs(300)).on_event(|event| {
        if let Some(retrying) = event.retrying() {
            eprintln!("waiting: {retrying}");
        }
    });
    let answer = thread.run_with_options(prompt, options).await;
    client.shutdown(Duration::from_secs(5)).await;
    println!("{}", answer?.final_response);
    Ok(())
}
