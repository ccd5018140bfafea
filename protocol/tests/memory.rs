//! Peak heap of a decode, as a multiple of the line (issue 21, point 5): the figures the crate
//! docs state ("What decoding keeps, and its limits", **Memory**). The counting allocator
//! counts per thread, so the other tests of this binary, running at the same time on their own
//! threads, do not change the figures (a decode runs on the caller's thread).
//!
//! `cargo test -p codex-app-protocol --release --test it memory -- --nocapture` prints them.
//!
//! Written against the types of the vendored codex release (see `pinned_to_codex!`).

codex_app_protocol::__test_support::pinned_to_codex! { "0.171.0",

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use codex_app_protocol::ServerMessage;

struct Counting;

thread_local! {
    // `const` and without a destructor: reading them never allocates, so the allocator can.
    static CURRENT: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

/// Adds `delta` to this thread's count (a block freed on another thread than the one that
/// allocated it makes one count lower and the other higher; a decode frees its own).
fn count(delta: isize) {
    let _ = CURRENT.try_with(|current| {
        let now = current.get().wrapping_add(delta);
        current.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The peak heap of decoding `line` on this thread (the decoded message kept until the end),
/// over its length.
fn factor(line: &str) -> f64 {
    let before = CURRENT.with(Cell::get);
    PEAK.with(|peak| peak.set(before));
    let message = ServerMessage::from_line(line).unwrap_or_else(|e| panic!("{e}"));
    let peak = PEAK.with(Cell::get) - before;
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
