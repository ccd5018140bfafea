//! `LineReader` over arbitrary bytes, read in pieces of a fuzzed size with a fuzzed maximum
//! line length, against a plain model: split at `\n`, drop one trailing `\r`, skip blank
//! lines, a line longer than the maximum (terminator excluded) is an error, so is one that is
//! not UTF-8. `MessageReader` over the same bytes never panics.
#![no_main]

use std::io::{self, BufReader, Read};

use codex_app_protocol::framing::LineReader;
use codex_app_protocol::ServerMessage;
use libfuzzer_sys::fuzz_target;

struct Pieces<'a>(&'a [u8], usize);

impl Read for Pieces<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.0.len().min(self.1).min(out.len());
        out[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

fn model(input: &[u8], max: usize) -> Vec<Result<(u64, String), u64>> {
    let mut out = Vec::new();
    let mut parts: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    for (i, part) in parts.into_iter().enumerate() {
        let number = i as u64 + 1;
        let part = part.strip_suffix(b"\r").unwrap_or(part);
        if part.len() > max {
            out.push(Err(number));
        } else if part.iter().all(u8::is_ascii_whitespace) {
            continue;
        } else {
            out.push(std::str::from_utf8(part).map(|s| (number, s.to_owned())).map_err(|_| number));
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let [a, b, c, input @ ..] = data else { return };
    let piece = usize::from(*a % 17) + 1;
    let capacity = usize::from(*b % 9) + 1;
    let max = usize::from(*c) % 64;
    let reader = LineReader::new(BufReader::with_capacity(capacity, Pieces(input, piece))).with_max_line_len(max);
    let got: Vec<Result<(u64, String), u64>> =
        reader.map(|r| r.map(|l| (l.number, l.text)).map_err(|e| e.line().expect("errors name their line"))).collect();
    assert_eq!(got, model(input, max), "piece {piece}, capacity {capacity}, max {max}");
    for item in ServerMessage::reader(BufReader::with_capacity(capacity, Pieces(input, piece))).with_max_line_len(max) {
        if let Err(e) = item {
            let _ = e.to_string();
        }
    }
});
