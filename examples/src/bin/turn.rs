//! One turn against a real `codex app-server`: the assistant's answer is printed as it
//! streams, and every approval the server asks for is asked at the terminal.
//!
//! ```text
//! cargo run -p codex-app-examples --bin turn -- "List the files here"
//! cargo run -p codex-app-examples --bin turn -- --codex /path/to/codex -c model=\"o3\" "Run the tests"
//! ```
//!
//! The binary is `--codex PATH`, else `$CODEX_BIN`, else `codex` on `PATH`; the server uses
//! your codex configuration (`~/.codex/config.toml`, or `$CODEX_HOME`), with
//! `approvalPolicy: untrusted` so that commands ask first.
//!
//! The approvals are answered by the typed methods of [`ServerRequestHandler`]: each gets the
//! request's params and returns the response type, as the protocol crate generated them from
//! the vendored codex release (the other server requests keep their safe defaults).

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

/// ` (reason)` when there is one.
fn because(reason: &Option<String>) -> String {
    reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default()
}

impl ServerRequestHandler for AskAtTerminal {
    async fn item_command_execution_request_approval(
        &self,
        params: CommandExecutionRequestApprovalParams,
    ) -> HandlerResult<CommandExecutionRequestApprovalResponse> {
        let command = params.command.as_deref().unwrap_or("a command");
        let decision = match ask(&format!("Run `{command}`{}?", because(&params.reason))).await {
            true => CommandExecutionApprovalDecision::Accept,
            false => CommandExecutionApprovalDecision::Decline,
        };
        Ok(CommandExecutionRequestApprovalResponse { decision })
    }

    async fn item_file_change_request_approval(
        &self,
        params: FileChangeRequestApprovalParams,
    ) -> HandlerResult<FileChangeRequestApprovalResponse> {
        let question = format!("Apply the change of item {}{}?", params.item_id, because(&params.reason));
        let decision = match ask(&question).await {
            true => FileChangeApprovalDecision::Accept,
            false => FileChangeApprovalDecision::Decline,
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

    let client = Client::builder()
        .client_info("codex-app-client-example", env!("CARGO_PKG_VERSION"))
        .handler(AskAtTerminal)
        .spawn(&command)
        .await?;
    if let Some(check) = client.version_check() {
        eprintln!("[{check}]");
    }
    let params = ThreadStartParams { approval_policy: Some(AskForApproval::Untrusted), ..Default::default() };
    let thread = client.thread_start(params).await?;
    let mut turn = thread.turn(prompt.join(" ")).await?;
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
                println!("\n[turn {:?}]", params.turn.status);
            }
            ServerNotification::Error { params, .. } => eprintln!("\n[error: {}]", params.error.message),
            _ => {}
        }
        let _ = std::io::stdout().flush();
    }
    client.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
