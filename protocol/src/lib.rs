//! Typed protocol for `codex app-server`, generated from the JSON Schema of one codex release
//! ([`CODEX_VERSION`]).
//!
//! - Every schema definition is a Rust type at the crate root (`ThreadStartParams`,
//!   `ThreadItem`, ...), with serde names exactly as on the wire.
//! - Every method has a marker type that ties its name, params and response together:
//!   [`request`] (client to server), [`server_request`], [`notification`] (server to client),
//!   [`client_notification`]; see [`Request`] and [`Notification`].
//! - [`ClientRequest`], [`ServerRequest`], [`ServerNotification`] and [`ClientNotification`]
//!   are the messages of each direction, [`ClientResponse`] and [`ServerResponse`] their typed
//!   results. [`ServerMessage`] and [`ClientMessage`] decode and encode whole lines (and
//!   [`TypedServerMessage`] with responses typed by their request's method); see
//!   [`jsonrpc`] for the envelope and [`framing`] for reading NDJSON streams.
//! - Nothing is lost: a method, union arm or enum value this version does not know decodes to
//!   the type's `Unrecognized` variant and encodes back to the same JSON.
//! - With the `inspect` feature, `inspect::Inspect` walks a decoded value and reports what
//!   serde cannot show: `Unrecognized` variants and `Option<Option<T>>` members, each with its
//!   JSON path. [`side`] ties each side's request, notification and response enums together
//!   for code generic over them.
//! - The experimental API is behind the `experimental` feature, mirroring the server's
//!   `capabilities.experimentalApi` gate; with it, `ExperimentalApi` says which
//!   experimental surface a request uses before it is sent.
//!
//! # Decoding with serde
//!
//! [`Message::from_line`] decodes a line of either side. The four message enums also
//! implement serde's `Deserialize` from the message object, decoded the same way (one pass,
//! the same errors with their path), so they work with `serde_json::from_str`, `from_slice`,
//! `from_reader` and `from_value`:
//!
//! ```
//! use codex_app_protocol::{ClientRequest, RequestId, ServerNotification};
//!
//! let request: ClientRequest = serde_json::from_str(r#"{"id":7,"method":"thread/start","params":{}}"#)?;
//! assert!(matches!(&request, ClientRequest::ThreadStart { id: RequestId::Integer(7), .. }));
//!
//! let value = serde_json::json!({"method": "thread/archived", "params": {"threadId": "t"}});
//! let notification: ServerNotification = serde_json::from_value(value.clone())?;
//! assert_eq!(notification.method(), "thread/archived");
//! assert_eq!(serde_json::to_value(&notification)?, value);
//!
//! let request: ClientRequest = serde_json::from_value(serde_json::json!({"id": "a", "method": "thread/start", "params": {}}))?;
//! assert_eq!(request.id(), &RequestId::String("a".into()));
//!
//! // A notification is no request, and params that do not fit say where.
//! assert!(serde_json::from_str::<ClientRequest>(r#"{"method":"initialized"}"#).is_err());
//! let err = serde_json::from_str::<ServerNotification>(r#"{"method":"thread/archived","params":{"threadId":5}}"#).unwrap_err();
//! assert!(err.to_string().contains("params.threadId"), "{err}");
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! # `null` and absent members
//!
//! - A member the schema requires is a plain field; one it requires but allows to be `null` is
//!   an `Option` that is always written (`None` is `null`).
//! - An optional member is an `Option` that is written only when `Some`. An incoming `null`
//!   reads as `None` and so is written back as absent: for these members `null` and absent are
//!   the same value (the server treats them alike).
//! - Where a member's description gives `null` a meaning of its own ("omit to leave unchanged,
//!   set to `null` to clear"), it is an `Option<Option<T>>`: `None` is absent, `Some(None)` is
//!   an explicit `null`, `Some(Some(v))` is a value. Those three states round-trip exactly.
//! - `params: null` and absent `params` are the same; for a method without params, so is
//!   `params: {}` (codex reads the three alike), and such a method is written without `params`.
//!   A notification without params is read whatever its `params` hold, as codex reads it; what
//!   they held is not written back (the drift check reports it).
//!
//! So the one rule for comparing a message with its re-encoding: an object member whose value
//! is `null` equals an absent member, except where the type is `Option<Option<T>>`. The
//! [`roundtrip`] module is that rule (and the one for numbers) as code; the drift check, the
//! fuzz targets and the tests all compare with it.

//!
//! # What decoding keeps, and its limits
//!
//! - **Unknown methods and untyped results** are kept as their exact text ([`RawJson`]):
//!   they encode back byte for byte, numbers of any size included.
//! - **Unknown union arms and enum values** are kept in the type's `Unrecognized` variant.
//!   An untagged union picks the arm its schema picks (JSON type, required members, enum and
//!   const members, closed objects); a value no arm accepts as the schema says goes to the arm
//!   that accepts it with unknown enum values, then to the one whose members fit, so a value
//!   a later release added is kept and its error, if any, names the member.
//! - **Unknown members** of a struct are skipped (an open object, `additionalProperties`,
//!   keeps them), and so are envelope members other than those the schema gives the envelope:
//!   `id`, `method`, `params`, `result`, `error`, `jsonrpc`, a notification's `emittedAtMs`
//!   and a request's `trace` (a W3C trace context, [`jsonrpc::TraceContext`]), which are all
//!   kept and written back. `ErrorObject` keeps its unknown members. The drift check reports
//!   every skipped member as `unknown-field`; [`jsonrpc::Parts::parse`] keeps every envelope
//!   member as raw JSON.
//! - **A member given twice** keeps its last value everywhere (struct and envelope members,
//!   union tags, the key of an externally tagged union, the members of `error`), as
//!   `serde_json::Value` does; every occurrence must have the member's type. A union tag
//!   given again with another value, after the arm was chosen, is resolved by one linear,
//!   iterative pass over the text of `params` (or `result`, `error`) and a second decode.
//!   One exception: decoding a union type on its own (`serde_json::from_str::<ThreadStatus>`,
//!   not inside a message) reports such a tag as an error. codex itself does not read a
//!   client's message that gives a member of its envelope twice; the drift check reports one.
//! - **`"id": null`** is only an error response's (the server could not tell which request
//!   failed). A message with a method and a `null` id is an error, not a notification: a
//!   [`jsonrpc::DecodeError`] carries the method and (when there is one) the id, so the
//!   request can be answered with an error. codex reads a client's such message as a
//!   notification, and the drift check does so too.
//! - **`Value` members** (where the schema says "any": `config`, `inputSchema`, ...) hold
//!   numbers as `serde_json` does without its `arbitrary_precision` feature (which would
//!   change the build of every crate that uses `serde_json`): an integer outside 64 bits
//!   becomes the nearest `f64`. The drift check compares numbers by their text and reports it.
//! - **Nesting and stack**: what the crate keeps as values (`Value` members, the members of
//!   unknown union arms, `ErrorObject::data` and `extra`) decodes up to 128 levels deep
//!   (`serde_json`'s limit, which bounds the stack; counted from `params`, `result` or
//!   `error`, or from a union value the decoder buffers); deeper, the line is an error. What it skips or keeps as text decodes
//!   at any depth without recursion: an unknown member (skipped), the `params` of an unknown
//!   method, a result kept raw ([`RawJson`], [`Response`]). Typed members nest only as deep
//!   as the schema's types. Every decode, its fallbacks for members given twice included,
//!   runs in bounded stack (the tests decode lines tens of thousands of levels deep on a 256 KiB thread)
//!   and in time linear in the line.
//! - **Memory**: decoding a line costs a bounded multiple of its length. The worst case is
//!   JSON kept as `serde_json::Value`, whose every small object is a map node of some 600
//!   bytes: a line of `{"a":1}` objects peaks at 83 times the line in allocated
//!   heap (`protocol/tests/memory.rs`; a little more in resident memory) when they are in a
//!   `Value` member (`item/tool/call` `arguments`, `error.data`, ...) or in the members of
//!   an unknown union arm. The params of an unknown method, kept as text, take the size of
//!   the line (1 time); unknown members are skipped without a copy; typed members cost
//!   far less than `Value`s. [`framing::LineReader`] bounds the line
//!   ([`framing::DEFAULT_MAX_LINE_LEN`], 64 MiB, for `thread/read` of a long thread), so a
//!   hostile peer can make one decode take up to some 6 GiB. Where that matters, lower the
//!   limit with `with_max_line_len` (1 MiB: under 100 MiB), or read the envelope with
//!   [`jsonrpc::Parts::parse`], which keeps `params` and `result` as text (1 time), and
//!   decode the params of a method with `Value` members only when they are needed.
//! - **Re-encoding through `serde_json::Value`**: the parts the crate keeps as text (the
//!   params of an unknown method, a raw result: [`RawJson`], [`Response`]) encode back byte
//!   for byte with [`Message::to_line`] or `serde_json::to_string`, whatever they hold. But
//!   `serde_json::to_value` of such a message (and [`RawJson::to_value`]) parses that text
//!   into a `Value`, and fails on what a `Value` cannot hold: a number beyond `f64`
//!   (`1e400`), a string with a lone surrogate (`"\ud800"`), nesting deeper than 128
//!   levels. Encode to text (or compare texts) where such input is possible.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The integration tests (`tests/it.rs`), compiled into this crate's own unit-test build: this
// is how `codex-app-protocol-stable` tests the stable surface, in one build of the crate with
// its unit tests (a lib and a test binary on top of it would compile the sources twice more).
// `codex-app-protocol` itself builds `tests/it.rs` as an integration test, which sees the
// public API only, and has no unit-test build (`test = false`). The tests name the crate as
// users do: `codex_app_protocol::...`.
#[cfg(test)]
extern crate self as codex_app_protocol;
#[cfg(test)]
#[path = "../tests/it.rs"]
mod integration_tests;

pub mod availability;
// Which helpers the generated code calls depends on the schema it was generated from.
#[allow(dead_code)]
mod codec;
#[cfg(feature = "experimental")]
mod experimental;
pub mod framing;
#[cfg(feature = "inspect")]
pub mod inspect;
pub mod jsonrpc;
mod method;
pub mod path;
pub mod roundtrip;
pub mod side;
// Which macros (and presence modules) the generated code uses depends on the schema it was
// generated from.
#[allow(unused_macros, unused_imports, dead_code)]
mod wire_macros;
// The method tables' macros; which of their helpers a schema uses depends on its methods.
#[allow(unused_macros, unused_imports, dead_code)]
mod wire_methods;

/// Generated by `cargo xtask regen`; never edited by hand. Formatted by the generator
/// (prettyplease), not rustfmt: the `cfg_attr` keeps rustfmt out, and, unlike a plain
/// `#[rustfmt::skip]`, leaves the compiler no attribute to expand (after which the
/// `#[macro_export]` macros inside could not be named by path from this crate).
#[cfg_attr(rustfmt, rustfmt::skip)]
#[allow(
    // The `cfg_attr` above is the form that keeps rustfmt out without an attribute to expand.
    clippy::deprecated_cfg_attr,
    // Members the schema marks `@deprecated` are still read and written here.
    deprecated,
    clippy::large_enum_variant,
    // A schema without methods of a direction leaves its `match method` with the catch-all alone.
    clippy::match_single_binding,
    clippy::doc_lazy_continuation,
    clippy::doc_overindented_list_items,
    clippy::too_many_arguments
)]
mod generated {
    pub mod access;
    pub mod availability;
    pub mod methods;
    pub mod types;
}

#[cfg(feature = "experimental")]
pub use experimental::{experimental_error_message, ExperimentalApi, ExperimentalReason};

/// Test support, not API: what this workspace's tests (and those of crates built on this one)
/// use to tie tests to the codex release whose types they were written against. Hidden from
/// the docs, and named `__test_support` so that no one mistakes it for part of the protocol;
/// it may change in any release.
///
/// It lives in this crate, not a dev-only one, because `written_for_codex!` must compare the
/// release a test names with the releases of the range ([`crate::availability::releases`])
/// while the macro expands: the generator writes them into the macro as literals, next to the
/// types they match.
#[doc(hidden)]
pub mod __test_support {
    use crate::availability::FLOOR;
    use crate::CODEX_VERSION;

    /// Keeps the items after the version when that codex release is in the range this crate
    /// was generated for; otherwise one failing test says they were left out (see the
    /// generated `__written_for_codex!`).
    pub use crate::__test_support_written_for_codex as written_for_codex;

    /// The variable that, set to anything but empty or `0`, has the tests written for a codex
    /// release out of the range pass (and the traffic tests skip missing fixtures).
    pub const SKIP_PINNED_TESTS_ENV: &str = "CODEX_APP_SKIP_PINNED_TESTS";

    /// Whether [`SKIP_PINNED_TESTS_ENV`] is set (to anything but empty or `0`).
    pub fn skipping_pinned_tests() -> bool {
        std::env::var(SKIP_PINNED_TESTS_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
    }

    /// For a doc test written against the facts of one codex release, which cannot hold the
    /// items `written_for_codex!` keeps or replaces (a doc test is a `main`): whether that
    /// release is in the range this crate was generated for. Out of the range it panics with
    /// what [`tests_left_out`] says, or gives `false` when `CODEX_APP_SKIP_PINNED_TESTS` is
    /// set, so the doc test returns early: `# if !written_for("0.171.0") { return; }`.
    pub fn written_for(release: &str) -> bool {
        if crate::availability::releases().contains(&release) {
            return true;
        }
        if let Err(why) = tests_left_out(release) {
            panic!("{why}");
        }
        false
    }

    /// The body of the test that `written_for_codex!` puts in place of tests written for a
    /// codex release out of the range: an error that says which release they were written for
    /// and which range the crate is generated for (the test fails with it), or nothing when
    /// `CODEX_APP_SKIP_PINNED_TESTS` is set (to anything but empty or `0`).
    pub fn tests_left_out(written_for: &str) -> Result<(), String> {
        if skipping_pinned_tests() {
            return Ok(());
        }
        Err(format!(
            "tests written against the types of codex {written_for} are left out: this crate is generated for codex \
             {FLOOR} to {CODEX_VERSION}, which does not include it. Check them against the types of a release of the \
             range and change the version in their `written_for_codex!`, or set {SKIP_PINNED_TESTS_ENV}=1 to skip them"
        ))
    }
}

/// `__test_support::written_for_codex!`: the generated `__written_for_codex!` (whose releases
/// are literals the generator writes), under a name this crate can re-export from
/// `__test_support` (a `#[macro_export]` macro of the generated module cannot be).
#[doc(hidden)]
#[macro_export]
macro_rules! __test_support_written_for_codex {
    ($version:tt, $($item:tt)*) => {
        $crate::__written_for_codex! { $version, $($item)* }
    };
}

pub use generated::methods::*;
pub use generated::types::*;
pub use jsonrpc::{
    ClientMessage, ErrorObject, ErrorResponse, Message, RawJson, Response, ServerMessage, TypedClientMessage,
    TypedResponse, TypedServerMessage,
};
pub use method::{Notification, NotificationVisitor, Request, RequestVisitor};
