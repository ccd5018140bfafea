//! Tokens from the IR. One file of output per submodule:
//! `types.rs` (every named type), `methods.rs` (markers, message and response enums),
//! `experimental.rs` (`ExperimentalApi` impls, compiled only with the `experimental` feature).

mod docs;
mod experimental;
mod methods;
mod types;

use proc_macro2::TokenStream;

use crate::ir::Ir;
use crate::Error;


/// `(file name, tokens)` for each generated file.
pub fn emit(ir: &Ir, codex_version: &str) -> Result<Vec<(&'static str, TokenStream)>, Error> {
    Ok(vec![
        ("types.rs", types::emit_types(ir)?),
        ("methods.rs", methods::emit_methods(ir, codex_version)?),
        ("experimental.rs", experimental::emit_experimental(ir)?),
    ])
}
