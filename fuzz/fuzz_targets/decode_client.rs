//! A line from the client: `ClientMessage` (results raw) and `TypedClientMessage` (results
//! typed by the method of a server request the id picks). See `codex_app_fuzz::check_line`.
#![no_main]

use codex_app_fuzz::{check_line, method_for, methods};
use codex_app_protocol::{ClientNotification, ClientRequest, Response, ServerResponse, TypedResponse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else { return };
    check_line::<ClientRequest, ClientNotification, Response>(line, |_| None);
    check_line::<ClientRequest, ClientNotification, TypedResponse<ServerResponse>>(line, |id| method_for(methods("ServerRequest"), id));
});
