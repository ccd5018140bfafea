//! The rule of what the availability tables lead to: a type has something to look at when it
//! has something wanted itself, or a member that leads to a type that has. The generator keeps
//! such types in the tables (what any question may want: an availability, the experimental
//! API), and a check keeps, of those, the ones its own question wants (`check::Plans`).
//!
//! The one statement of the rule, shared as source: the generator cannot depend on the crate
//! it generates, so `codegen/src/emit/availability.rs` includes this file with `#[path]`. Only
//! `core`.

/// Marks every row that leads to a marked one. `marked` has one flag per row (it has something
/// wanted itself); `children(row)` gives the rows its members lead to. Types may be recursive:
/// grown until nothing changes.
pub(crate) fn lead_to<I: IntoIterator<Item = usize>>(marked: &mut [bool], children: impl Fn(usize) -> I) {
    loop {
        let mut grew = false;
        for row in 0..marked.len() {
            if !marked[row] && children(row).into_iter().any(|c| marked[c]) {
                marked[row] = true;
                grew = true;
            }
        }
        if !grew {
            return;
        }
    }
}
