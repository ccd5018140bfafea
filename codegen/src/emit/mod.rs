//! Tokens from the IR. One file of output per submodule:
//! `types.rs` (every named type, one wire-macro invocation each), `methods.rs` (one table of
//! methods per direction, one row per method: markers, message and response enums,
//! `experimental_reason` and the accessors expand from it), `access.rs` (`id()` on the item
//! unions the notifications' routes read; `access` also finds the routes the rows state),
//! `handler.rs` (the client's `ServerRequestHandler`, written into `client/src/generated/`),
//! `registry.rs` (a macro listing every type by its schema pointer, written next to the
//! conformance suite in `protocol/tests/`, not into the crate).

mod access;
mod availability;
mod docs;
mod experimental;
mod handler;
mod methods;
mod registry;
mod types;

use proc_macro2::TokenStream;

use crate::ir::Ir;
use crate::settings::Settings;
use crate::Error;

/// A piece of a generated file, in order.
pub enum Part {
    /// Items as tokens, laid out by prettyplease.
    Tokens(TokenStream),
    /// Source text written as it is: the invocations of the protocol crate's wire macros
    /// (`wire_struct!`, `wire_enum!`), which prettyplease would put on one line.
    Text(String),
}

/// Where the protocol crate's generated modules go, relative to the workspace root.
pub const GENERATED_DIR: &str = "protocol/src/generated";

/// Every folder that holds only generated files (relative to the workspace root): a file
/// there that the generator no longer writes is removed by regen, and reported by `--check`.
pub const GENERATED_DIRS: &[&str] = &[GENERATED_DIR, CLIENT_GENERATED_DIR];

/// Where the client's generated modules go, relative to the workspace root.
pub const CLIENT_GENERATED_DIR: &str = "client/src/generated";

/// The generator's sources outside `codegen/src`, relative to the workspace root: the protocol
/// crate's files it includes with `#[path]`: the rule of which types lead to something a
/// check looks at (in `availability.rs`), and the order of release numbers and the
/// availability type (in `history/mod.rs`). The digest of what the history is folded from
/// covers them with the generator's own.
pub const SHARED_SOURCES: &[&str] = &[
    "protocol/src/availability/reach.rs",
    "protocol/src/availability/release_order.rs",
    "protocol/src/availability/span.rs",
];

/// `(path relative to the workspace root, parts)` for each generated file: the crate's modules
/// in [`GENERATED_DIR`], the client's server-request handler in [`CLIENT_GENERATED_DIR`], and
/// the conformance suite's type table next to the suite.
pub fn emit(ir: &Ir, codex_version: &str, settings: &Settings) -> Result<Vec<(&'static str, Vec<Part>)>, Error> {
    Ok(vec![
        ("protocol/src/generated/types.rs", types::emit_types(ir)?),
        ("protocol/src/generated/methods.rs", methods::emit_methods(ir, codex_version, settings)?),
        ("protocol/src/generated/access.rs", vec![Part::Tokens(access::emit_access(ir, settings)?)]),
        ("protocol/src/generated/availability.rs", availability::emit_availability(ir, codex_version)?),
        ("client/src/generated/handler.rs", vec![Part::Tokens(handler::emit_handler(ir, codex_version)?)]),
        ("protocol/tests/conformance/registry.rs", registry::emit_registry(ir)),
    ])
}

#[cfg(test)]
mod tests {
    use std::path::{Component, Path, PathBuf};

    /// Every `#[path]` module of the generator is one of [`super::SHARED_SOURCES`], and each of
    /// them is included.
    #[test]
    fn shared_sources_are_the_path_modules() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let mut included = Vec::new();
        let mut dirs = vec![root.join("codegen/src")];
        while let Some(dir) = dirs.pop() {
            for path in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                for line in std::fs::read_to_string(&path).unwrap().lines() {
                    let Some(target) = line.trim().strip_prefix("#[path = \"").and_then(|l| l.strip_suffix("\"]"))
                    else {
                        continue;
                    };
                    included.push(
                        normal(&dir.join(target)).strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"),
                    );
                }
            }
        }
        included.sort();
        assert_eq!(included, super::SHARED_SOURCES);
    }

    /// `a/b/../c` as `a/c`.
    fn normal(path: &Path) -> PathBuf {
        let mut out = PathBuf::new();
        for part in path.components() {
            match part {
                Component::ParentDir => {
                    out.pop();
                }
                other => out.push(other),
            }
        }
        out
    }
}
