//! One turn against a real `codex app-server`: the assistant's answer is printed as it
//! streams, and every approval the server asks for is asked at the terminal.
//!
//! ```text
//! cargo run -p codex-app-client --example turn -- "List the files here"
//! cargo run -p codex-app-client --example turn -- --codex /path/to/codex -c model=\"o3\" "Run the tests"
//! ```
//!
//! The binary is found via `--codex`, `$CODEX_BIN`, `.codex-bin/` or `PATH`; the server uses
//! your codex configuration (`~/.codex/config.toml`, or `$CODEX_HOME`), with
//! `approvalPolicy: untrusted` so that commands ask first.

use std::io::Write as _;
use std::time::Duration;

use codex_app_client::handler::dispatch;
use codex_app_client::protocol::*;
use codex_app_client::*;
use serde_json::json;
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, BufReader};

/// Asks at the terminal; anything but `y` declines.
///
/// The example builds with the crate generated from any codex release, so where releases
/// differ it works with the wire's method names and JSON: this handler overrides `handle`
/// (every request) rather than the typed methods, whose types differ between releases. With
/// one release's types, override `item_command_execution_request_approval` and
/// `item_file_change_request_approval` instead (see the README).
struct AskAtTerminal;

async fn ask(question: &str) -> bool {
    print!("\n{question} [y/N] ");
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    let _ = BufReader::new(tokio::io::stdin()).read_line(&mut answer).await;
    answer.trim().eq_ignore_ascii_case("y")
}

impl ServerRequestHandler for AskAtTerminal {
    async fn handle(&self, request: ServerRequest) -> HandlerResult<Box<RawValue>> {
        let question = match request.method() {
            "item/commandExecution/requestApproval" | "item/fileChange/requestApproval" => {
                let message = serde_json::to_value(&request).unwrap_or_default();
                let params = &message["params"];
                let what = match params["command"].as_str() {
                    Some(command) => format!("Run `{command}`"),
                    None => format!("Apply the change of item {}", params["itemId"]),
                };
                let reason = params["reason"].as_str().map(|r| format!(" ({r})")).unwrap_or_default();
                format!("{what}{reason}?")
            }
            // Everything else: the safe defaults of the typed methods.
            _ => return dispatch(self, request).await,
        };
        let decision = if ask(&question).await { "accept" } else { "decline" };
        Ok(serde_json::value::to_raw_value(&json!({"decision": decision})).expect("JSON encodes"))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut command = CodexCommand::new();
    let mut prompt = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--codex" => command = command.program(args.next().ok_or("--codex needs a path")?),
            "-c" => {
                let kv = args.next().ok_or("-c needs key=value")?;
                let (key, value) = kv.split_once('=').ok_or("-c needs key=value")?;
                command = command.config(key, value);
            }
            _ => prompt.push(arg),
        }
    }
    if prompt.is_empty() {
        return Err("usage: turn [--codex PATH] [-c key=value]... PROMPT".into());
    }

    let client = Client::builder()
        .client_info("codex-app-client-example", env!("CARGO_PKG_VERSION"))
        .handler(AskAtTerminal)
        .spawn(&command)
        .await?;
    if let Some(check) = client.version_check() {
        eprintln!("[{check}]");
    }
    // Params from JSON (wire names), decoded into this release's types.
    let params: ThreadStartParams = serde_json::from_value(json!({"approvalPolicy": "untrusted"}))?;
    let thread = client.request::<request::ThreadStart>(params).await?.thread;
    let input = json!([{"type": "text", "text": prompt.join(" ")}]);
    let mut turn = client.start_turn(serde_json::from_value(json!({"threadId": thread.id, "input": input}))?).await?;
    while let Some(event) = turn.next().await {
        let Event::Notification(notification) = event else { continue };
        match &*notification {
            ServerNotification::ItemAgentMessageDelta { params, .. } => print!("{}", params.delta),
            ServerNotification::ItemCommandExecutionOutputDelta { params, .. } => print!("{}", params.delta),
            ServerNotification::ItemStarted { params, .. } => {
                if let ThreadItem::CommandExecution(item) = &params.item {
                    println!("\n$ {}", item.command);
                }
            }
            ServerNotification::TurnCompleted { params, .. } => {
                println!("\n[turn {}]", serde_json::to_value(&params.turn).unwrap_or_default()["status"]);
            }
            other if other.method() == "error" => {
                let error = serde_json::to_value(other).unwrap_or_default();
                eprintln!("\n[error: {}]", error["params"]["error"]["message"]);
            }
            _ => {}
        }
        let _ = std::io::stdout().flush();
    }
    client.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
