//! Steer a running turn, then interrupt it: the turn handle adds input while the model works
//! (`turn/steer`) and stops it (`turn/interrupt`).
//!
//! ```text
//! cargo run -p codex-app-examples --bin steer_interrupt -- "Write a long story about a lighthouse"
//! ```
//!
//! After the first words of the answer, the program asks the model to make the story about a
//! cat instead; two seconds later it interrupts the turn. The binary is `$CODEX_BIN`, else
//! `codex` on `PATH`.

use std::io::Write as _;
use std::time::Duration;

use codex_app_client::protocol::*;
use codex_app_client::{Client, CodexCommand, Event};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prompt = std::env::args().nth(1).unwrap_or_else(|| "Write a long story about a lighthouse".to_owned());
    let client = Client::spawn(&CodexCommand::new()).await?;
    let thread = client.thread_start(ThreadStartParams::default()).await?;
    let mut turn = thread.turn(prompt).await?;

    let mut steered = false;
    let interrupt_at = tokio::time::sleep(Duration::from_secs(3600));
    tokio::pin!(interrupt_at);
    loop {
        tokio::select! {
            event = turn.next() => {
                let Some(event) = event else { break };
                let Event::Notification(notification) = event else { continue };
                if let ServerNotification::ItemAgentMessageDelta { params, .. } = &*notification {
                    print!("{}", params.delta);
                    let _ = std::io::stdout().flush();
                    if !steered {
                        steered = true;
                        // Typed input, as `turn/start` takes it; the turn goes on with it.
                        let more = UserInput::Text(TextUserInput::new("Make the story about a cat instead.".into()));
                        let took = turn.steer(vec![more]).await?;
                        eprintln!("\n[steered turn {took}]");
                        interrupt_at.as_mut().reset(tokio::time::Instant::now() + Duration::from_secs(2));
                    }
                }
            }
            () = &mut interrupt_at => {
                eprintln!("\n[interrupting]");
                turn.interrupt().await?;
                interrupt_at.as_mut().reset(tokio::time::Instant::now() + Duration::from_secs(3600));
            }
        }
    }
    // An interrupted turn completes with the status `interrupted`.
    let ended = turn.wait().await?;
    println!("\n[turn {} {:?}]", ended.id, ended.status);
    client.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
