//! How a codex release number is read and ordered: `major.minor.patch`, maybe with a
//! pre-release (`0.128.0-alpha.1`), ordered as semver orders them (by version core, a
//! pre-release before its release, pre-releases identifier by identifier; build metadata
//! ignored).
//!
//! The one statement of the order, shared as source: [`super::Release`] orders by it, and the
//! generator, which cannot depend on the crate it generates, includes this file with `#[path]`
//! (`codegen/src/history/mod.rs`) for every version it compares. Only `core`.

use std::cmp::Ordering;

/// A release number read: its version core and its pre-release, without its `-` (empty for a
/// release).
pub(crate) type Parts<'a> = ((u64, u64, u64), &'a str);

/// Reads `0.171.0`, `0.128.0-alpha.1` (a leading `v` and build metadata are allowed).
pub(crate) fn parse(text: &str) -> Option<Parts<'_>> {
    let text = text.strip_prefix('v').unwrap_or(text);
    let text = text.split_once('+').map_or(text, |(v, _)| v);
    let (core, pre) = text.split_once('-').unwrap_or((text, ""));
    let mut parts = core.split('.');
    let mut number = || -> Option<u64> {
        let p = parts.next()?;
        (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())).then(|| p.parse().ok()).flatten()
    };
    let (major, minor, patch) = (number()?, number()?, number()?);
    if parts.next().is_some() || (text.contains('-') && pre.is_empty()) {
        return None;
    }
    Some(((major, minor, patch), pre))
}

/// The order of two release numbers read by [`parse`].
pub(crate) fn order((core, pre): Parts<'_>, (other_core, other_pre): Parts<'_>) -> Ordering {
    core.cmp(&other_core).then_with(|| match (pre.is_empty(), other_pre.is_empty()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => pre_cmp(pre, other_pre),
    })
}

/// Semver's pre-release order: identifier by identifier, numbers numerically and before
/// words, a shorter list first when one is a prefix of the other.
fn pre_cmp(a: &str, b: &str) -> Ordering {
    let mut x = a.split('.');
    let mut y = b.split('.');
    loop {
        match (x.next(), y.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) => {
                let order = match (p.parse::<u64>(), q.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => p.cmp(q),
                };
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}
