//! Structured output: the final answer of a turn decoded into a Rust type. The client sends
//! the type's JSON Schema (`schemars`) as the turn's `outputSchema`; the model answers with
//! JSON of that shape.
//!
//! ```text
//! cargo run -p codex-app-examples --bin structured -- "Rust, Go and Zig"
//! ```
//!
//! The binary is `$CODEX_BIN`, else `codex` on `PATH`.

use std::time::Duration;

use codex_app_client::protocol::*;
use codex_app_client::{Client, CodexCommand};
use schemars::JsonSchema;
use serde::Deserialize;

/// What the model must answer.
#[derive(Debug, Deserialize, JsonSchema)]
struct Languages {
    /// One entry per language named in the prompt.
    languages: Vec<Language>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Language {
    name: String,
    /// The year of its first public release.
    first_release: u16,
    garbage_collected: bool,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let names = std::env::args().nth(1).unwrap_or_else(|| "Rust, Go and Zig".to_owned());
    let client = Client::spawn(&CodexCommand::new()).await?;
    let thread = client.thread_start(ThreadStartParams::default()).await?;
    let params = thread.turn_params(format!("Describe these programming languages: {names}"));
    let turn = client.start_structured_turn::<Languages>(params).await?;
    // Reads the turn to its end and decodes its last agent message; a message that does not
    // fit the type is a decode error that names the member.
    let answer = turn.result().await?;
    for language in answer.languages {
        println!("{} ({}): garbage collected: {}", language.name, language.first_release, language.garbage_collected);
    }
    client.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
