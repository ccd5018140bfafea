//! A minimal client: spawn `codex app-server`, initialize, start a thread, print what the
//! server sends until the thread has started.
//!
//! ```text
//! cargo run -p codex-app-examples --bin protocol_client -- /path/to/codex
//! ```

use std::io::{BufReader, Write};
use std::process::{Command, Stdio};

use codex_app_protocol::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let codex = std::env::args().nth(1).unwrap_or_else(|| "codex".into());
    let mut child = Command::new(codex).arg("app-server").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
    let mut stdin = child.stdin.take().expect("piped");
    let mut send = |message: ClientMessage| writeln!(stdin, "{}", message.to_line());

    send(Message::Request(ClientRequest::Initialize {
        id: RequestId::Integer(1),
        // Built from JSON: the members of `InitializeParams` differ between codex releases, and
        // this example compiles against the crate generated from any of them.
        params: Box::new(serde_json::from_value(
            serde_json::json!({"clientInfo": {"name": "example", "version": "0.1.0"}}),
        )?),
        trace: None,
    }))?;
    send(Message::Notification(ClientNotification::Initialized {}))?;
    send(Message::Request(ClientRequest::ThreadStart {
        id: RequestId::Integer(2),
        params: Box::new(ThreadStartParams::default()),
        trace: None,
    }))?;

    // The client keeps `id -> method`, so each response's result is typed as it is read.
    let pending =
        [(RequestId::Integer(1), request::Initialize::METHOD), (RequestId::Integer(2), request::ThreadStart::METHOD)];
    let method_of = |id: &RequestId| pending.iter().find(|(pending, _)| pending == id).map(|(_, method)| *method);
    for line in framing::LineReader::new(BufReader::new(child.stdout.take().expect("piped"))) {
        let line = line?;
        match TypedServerMessage::from_line_with(&line.text, method_of) {
            Ok(Message::Response(TypedResponse { result: ClientResponse::ThreadStart(started), .. })) => {
                println!("thread started: {}", started.thread.id);
            }
            Ok(Message::Notification(ServerNotification::ThreadStarted { params, .. })) => {
                println!("thread/started: {}", params.thread.id);
                break;
            }
            Ok(other) => println!("{}", other.to_line()),
            Err(e) => eprintln!("line {}: {e}", line.number),
        }
    }
    drop(stdin);
    child.kill()?;
    Ok(())
}
