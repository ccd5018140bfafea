//! A line from the client: `ClientMessage` (results raw) and `TypedClientMessage` (results
//! typed by the method of a server request the id picks), and the line's `deep_variants`,
//! on a 512 KiB stack, and the availability walks of its params and result. See
//! `codex_app_fuzz::check_line` and `check_availability`.
#![no_main]

use codex_app_fuzz::{check_availability, check_line, deep_variants, method_for, methods, on_small_stack};
use codex_app_protocol::{ClientNotification, ClientRequest, Response, ServerResponse, TypedResponse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else { return };
    let line = line.to_owned();
    // On a small stack (decode must not need more), the line and its variants with a
    // repeated union tag next to deep nesting.
    on_small_stack(move || {
        for line in std::iter::once(line.clone()).chain(deep_variants(&line)) {
            check_line::<ClientRequest, ClientNotification, Response>(&line, |_| None);
            check_line::<ClientRequest, ClientNotification, TypedResponse<ServerResponse>>(&line, |id| {
                method_for(methods("ServerRequest"), id)
            });
            check_availability(&line, |id| method_for(methods("ServerRequest"), id));
        }
    });
});
