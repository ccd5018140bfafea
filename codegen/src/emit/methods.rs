//! The method tables: per direction, one invocation of the protocol crate's `wire_requests!`
//! or `wire_notifications!` with one row per method (its docs, its gate, variant name, wire
//! name, params, response and, for notifications, the members that route it). The macros
//! write the marker types, the message and response enums, decoding, encoding, visitors, the
//! walks, `experimental_reason` and the accessors from those rows, so a method a release adds
//! is one row.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use quote::quote;

use super::access::Routes;
use super::docs::{doc_comment, doc_lines, EXPERIMENTAL_GATE};
use super::Part;
use crate::ir::*;
use crate::render;
use crate::settings::Settings;
use crate::Error;

pub fn emit_methods(ir: &Ir, codex_version: &str, settings: &Settings) -> Result<Vec<Part>, Error> {
    if let Some(f) = ir.notification_envelope.iter().find(|f| f.presence() != Presence::Optional) {
        return Err(Error::new(
            "#/definitions/ServerNotification/properties",
            format!("envelope member `{}` must be optional", f.wire),
        ));
    }
    let mut tables = String::new();
    for direction in Direction::ALL {
        tables.push('\n');
        tables.push_str(&table(ir, direction, settings));
    }
    // Import only what the rows name.
    let uses = |word: &str| tables.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w == word);
    let value = uses("Value").then(|| quote! { use serde_json::Value; });
    let map = uses("BTreeMap").then(|| quote! { use std::collections::BTreeMap; });
    // `types.rs` is imported when a row names one of its types (a bundle without methods, or
    // whose methods take and answer only JSON values, names none); docs and the tables' own
    // headers do not count.
    let row_words: std::collections::BTreeSet<&str> = tables
        .lines()
        .map(str::trim_start)
        .filter(|line| !line.starts_with("///") && !line.starts_with("pub ") && !line.starts_with("impl "))
        .flat_map(|line| line.split(|c: char| !(c.is_alphanumeric() || c == '_')))
        .collect();
    let types = ir.types.keys().any(|name| row_words.contains(name.as_str())).then(|| quote! { use super::types::*; });
    // The releases of the range: tests written for any of them are kept.
    let releases: Vec<&str> =
        if ir.releases.is_empty() { vec![codex_version] } else { ir.releases.iter().map(String::as_str).collect() };
    let head = quote! {
        #map
        #value

        #types
        use crate::wire_methods::{wire_notifications, wire_requests};

        /// The codex release whose schema this crate was generated from.
        pub const CODEX_VERSION: &str = #codex_version;

    };
    Ok(vec![Part::Tokens(head), Part::Text(written_for_codex(&releases)), Part::Text(tables)])
}

/// `__written_for_codex!`, one arm a release (written out: a formatter would spread each arm
/// over three lines).
fn written_for_codex(releases: &[&str]) -> String {
    let mut arms = String::new();
    for release in releases {
        arms.push_str(&format!("    ({release:?}, $($item:item)*) => {{ $($item)* }};\n"));
    }
    format!(
        r#"/// Test support, not API: use it as `codex_app_protocol::__test_support::written_for_codex!`.
///
/// Keeps the items after the version when that codex release is one of the range this
/// crate was generated for (`availability::releases`); otherwise puts in their place
/// one test that fails and says why.
///
/// For tests written against the types of one release, which name types, members and
/// variants another release may not have. A release of the range keeps them: what a
/// later release removed stays in the types (marked with its last release), so they
/// still compile, and `cargo xtask upgrade` names those that use what the newest
/// release broke. After `cargo xtask regen` from a release outside the range (an older
/// one) they still compile, and the failing test asks for them to be checked against
/// the new types (and the version they name changed). Set
/// `CODEX_APP_SKIP_PINNED_TESTS=1` to have it pass instead.
///
/// ```
/// codex_app_protocol::__test_support::written_for_codex! {{ "0.0.0-not-this-one",
///     fn uses_types_of_another_release() {{}}
/// }}
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __written_for_codex {{
{arms}    ($version:literal, $($item:item)*) => {{
        #[test]
        fn written_for_a_codex_release_out_of_range() -> ::std::result::Result<(), ::std::string::String> {{
            $crate::__test_support::tests_left_out($version)
        }}
    }};
}}
"#
    )
}

/// The names and docs of one direction's items.
struct Names {
    enum_name: &'static str,
    enum_doc: &'static str,
    module: &'static str,
    module_doc: &'static str,
    response: Option<&'static str>,
}

fn names(direction: Direction) -> Names {
    match direction {
        Direction::ClientRequest => Names {
            enum_name: "ClientRequest",
            enum_doc: "A request the client sends to the server.",
            module: "request",
            module_doc: "Marker types for the requests the client sends, one per method.",
            response: Some("ClientResponse"),
        },
        Direction::ServerRequest => Names {
            enum_name: "ServerRequest",
            enum_doc: "A request the server sends to the client (approvals, tool calls, ...).",
            module: "server_request",
            module_doc: "Marker types for the requests the server sends, one per method.",
            response: Some("ServerResponse"),
        },
        Direction::ServerNotification => Names {
            enum_name: "ServerNotification",
            enum_doc: "A notification the server sends to the client.",
            module: "notification",
            module_doc: "Marker types for the notifications the server sends, one per method.",
            response: None,
        },
        Direction::ClientNotification => Names {
            enum_name: "ClientNotification",
            enum_doc: "A notification the client sends to the server.",
            module: "client_notification",
            module_doc: "Marker types for the notifications the client sends, one per method.",
            response: None,
        },
    }
}

/// One direction's invocation: the header, then one row per method.
fn table(ir: &Ir, direction: Direction, settings: &Settings) -> String {
    let n = names(direction);
    let methods = ir.methods(direction);
    let mut out = String::new();
    let macro_name = if direction.is_request() { "wire_requests" } else { "wire_notifications" };
    let _ = writeln!(out, "{macro_name}! {{");
    let _ = writeln!(out, "    /// {}\n    pub enum {};", n.enum_doc, n.enum_name);
    let _ = writeln!(out, "    /// {}\n    pub mod {};", n.module_doc, n.module);
    if let Some(response) = n.response {
        let _ = writeln!(
            out,
            "    /// The `result` of a response to a [`{}`], typed by the request's method.\n    pub enum {response};",
            n.enum_name
        );
    }
    // Only the client's requests are checked against the experimental gate.
    let shared = (direction == Direction::ClientRequest).then(|| {
        out.push_str("    impl ExperimentalApi;\n");
        shared_params(ir)
    });
    if !direction.is_request() {
        let envelope: &[Field] =
            if direction == Direction::ServerNotification { &ir.notification_envelope } else { &[] };
        if envelope.is_empty() {
            out.push_str("    envelope {}\n");
        } else {
            out.push_str("    envelope {\n");
            for f in envelope {
                out.push_str(&doc_comment(&doc_lines(f.doc.as_deref(), f.experimental), "        "));
                let _ = writeln!(out, "        {}: {} = {:?},", f.rust, render::ty(&f.ty), f.wire);
            }
            out.push_str("    }\n");
        }
    }
    out.push_str("    methods {\n");
    let routes = (direction == Direction::ServerNotification).then(|| Routes::new(ir, settings));
    let notes = super::types::Notes(ir);
    for m in methods {
        out.push_str(&doc_comment(&doc_lines(m.doc.as_deref(), m.experimental), "        "));
        out.push_str("        ");
        out.push_str(&notes.key(&crate::history::keys::method(direction, &m.wire)));
        if m.experimental {
            let _ = write!(out, "{EXPERIMENTAL_GATE} ");
        }
        let _ = write!(out, "{} = {:?} {}", m.rust, m.wire, params_cell(m, shared.as_ref()));
        if let Some(response) = &m.response {
            let _ = write!(out, " -> {}", render::ty(response));
        }
        if let Some(routes) = &routes {
            for (accessor, path) in routes.of(m) {
                let _ = write!(out, " {accessor}({path})");
            }
        }
        out.push_str(",\n");
    }
    out.push_str("    }\n}\n");
    out
}

/// `(required T)`, `(optional T)` or `()`; `, shared` after a client request's params type
/// that gets no `ExperimentalApi` impl of its own (see [`shared_params`]).
fn params_cell(m: &Method, shared: Option<&BTreeMap<String, usize>>) -> String {
    let (kind, ty) = match &m.params {
        Params::None | Params::Null => return "()".to_owned(),
        Params::Required(t) => ("required", t),
        Params::Optional(t) => ("optional", t),
    };
    let mark = match (shared, ty) {
        (Some(uses), Ty::Named(n)) if uses.get(n).copied().unwrap_or(0) > 1 => ", shared",
        (Some(_), Ty::Named(_)) => "",
        // Not a type of its own (a map, a string): no impl.
        (Some(_), _) => ", shared",
        (None, _) => "",
    };
    format!("({kind} {}{mark})", render::ty(ty))
}

/// For each client request params type, how many methods take it; an alias counts as
/// shared (it is not a type of its own to implement the trait for).
fn shared_params(ir: &Ir) -> BTreeMap<String, usize> {
    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    for m in &ir.client_requests {
        if let Some(Ty::Named(params)) = m.params.ty() {
            let count = uses.entry(params.clone()).or_default();
            *count += if matches!(ir.types.get(params).map(|d| &d.kind), Some(TypeKind::Alias(_))) { 2 } else { 1 };
        }
    }
    uses
}
