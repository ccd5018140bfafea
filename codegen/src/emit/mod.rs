//! Tokens from the IR. One file of output per submodule:
//! `types.rs` (every named type), `methods.rs` (markers, message and response enums),
//! `experimental.rs` (`ExperimentalApi` impls, compiled only with the `experimental` feature),
//! `access.rs` (accessors a client routes and answers with: a notification's thread, turn and
//! item, a request's typed result out of the response enum),
//! `registry.rs` (a macro listing every type by its schema pointer, written next to the
//! conformance suite in `protocol/tests/`, not into the crate).

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

/// Where the crate's generated modules go, relative to the protocol crate.
pub const GENERATED_DIR: &str = "src/generated";

/// `(path relative to the protocol crate, parts)` for each generated file: the crate's modules
/// in [`GENERATED_DIR`], and the conformance suite's type table next to the suite.
pub fn emit(ir: &Ir, codex_version: &str) -> Result<Vec<(&'static str, Vec<Part>)>, Error> {
    Ok(vec![
        ("src/generated/types.rs", types::emit_types(ir)?),
        ("src/generated/methods.rs", vec![Part::Tokens(methods::emit_methods(ir, codex_version)?)]),
        ("src/generated/experimental.rs", vec![Part::Tokens(experimental::emit_experimental(ir)?)]),
        ("src/generated/access.rs", vec![Part::Tokens(access::emit_access(ir)?)]),
        ("tests/conformance/registry.rs", registry::emit_registry(ir)),
    ])
}
