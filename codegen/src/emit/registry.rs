//! `registry.rs`: one `macro_rules!` that lists every generated type by the JSON pointer of
//! the schema it was generated from, and the message type that reads each method union. Tests
//! that go through every type of the schema (the conformance suite) expand it; a macro that
//! nothing expands costs nothing to build, so users do not pay for it.

use std::fmt::Write;

use super::Part;
use crate::ir::{Direction, Ir};

/// The macro's name (exported at the protocol crate's root).
pub const MACRO: &str = "__for_each_generated_type";

pub fn emit_registry(ir: &Ir) -> Vec<Part> {
    let mut out = String::new();
    out.push_str(&format!(
        "/// Calls `$callback!` with every generated type, keyed by the JSON pointer of the schema it was\n\
         /// generated from, and the message type that reads each method union:\n\
         ///\n\
         /// ```text\n\
         /// $callback! {{\n\
         ///     stable {{ \"#/definitions/v2/Thread\" => $crate::Thread, ... }}\n\
         ///     experimental {{ ... }} // only with the `experimental` feature\n\
         ///     messages {{ \"ClientRequest\" => $crate::ClientMessage, ... }}\n\
         /// }}\n\
         /// ```\n\
         ///\n\
         /// For tests that go through every type of the schema (`protocol/tests/conformance.rs`).\n\
         #[doc(hidden)]\n\
         #[macro_export]\n\
         macro_rules! {MACRO} {{\n    ($callback:ident) => {{\n        $callback! {{\n"
    ));
    for experimental in [false, true] {
        out.push_str(if experimental { "            experimental {\n" } else { "            stable {\n" });
        for def in ir.types.values().filter(|d| d.experimental == experimental) {
            let _ = writeln!(out, "                {:?} => $crate::{},", def.pointer, def.name);
        }
        out.push_str("            }\n");
    }
    out.push_str("            messages {\n");
    for direction in Direction::ALL {
        let message = match direction {
            Direction::ClientRequest | Direction::ClientNotification => "ClientMessage",
            Direction::ServerRequest | Direction::ServerNotification => "ServerMessage",
        };
        let _ = writeln!(out, "                {:?} => $crate::{message},", direction.union_name());
    }
    out.push_str("            }\n        }\n    };\n}\n");
    vec![Part::Text(out)]
}
