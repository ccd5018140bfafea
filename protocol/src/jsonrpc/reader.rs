//! The messages of an NDJSON stream, decoded line by line.

use super::*;

/// Decoded messages of an NDJSON stream, each error with its line number; an error in one
/// line does not end the stream.
#[derive(Debug)]
pub struct MessageReader<R, M> {
    lines: LineReader<R>,
    _message: std::marker::PhantomData<fn() -> M>,
}

impl<R: BufRead, M> MessageReader<R, M> {
    pub(super) fn new(input: R) -> Self {
        MessageReader { lines: LineReader::new(input), _message: std::marker::PhantomData }
    }

    /// Sets the maximum line length in bytes.
    pub fn with_max_line_len(mut self, max: usize) -> Self {
        self.lines = self.lines.with_max_line_len(max);
        self
    }
}

impl<R: BufRead, Req: FromParts, Notif: FromParts, Res: FromResult> Iterator
    for MessageReader<R, Message<Req, Notif, Res>>
{
    type Item = Result<(u64, Message<Req, Notif, Res>), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(match self.lines.next()? {
            Err(e) => Err(DecodeError { line: e.line(), id: None, method: None, kind: DecodeErrorKind::Framing(e) }),
            Ok(line) => Message::from_line(&line.text).map(|m| (line.number, m)).map_err(|mut e| {
                e.line = Some(line.number);
                e
            }),
        })
    }
}
