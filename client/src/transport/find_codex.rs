//! Finding the codex binary: the one rule, shared as source by the client
//! (`transport::stdio::find_codex`) and `xtask` (which must not build the protocol crate, so
//! it includes this file with `#[path]` rather than depending on the client). Only `std`.

use std::path::{Path, PathBuf};

/// Where `scripts/install-codex.sh` puts the pinned codex, relative to the workspace root.
pub const PINNED: &str = ".codex-bin/node_modules/.bin/codex";

/// How a binary was found, for the log line that names the program started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// The path the caller gave.
    Explicit,
    /// `$CODEX_BIN`.
    Env,
    /// The workspace's pinned install ([`PINNED`] under the root the caller named).
    Pinned,
    /// `codex` in a directory of `PATH`.
    Path,
}

/// The codex binary: `explicit`, else `$CODEX_BIN` (when not empty), else [`PINNED`] under
/// `workspace` (only the workspace's own tools name one: the library passes `None` and never
/// looks in the current directory or its parents), else `codex` in one of the absolute
/// directories of `PATH` (a relative entry, such as an empty one, would mean the current
/// directory and is skipped). `None` when there is none.
pub fn find_codex_from(explicit: Option<&Path>, workspace: Option<&Path>) -> Option<(PathBuf, Found)> {
    if let Some(p) = explicit {
        return Some((p.to_owned(), Found::Explicit));
    }
    if let Some(p) = std::env::var_os("CODEX_BIN").filter(|p| !p.is_empty()) {
        return Some((PathBuf::from(p), Found::Env));
    }
    if let Some(pinned) = workspace.map(|root| root.join(PINNED)).filter(|p| p.is_file()) {
        return Some((pinned, Found::Pinned));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("codex"))
        .find(|p| p.is_file())
        .map(|p| (p, Found::Path))
}
