//! A line from the server: `ServerMessage` (results raw) and `TypedServerMessage` (results
//! typed by the method of a request the id picks). See `codex_app_fuzz::check_line`.
#![no_main]

use codex_app_fuzz::{check_line, method_for, methods};
use codex_app_protocol::{ClientResponse, Response, ServerNotification, ServerRequest, TypedResponse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else { return };
    check_line::<ServerRequest, ServerNotification, Response>(line, |_| None);
    check_line::<ServerRequest, ServerNotification, TypedResponse<ClientResponse>>(line, |id| method_for(methods("ClientRequest"), id));
});
