//! Peak heap of a decode, as a multiple of the line (issue 21, point 5): the figures the crate
//! docs state ("What decoding keeps, and its limits", **Memory**), counted per thread by the
//! binary's allocator (`counting.rs`).
//!
//! `cargo test -p codex-app-protocol --release --test it memory -- --nocapture` prints them.
//!
//! Written against the types of the vendored codex release (see `written_for_codex!`).

codex_app_protocol::__test_support::written_for_codex! { "0.171.0",

use codex_app_protocol::ServerMessage;

use super::counting;

/// The peak heap of decoding `line` on this thread (the decoded message kept until the end),
/// over its length.
fn factor(line: &str) -> f64 {
    let before = counting::start_peak();
    let message = ServerMessage::from_line(line).unwrap_or_else(|e| panic!("{e}"));
    let peak = counting::peak() - before;
    drop(message);
    peak as f64 / line.len() as f64
}

/// About `size` bytes of `{"a":1},` (the worst case of a `Value`: tiny objects).
fn small_objects(size: usize) -> String {
    let n = size / 8;
    let mut s = String::with_capacity(size + 2);
    s.push('[');
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        s.push_str(r#"{"a":1}"#);
    }
    s.push(']');
    s
}

#[test]
fn peak_memory_of_a_decode_is_the_documented_multiple_of_the_line() {
    // The peak is a multiple of the line at any size: 2 MiB is far above the fixed costs.
    let objects = small_objects(2 << 20);
    let cases = [
        ("`Value` member (item/tool/call arguments)", format!(r#"{{"id":1,"method":"item/tool/call","params":{{"threadId":"t","turnId":"u","callId":"c","tool":"x","arguments":{objects}}}}}"#), 100.0),
        ("`Value` member (error.data)", format!(r#"{{"id":1,"error":{{"code":1,"message":"m","data":{objects}}}}}"#), 100.0),
        ("unknown union arm", format!(r#"{{"method":"thread/status/changed","params":{{"threadId":"t","status":{{"type":"later","x":{objects}}}}}}}"#), 100.0),
        ("unknown method (raw text)", format!(r#"{{"method":"some/later","params":{{"x":{objects}}}}}"#), 1.5),
        ("unknown member (skipped)", format!(r#"{{"method":"thread/archived","params":{{"threadId":"t","x":{objects}}}}}"#), 0.5),
    ];
    for (what, line, bound) in cases {
        let f = factor(&line);
        println!("{what}: {} MiB line, peak {f:.1}x", line.len() >> 20);
        assert!(f <= bound, "{what}: {f:.1}x the line, more than the documented {bound}x");
    }
}

}
