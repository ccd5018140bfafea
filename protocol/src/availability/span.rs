//! [`Availability`], the one definition of when something is in codex, shared as source: the
//! crate's tables and answers hold releases as `&'static str` (the default), and the generator,
//! which cannot depend on the crate it generates, includes this file with `#[path]`
//! (`codegen/src/history/mod.rs`) and holds them as `String`s. Only the type: what each side
//! does with it is its own (the generator's history files, for one).

/// When something is in codex: since a release, and, when a later release removed it, until
/// the last release that had it. Versions are written as codex writes them (`0.171.0`).
///
/// `V` is how a release is held: `&'static str`, the default, in everything this crate
/// answers; the generator holds the same facts as `String`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Availability<V = &'static str> {
    /// The first release of the supported range that has it (the range's oldest release, its
    /// floor: every release of the range has it, and maybe older ones too).
    pub since: V,
    /// The last release that had it, when a later one removed it.
    pub until: Option<V>,
    /// A member the newest release always sends: the first release from which every release
    /// does (an older one may leave it out, so the member is optional in the types).
    pub always_since: Option<V>,
}
