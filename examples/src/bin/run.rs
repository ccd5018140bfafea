//! Ask codex once, print its final answer: the shortest complete program.
//!
//! ```text
//! cargo run -p codex-app-examples --bin run -- "What is 2 + 2?"
//! ```
//!
//! The binary is `$CODEX_BIN`, else `codex` on `PATH`; the server uses your codex
//! configuration. Approvals are declined (the client's defaults approve nothing).

use std::time::Duration;

use codex_app_client::{Client, CodexCommand};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prompt = std::env::args().nth(1).unwrap_or_else(|| "Say hello".to_owned());
    let client = Client::spawn(&CodexCommand::new()).await?;
    let thread = client.thread_start(Default::default()).await?;
    let answer = thread.run(prompt).await?;
    println!("{}", answer.final_response);
    client.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
