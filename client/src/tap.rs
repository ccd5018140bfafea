//! The transcript tap: every line of a session, both directions, in the project's transcript
//! format, so `cargo xtask drift FILE` can check a user's own sessions against the types.
//!
//! One JSON object per line: `{"dir":"c2s","line":"<the exact wire line>"}` for what the
//! client sent, `"s2c"` for what the server sent. A client line is written before it is sent,
//! so a response is never written before its request.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::Serialize;

/// Where the tap writes. Cheap to clone; clones write to the same sink.
#[derive(Clone)]
pub struct Tap {
    sink: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tap")
    }
}

/// The direction of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Client to server.
    C2s,
    /// Server to client.
    S2c,
}

#[derive(Serialize)]
struct Entry<'a> {
    dir: &'static str,
    line: &'a str,
}

impl Tap {
    /// A tap that creates (or truncates) the file at `path`.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Tap> {
        Ok(Tap::new(File::create(path)?))
    }

    /// A tap that writes to `sink` (each entry is written with one `write_all` and flushed).
    pub fn new(sink: impl Write + Send + 'static) -> Tap {
        Tap { sink: Arc::new(Mutex::new(Box::new(sink))) }
    }

    /// Writes one entry. A write error is logged (a `tracing` warning, once) and otherwise
    /// ignored: the tap never stops the session.
    pub fn record(&self, dir: Direction, line: &str) {
        let dir = match dir {
            Direction::C2s => "c2s",
            Direction::S2c => "s2c",
        };
        let mut text = serde_json::to_string(&Entry { dir, line }).expect("a string always serializes");
        text.push('\n');
        let mut sink = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = sink.write_all(text.as_bytes()).and_then(|()| sink.flush()) {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(
                || tracing::warn!(error = %e, "the transcript tap cannot write; its later errors are not logged"),
            );
        }
    }
}
