//! [`Availability`], the one definition of when something is in codex, shared as source: the
//! crate's tables and answers hold releases as `&'static str` (the default), and the generator,
//! which cannot depend on the crate it generates, includes this file with `#[path]`
//! (`codegen/src/history/mod.rs`) and holds them as `String`s, which it reads from and writes
//! to `vendor-schemas/history.json` with serde. Only the type: what each side does with it is
//! its own.

use serde::{Deserialize, Serialize};

/// When something is in codex: since a release, and, when a later release removed it, until
/// the last release that had it. Versions are written as codex writes them (`0.171.0`).
///
/// Serialized as `{"since": .., "until": .., "always_since": ..}`, the members that are `None`
/// left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Availability<V = &'static str> {
    /// The first release of the supported range that has it (the range's oldest release, its
    /// floor: every release of the range has it, and maybe older ones too).
    pub since: V,
    /// The last release that had it, when a later one removed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<V>,
    /// A member the newest release always sends: the first release from which every release
    /// does (an older one may leave it out, so the member is optional in the types).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always_since: Option<V>,
}
