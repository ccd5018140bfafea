//! The client's integration tests, in one test binary (`cargo test -p codex-app-client --test
//! it`): each file beside this one is a module of it, so the protocol crate is linked into one
//! test executable, not one per file. `autotests = false` in Cargo.toml: a new file under
//! `tests/` is compiled only once it is listed here.

// `common` writes this release's types (its turn helper): pinned like the tests that use it.
codex_app_client::protocol::__test_support::written_for_codex! { "0.171.0",
mod common;
mod scripted;
}
mod cancel;
mod embedding;
mod executable;
mod handshake;
mod memory;
mod misbehaving;
mod older_release;
mod real;
mod reconnect;
#[cfg(feature = "replay")]
mod replay;
mod structured;
mod tap_transcript;
#[cfg(feature = "tls")]
mod tls;
mod trace;
mod typed;
mod waiting;

/// The heap bytes in use by this test binary, counted by its allocator (the system's): what
/// the tests that measure memory read, where RSS also moves with the allocator's own choices.
pub static HEAP_IN_USE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

struct Counting;

// SAFETY: every call is the system allocator's, with the same arguments; the counter is only
// arithmetic on the sizes it was given. Exercised by every test of this binary.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        HEAP_IN_USE.fetch_add(layout.size(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: the caller's guarantees for `alloc` are `System.alloc`'s.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        HEAP_IN_USE.fetch_sub(layout.size(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: `ptr` came from this allocator, that is from `System`, with `layout`.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        HEAP_IN_USE.fetch_add(layout.size(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: the caller's guarantees for `alloc_zeroed` are `System.alloc_zeroed`'s.
        unsafe { std::alloc::System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        HEAP_IN_USE.fetch_add(new_size, std::sync::atomic::Ordering::Relaxed);
        HEAP_IN_USE.fetch_sub(layout.size(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: `ptr` came from `System` with `layout`; the caller's guarantees for
        // `new_size` are `System.realloc`'s.
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;
