//! Resume and fork: a thread is run once, resumed by a second connection with typed options,
//! and forked into a branch that answers differently while the original keeps its history.
//!
//! ```text
//! cargo run -p codex-app-examples --bin resume_fork
//! ```
//!
//! The binary is `$CODEX_BIN`, else `codex` on `PATH`.

use std::time::Duration;

use codex_app_client::protocol::*;
use codex_app_client::{Client, CodexCommand};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let command = CodexCommand::new();
    let first = Client::spawn(&command).await?;
    let thread = first.thread_start(ThreadStartParams::default()).await?;
    let answer = thread.run("Pick a number between 1 and 10 and remember it. Say only the number.").await?;
    println!("[{}] {}", thread.id(), answer.final_response);
    let last_turn = answer.turn.id.clone();
    // The thread is stored: a client that starts later picks it up by its id.
    first.shutdown(Duration::from_secs(5)).await;

    let second = Client::spawn(&command).await?;
    // `thread/resume` with typed options: here, the history without its turns.
    let resume = ThreadResumeParams { exclude_turns: Some(true), ..ThreadResumeParams::new(thread.id().to_owned()) };
    let resumed = second.thread_resume_with(resume).await?;
    let again = resumed.run("Which number did you pick?").await?;
    println!("[{} resumed] {}", resumed.id(), again.final_response);

    // A fork from the first turn: a new, ephemeral thread with that history and not what came
    // after it.
    let fork = ThreadForkParams {
        last_turn_id: Some(last_turn),
        ephemeral: Some(true),
        ..ThreadForkParams::new(thread.id().to_owned())
    };
    let branch = second.thread_fork_with(fork).await?;
    let other = branch.run("Add 5 to your number. Say only the result.").await?;
    println!("[{} forked from {}] {}", branch.id(), thread.id(), other.final_response);

    second.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
