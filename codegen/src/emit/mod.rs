//! Tokens from the IR. One file of output per submodule:
//! `types.rs` (every named type), `methods.rs` (markers, message and response enums),
//! `experimental.rs` (`ExperimentalApi` impls, compiled only with the `experimental` feature),
//! `access.rs` (accessors a client routes and answers with: a notification's thread, turn and
//! item, a request's typed result out of the response enum),
//! `registry.rs` (a macro listing every type by its schema pointer, for the conformance tests).

mod access;
mod docs;
mod experimental;
mod methods;
mod registry;
mod types;

use proc_macro2::TokenStream;

use crate::ir::Ir;
use crate::Error;

/// A piece of a generated file, in order.
pub enum Part {
    /// Items as tokens, laid out by prettyplease.
    Tokens(TokenStream),
    /// Source text written as it is: the invocations of the protocol crate's wire macros
    /// (`wire_struct!`, `wire_enum!`), which prettyplease would put on one line.
    Text(String),
}

/// `(file name, parts)` for each generated file.
pub fn emit(ir: &Ir, codex_version: &str) -> Result<Vec<(&'static str, Vec<Part>)>, Error> {
    Ok(vec![
        ("types.rs", types::emit_types(ir)?),
        ("methods.rs", vec![Part::Tokens(methods::emit_methods(ir, codex_version)?)]),
        ("experimental.rs", vec![Part::Tokens(experimental::emit_experimental(ir)?)]),
        ("access.rs", vec![Part::Tokens(access::emit_access(ir)?)]),
        ("registry.rs", registry::emit_registry(ir)),
    ])
}
