//! The transcript parser, the drift check and its report over arbitrary text, as a transcript
//! and as one side's NDJSON: an error or a report, never a panic.
#![no_main]

use codex_app_traffic::drift::{check, render};
use codex_app_traffic::transcript::{parse, Format, Side};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for format in [Format::Transcript, Format::OneSided(Side::Server), Format::OneSided(Side::Client)] {
        if let Ok(entries) = parse(text, format) {
            let report = check(&entries, format);
            let _ = render(&[("fuzz".to_owned(), report)]);
        }
    }
});
