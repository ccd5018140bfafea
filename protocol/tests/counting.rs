//! The test binary's allocator: the system's, counting per thread the bytes and the blocks in
//! use and the peak of the bytes. Per thread, so the other tests of this binary, running at
//! the same time on their own threads, do not change a test's counts (a decode allocates and
//! frees on the caller's thread). `memory.rs` reads the peak, `leaks.rs` the bytes and blocks.

// Both readers are written for one codex release (`written_for_codex!`): a crate generated for a
// range without it leaves them out, and these functions with no caller.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    // `const` and without a destructor: reading them never allocates, so the allocator can.
    static BYTES: Cell<isize> = const { Cell::new(0) };
    static BLOCKS: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

/// Adds `bytes` and `blocks` to this thread's counts (a block freed on another thread than
/// the one that allocated it makes one count lower and the other higher).
fn count(bytes: isize, blocks: isize) {
    let _ = BYTES.try_with(|current| {
        let now = current.get().wrapping_add(bytes);
        current.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
    let _ = BLOCKS.try_with(|current| current.set(current.get().wrapping_add(blocks)));
}

// SAFETY: every call is passed on to `System` with the same arguments, so `Counting` keeps
// `System`'s contract; the counting itself never allocates (const thread-locals without a
// destructor, `try_with` during a thread's teardown). `realloc` is `GlobalAlloc`'s default,
// through these two. Exercised by every test of this binary.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize, 1);
        // SAFETY: the caller's guarantees for `alloc` are `System.alloc`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize), -1);
        // SAFETY: `ptr` was allocated by `alloc` above, by `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// This thread's bytes and blocks in use.
pub fn in_use() -> (isize, isize) {
    (BYTES.with(Cell::get), BLOCKS.with(Cell::get))
}

/// Starts a peak at the bytes in use now; returns them.
pub fn start_peak() -> isize {
    let now = BYTES.with(Cell::get);
    PEAK.with(|peak| peak.set(now));
    now
}

/// This thread's peak of bytes in use since [`start_peak`].
pub fn peak() -> isize {
    PEAK.with(Cell::get)
}
