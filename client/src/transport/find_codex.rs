//! Finding the codex binary: the one rule, shared as source by the client
//! (`transport::stdio::find_codex`) and `xtask` (which must not build the protocol crate, so
//! it includes this file with `#[path]` rather than depending on the client). Only `std`.

use std::path::{Path, PathBuf};

/// Where `scripts/install-codex.sh` puts the pinned codex, relative to a project root.
pub const PINNED: &str = ".codex-bin/node_modules/.bin/codex";

/// The codex binary: `explicit`, else `$CODEX_BIN` (when not empty), else [`PINNED`] in
/// `search_from` or one of its ancestors, else `codex` on `PATH`. `None` when there is none.
pub fn find_codex_from(explicit: Option<&Path>, search_from: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_owned());
    }
    if let Some(p) = std::env::var_os("CODEX_BIN").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    if let Some(pinned) =
        search_from.into_iter().flat_map(Path::ancestors).map(|dir| dir.join(PINNED)).find(|p| p.is_file())
    {
        return Some(pinned);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("codex")).find(|p| p.is_file())
}
