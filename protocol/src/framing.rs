//! NDJSON framing: one JSON message per line.
//!
//! [`LineReader`] reads lines from any [`BufRead`]: bytes are buffered until a newline (so a
//! message split across reads is one line), blank lines are skipped, `\r\n` is accepted, and
//! a line longer than the configured maximum is reported and skipped without buffering it
//! whole. Every item carries its 1-based line number, and an error in one line does not end
//! the stream.

use std::fmt;
use std::io::{self, BufRead};

/// The default maximum line length: 64 MiB (a `thread/read` of a long thread is large).
pub const DEFAULT_MAX_LINE_LEN: usize = 64 * 1024 * 1024;

/// One line of input, without its line terminator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number in the stream.
    pub number: u64,
    pub text: String,
}

/// A line that could not be read.
#[derive(Debug)]
pub enum FramingError {
    /// Reading failed; the stream is over.
    Io(io::Error),
    /// The line was longer than the maximum; it was skipped.
    TooLong { line: u64, len: usize, max: usize },
    /// The line was not UTF-8; it was skipped.
    NotUtf8 { line: u64 },
}

impl FramingError {
    /// The line the error is about, if it is about one.
    pub fn line(&self) -> Option<u64> {
        match self {
            FramingError::Io(_) => None,
            FramingError::TooLong { line, .. } | FramingError::NotUtf8 { line } => Some(*line),
        }
    }
}

impl fmt::Display for FramingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FramingError::Io(e) => write!(f, "read failed: {e}"),
            FramingError::TooLong { line, len, max } => {
                write!(f, "line {line}: {len} bytes (or more) exceeds the maximum line length of {max} bytes")
            }
            FramingError::NotUtf8 { line } => write!(f, "line {line}: not valid UTF-8"),
        }
    }
}

impl std::error::Error for FramingError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FramingError::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// Reads NDJSON lines; see the module docs.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    number: u64,
    max: usize,
    buf: Vec<u8>,
    done: bool,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R) -> Self {
        LineReader { inner, number: 0, max: DEFAULT_MAX_LINE_LEN, buf: Vec::new(), done: false }
    }

    /// Sets the maximum line length in bytes (without the terminator).
    pub fn with_max_line_len(mut self, max: usize) -> Self {
        self.max = max;
        self
    }

    /// The number of the last line read (0 before the first).
    pub fn line_number(&self) -> u64 {
        self.number
    }

    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Reads up to the next newline. Returns `Ok(None)` at the end of input, and
    /// `Ok(Some(false))` for a line over the maximum (consumed and dropped).
    fn read_raw(&mut self) -> io::Result<Option<bool>> {
        self.buf.clear();
        let mut too_long = false;
        let mut seen_any = false;
        loop {
            let available = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(if seen_any { Some(!too_long) } else { None });
            }
            seen_any = true;
            let (chunk, found) = match memchr(available) {
                Some(i) => (&available[..i], Some(i + 1)),
                None => (available, None),
            };
            if !too_long {
                // One byte more than the maximum may be the `\r` of a `\r\n`, which does not
                // count; `next_line` checks the length without it.
                if self.buf.len() + chunk.len() > self.max.saturating_add(1) {
                    too_long = true;
                    self.buf.clear();
                } else {
                    self.buf.extend_from_slice(chunk);
                }
            }
            let used = found.unwrap_or(available.len());
            self.inner.consume(used);
            if found.is_some() {
                return Ok(Some(!too_long));
            }
        }
    }

    /// The next non-blank line, an error about one line, or `None` at the end.
    pub fn next_line(&mut self) -> Option<Result<Line, FramingError>> {
        loop {
            if self.done {
                return None;
            }
            let ok = match self.read_raw() {
                Ok(None) => {
                    self.done = true;
                    return None;
                }
                Ok(Some(ok)) => ok,
                Err(e) => {
                    self.done = true;
                    return Some(Err(FramingError::Io(e)));
                }
            };
            self.number += 1;
            if !ok {
                return Some(Err(FramingError::TooLong { line: self.number, len: self.max + 1, max: self.max }));
            }
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
            if self.buf.len() > self.max {
                self.buf.clear();
                return Some(Err(FramingError::TooLong { line: self.number, len: self.max + 1, max: self.max }));
            }
            if self.buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let bytes = std::mem::take(&mut self.buf);
            return Some(match String::from_utf8(bytes) {
                Ok(text) => Ok(Line { number: self.number, text }),
                Err(_) => Err(FramingError::NotUtf8 { line: self.number }),
            });
        }
    }
}

impl<R: BufRead> Iterator for LineReader<R> {
    type Item = Result<Line, FramingError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_line()
    }
}

fn memchr(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// The start of `text` for a message or a log: at most `max_chars` characters, with `...`
/// when it was cut (cut between characters, never inside one).
///
/// Hidden, not API: the one truncation the workspace's crates share (the client's reports, the
/// drift check, the recorder), here because they all depend on this crate; it may change in
/// any release.
///
/// ```
/// use codex_app_protocol::framing::excerpt;
/// assert_eq!(excerpt("thread/started", 6), "thread...");
/// assert_eq!(excerpt("héllo", 2), "hé...");
/// assert_eq!(excerpt("short", 5), "short");
/// ```
#[doc(hidden)]
pub fn excerpt(text: &str, max_chars: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}...", &text[..end]).into(),
        None => text.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out its input in fixed-size pieces, as a pipe might.
    struct Chunked<'a>(&'a [u8], usize);

    impl io::Read for Chunked<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1).min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn lines(input: &[u8], chunk: usize, max: usize) -> Vec<Result<(u64, String), String>> {
        let reader = io::BufReader::with_capacity(4, Chunked(input, chunk));
        LineReader::new(reader)
            .with_max_line_len(max)
            .map(|r| r.map(|l| (l.number, l.text)).map_err(|e| e.to_string()))
            .collect()
    }

    #[test]
    fn partial_reads_make_whole_lines() {
        let got = lines(b"{\"a\":1}\n{\"b\":22}\n", 3, 100);
        assert_eq!(got, vec![Ok((1, "{\"a\":1}".into())), Ok((2, "{\"b\":22}".into()))]);
    }

    #[test]
    fn blank_lines_skipped_and_crlf_accepted() {
        let got = lines(b"\n  \r\n{}\r\n\n[]", 100, 100);
        assert_eq!(got, vec![Ok((3, "{}".into())), Ok((5, "[]".into()))]);
    }

    #[test]
    fn overlong_line_is_reported_and_the_stream_goes_on() {
        let got = lines(b"12345678901\nok\n", 2, 10);
        assert_eq!(got.len(), 2);
        assert!(got[0].as_ref().unwrap_err().contains("line 1"), "{:?}", got[0]);
        assert_eq!(got[1], Ok((2, "ok".into())));
    }

    /// The maximum counts the line without its terminator, `\r\n` as well as `\n`.
    #[test]
    fn crlf_terminator_is_not_counted() {
        for chunk in [1, 3, 100] {
            let got = lines(b"1234567890\r\n12345678901\r\n123456789\r", chunk, 10);
            assert_eq!(got[0], Ok((1, "1234567890".into())), "chunk {chunk}");
            assert!(got[1].as_ref().is_err_and(|e| e.contains("line 2")), "chunk {chunk}: {:?}", got[1]);
            assert_eq!(got[2], Ok((3, "123456789".into())), "chunk {chunk}");
        }
        // A bare `\r` inside a line counts like any byte.
        assert!(lines(b"1234567890\r1\n", 100, 10)[0].is_err());
    }

    #[test]
    fn non_utf8_line_is_one_error() {
        let got = lines(b"\xff\xfe\nok\n", 100, 100);
        assert_eq!(got[0], Err("line 1: not valid UTF-8".into()));
        assert_eq!(got[1], Ok((2, "ok".into())));
    }
}
