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

use codex_app_client::protocol::*;
use codex_app_client::*;
use tokio::io::{AsyncBufReadExt, BufReader};

/// Asks at the terminal; anything but `y` declines.
struct AskAtTerminal;

async fn ask(question: &str) -> bool {
    print!("\n{question} [y/N] ");
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    let _ = BufReader::new(tokio::io::stdin()).read_line(&mut answer).await;
    answer.trim().eq_ignore_ascii_case("y")
}

impl ServerRequestHandler for AskAtTerminal {
    async fn item_command_execution_request_approval(&self, params: CommandExecutionRequestApprovalParams) -> HandlerResult<CommandExecutionRequestApprovalResponse> {
        let command = params.command.unwrap_or_else(|| "(no command given)".into());
        let reason = params.reason.map(|r| format!(" ({r})")).unwrap_or_default();
        let decision = if ask(&format!("Run `{command}`{reason}?")).await {
            CommandExecutionApprovalDecision::Accept
        } else {
            CommandExecutionApprovalDecision::Decline
        };
        Ok(CommandExecutionRequestApprovalResponse { decision })
    }

    async fn item_file_change_request_approval(&self, params: FileChangeRequestApprovalParams) -> HandlerResult<FileChangeRequestApprovalResponse> {
        let reason = params.reason.map(|r| format!(" ({r})")).unwrap_or_default();
        let decision = if ask(&format!("Apply the file change of item {}{reason}?", params.item_id)).await {
            FileChangeApprovalDecision::Accept
        } else {
            FileChangeApprovalDecision::Decline
        };
        Ok(FileChangeRequestApprovalResponse { decision })
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

    let client = Client::builder().client_info("codex-app-client-example", env!("CARGO_PKG_VERSION")).handler(AskAtTerminal).spawn(&command).await?;
    if let Some(check) = client.version_check() {
        eprintln!("[{check}]");
    }
    let params = ThreadStartParams { approval_policy: Some(AskForApproval::Untrusted), ..Default::default() };
    let thread = client.request::<request::ThreadStart>(params).await?.thread;
    let input = vec![UserInput::Text(TextUserInput::new(prompt.join(" ")))];
    let mut turn = client.start_turn(TurnStartParams::new(input, thread.id)).await?;
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
            ServerNotification::Error { params, .. } => eprintln!("\n[error: {}]", params.error.message),
            ServerNotification::TurnCompleted { params, .. } => println!("\n[turn {:?}]", params.turn.status),
            _ => {}
        }
        let _ = std::io::stdout().flush();
    }
    client.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
