//! `protocol/tests/conformance/registry.rs`: one `macro_rules!` that lists every generated type
//! by the JSON pointer of the schema it was generated from, and the message type that reads
//! each method union. The conformance suite (which goes through every type of the schema)
//! expands it. It is written next to the suite, not into the crate: users never build it.

use std::fmt::Write;

use super::Part;
use crate::ir::{Direction, Ir};

/// The macro's name.
pub const MACRO: &str = "for_each_generated_type";

pub fn emit_registry(ir: &Ir) -> Vec<Part> {
    let mut out = String::new();
    out.push_str(&format!(
        "/// Calls `$callback!` with every generated type, keyed by the JSON pointer of the schema it was\n\
         /// generated from, and the message type that reads each method union:\n\
         ///\n\
         /// ```text\n\
         /// $callback! {{\n\
         ///     stable {{ \"#/definitions/v2/Thread\" => codex_app_protocol::Thread, ... }}\n\
         ///     experimental {{ ... }} // only with the `experimental` feature\n\
         ///     messages {{ \"ClientRequest\" => codex_app_protocol::ClientMessage, ... }}\n\
         /// }}\n\
         /// ```\n\
         ///\n\
         /// For the conformance suite (`protocol/tests/conformance/main.rs`).\n\
         macro_rules! {MACRO} {{\n    ($callback:ident) => {{\n        $callback! {{\n"
    ));
    for experimental in [false, true] {
        out.push_str(if experimental { "            experimental {\n" } else { "            stable {\n" });
        // A type only releases before the newest had is not in the vendored schema (its
        // availability is keyed by its schema name).
        let retired = |d: &&crate::ir::TypeDef| ir.type_availability.get(&d.schema).is_some_and(|a| a.until.is_some());
        for def in ir.types.values().filter(|d| d.experimental == experimental && !retired(d)) {
            let _ = writeln!(out, "                {:?} => codex_app_protocol::{},", def.pointer, def.name);
        }
        out.push_str("            }\n");
    }
    out.push_str("            messages {\n");
    for direction in Direction::ALL {
        let message = match direction {
            Direction::ClientRequest | Direction::ClientNotification => "ClientMessage",
            Direction::ServerRequest | Direction::ServerNotification => "ServerMessage",
        };
        let _ = writeln!(out, "                {:?} => codex_app_protocol::{message},", direction.union_name());
    }
    out.push_str("            }\n        }\n    };\n}\n");
    vec![Part::Text(out)]
}
