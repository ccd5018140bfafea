//! Transports: how lines reach the server and come back.
//!
//! A transport is a pair of message streams: [`Transport::split`] gives a [`LineSender`] (the
//! client's messages, one JSON text each) and a [`LineReceiver`] (the server's). The client
//! runs each half on its own task, so a slow write never holds up reading. Plug in your own
//! by implementing these three small traits; the crate has:
//!
//! - [`stdio::StdioTransport`]: spawns `codex app-server` and speaks NDJSON over its stdin and
//!   stdout (the child is killed when the client goes away; its stderr tail is kept for error
//!   messages);
//! - [`ws::WsTransport`]: `ws://HOST:PORT` (with a bearer token) and `unix://PATH` (WebSocket
//!   over a Unix socket), one message per text frame;
//! - [`memory::MemoryTransport`]: an in-memory pair for tests, with a [`memory::ServerEnd`]
//!   that plays the server;
//! - `replay::ReplayTransport` (feature `replay`): a session the [`Tap`](crate::Tap)
//!   recorded, played back as the server, for an application's tests without codex.

use std::future::Future;
use std::io;
use std::time::Duration;

use crate::error::ServerExit;

mod find_codex;
pub mod memory;
#[cfg(feature = "replay")]
pub mod replay;
pub mod stdio;
pub mod ws;

/// A connection to a server, split into its two directions.
pub trait Transport: Send + 'static {
    /// The client-to-server half.
    type Sender: LineSender;
    /// The server-to-client half.
    type Receiver: LineReceiver;
    /// Splits the connection into its two halves.
    fn split(self) -> (Self::Sender, Self::Receiver);
}

/// Sends the client's messages.
pub trait LineSender: Send + 'static {
    /// Sends one message (a JSON text without a newline).
    fn send(&mut self, line: String) -> impl Future<Output = io::Result<()>> + Send;
    /// Closes the client-to-server direction (end of stdin, a WebSocket close frame).
    fn close(&mut self) -> impl Future<Output = io::Result<()>> + Send;
}

/// Receives the server's messages.
pub trait LineReceiver: Send + 'static {
    /// The next message (without its newline), `Ok(None)` at the end of the stream. Must be
    /// cancel safe: the client drops this future when it stops.
    fn recv(&mut self) -> impl Future<Output = io::Result<Option<String>>> + Send;

    /// Waits for the next message, then also takes the ones that are ready without waiting,
    /// up to `max` in all, appending them to `lines`; returns how many it appended, `0` only
    /// at the end of the stream. Must be cancel safe, like [`recv`](Self::recv): a message is
    /// either appended or still there for the next call. An error that comes after some
    /// messages is returned by the next call, after those messages.
    ///
    /// The client reads only through this method, decodes what one call returns as a batch
    /// and wakes the notification streams once per batch. The default takes one message per
    /// call (through `recv`); a transport that has several messages at hand (a read buffer, a
    /// channel) should hand them out together: the crate's transports do.
    fn recv_many(&mut self, lines: &mut Vec<String>, max: usize) -> impl Future<Output = io::Result<usize>> + Send {
        let _ = max;
        async move {
            Ok(match self.recv().await? {
                Some(line) => {
                    lines.push(line);
                    1
                }
                None => 0,
            })
        }
    }

    /// Called once the stream has ended (or the client stops): how the server ended. A
    /// transport that owns the server process waits up to `timeout` for it to exit, then
    /// kills it. The default knows nothing.
    fn exit(&mut self, timeout: Duration) -> impl Future<Output = ServerExit> + Send {
        let _ = timeout;
        async { ServerExit::default() }
    }
}
