//! An in-memory transport: the client on one end, a test (or anything else) playing the
//! server on the other.

use std::io;
use std::time::Duration;

use tokio::sync::mpsc;

use super::{LineReceiver, LineSender, Transport};
use crate::error::ServerExit;

/// The client's end of an in-memory connection; see [`MemoryTransport::pair`].
#[derive(Debug)]
pub struct MemoryTransport {
    to_server: mpsc::UnboundedSender<String>,
    from_server: mpsc::Receiver<String>,
}

/// The server's end of an in-memory connection.
#[derive(Debug)]
pub struct ServerEnd {
    /// Lines the client sent, in order; `None` once the client closed its side.
    pub from_client: mpsc::UnboundedReceiver<String>,
    /// Sends lines to the client. Dropping it ends the client's stream ("server exited").
    pub to_client: mpsc::Sender<String>,
}

impl MemoryTransport {
    /// A connected pair. The server-to-client direction holds `capacity` lines in flight
    /// (a server end that sends faster than the client reads waits, as a pipe would).
    pub fn pair(capacity: usize) -> (MemoryTransport, ServerEnd) {
        let (to_server, from_client) = mpsc::unbounded_channel();
        let (to_client, from_server) = mpsc::channel(capacity.max(1));
        (MemoryTransport { to_server, from_server }, ServerEnd { from_client, to_client })
    }
}

impl ServerEnd {
    /// Sends one line to the client.
    pub async fn send(&self, line: impl Into<String>) -> io::Result<()> {
        self.to_client
            .send(line.into())
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client is gone"))
    }

    /// The next line the client sent, or `None` when the client closed its side.
    pub async fn recv(&mut self) -> Option<String> {
        self.from_client.recv().await
    }

    /// The next line the client sent, as JSON; `None` when the client closed its side.
    pub async fn recv_json(&mut self) -> Option<serde_json::Value> {
        let line = self.recv().await?;
        Some(
            serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("the client sent a line that is not JSON ({e}): {line}")),
        )
    }
}

/// The client-to-server half of a [`MemoryTransport`].
#[derive(Debug)]
pub struct MemorySender(Option<mpsc::UnboundedSender<String>>);

/// The server-to-client half of a [`MemoryTransport`].
#[derive(Debug)]
pub struct MemoryReceiver(mpsc::Receiver<String>);

impl Transport for MemoryTransport {
    type Sender = MemorySender;
    type Receiver = MemoryReceiver;

    fn split(self) -> (MemorySender, MemoryReceiver) {
        (MemorySender(Some(self.to_server)), MemoryReceiver(self.from_server))
    }
}

impl LineSender for MemorySender {
    async fn send(&mut self, line: String) -> io::Result<()> {
        let closed = || io::Error::new(io::ErrorKind::BrokenPipe, "the server end is gone");
        self.0.as_ref().ok_or_else(closed)?.send(line).map_err(|_| closed())
    }

    async fn close(&mut self) -> io::Result<()> {
        self.0 = None;
        Ok(())
    }
}

impl LineReceiver for MemoryReceiver {
    async fn recv(&mut self) -> io::Result<Option<String>> {
        Ok(self.0.recv().await)
    }

    async fn recv_many(&mut self, lines: &mut Vec<String>, max: usize) -> io::Result<usize> {
        // `mpsc::Receiver::recv_many` is cancel safe and takes every ready line in one go.
        Ok(self.0.recv_many(lines, max.max(1)).await)
    }

    async fn exit(&mut self, _timeout: Duration) -> ServerExit {
        ServerExit::default()
    }
}
