//! Which codex releases have which part of the protocol.
//!
//! The crate is generated for a range of codex releases, from [`FLOOR`] to
//! [`crate::CODEX_VERSION`] ([`releases`] lists them): every message of every release of the
//! range decodes. What is not in every release of the range says so: each marker type has
//! `SINCE` and `UNTIL` (`request::ThreadSearch::SINCE`), the doc comment of each member, enum
//! value and union arm says since when (or until when) codex has it, and this module answers
//! the same by name:
//!
//! - [`method`]: a method of either direction by its wire name (`thread/search`);
//! - [`member`]: `Type.member` (wire names: `ThreadListParams.includedThreadIds`) or
//!   `Type::value` for an enum value or union arm;
//! - [`at`]: a JSON path in the params of a method (`thread/list`, `params.includedThreadIds`);
//! - [`Check`]: what a message uses that a given release does not have. An older codex
//!   silently ignores a params member it does not know (and refuses an enum value it does not
//!   know), so a client checks this before sending (`codex-app-client` does);
//! - [`experimental`]: which of what a message carries is codex's experimental API, in a build
//!   without the `experimental` feature too.
//!
//! A release is compared as semver ([`Release`]), pre-releases before their release.

use std::cmp::Ordering;
use std::fmt;

mod check;
pub mod experimental;
mod reach;
mod release_order;
mod span;

pub use crate::generated::availability::FLOOR;
use crate::generated::availability::{METHODS, OWNERS, RELEASES};
pub use check::Check;
use check::{Found, Plans};
pub use span::Availability;

impl Availability {
    /// Whether `release` has it. A release older than [`FLOOR`] is not known to have anything
    /// the range added, and is taken to have what the floor has.
    pub fn in_release(&self, release: &Release) -> bool {
        let after_since = self.since == FLOOR || release.compare_to(self.since).is_ge();
        let before_until = self.until.is_none_or(|u| release.compare_to(u).is_le());
        after_since && before_until
    }

    pub(crate) const fn new(since: &'static str, until: Option<&'static str>) -> Availability {
        Availability { since, until, always_since: None }
    }
}

impl fmt::Display for Availability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.until {
            Some(until) => write!(f, "codex {} to {until}", self.since),
            None if self.since == FLOOR => write!(f, "every codex release since {FLOOR}"),
            None => write!(f, "codex {} and later", self.since),
        }
    }
}

/// A codex release number: `major.minor.patch`, maybe with a pre-release (`0.128.0-alpha.1`),
/// ordered as semver orders them (a pre-release before its release; build metadata ignored).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Release {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    /// The pre-release, without its `-` (empty for a release).
    pub pre: String,
}

impl Release {
    /// Parses `0.171.0`, `0.128.0-alpha.1` (a leading `v` and build metadata are allowed).
    pub fn parse(text: &str) -> Option<Release> {
        let ((major, minor, patch), pre) = release_order::parse(text)?;
        Some(Release { major, minor, patch, pre: pre.to_owned() })
    }

    /// This release against a version of the crate's own tables (valid: one that did not
    /// parse would be taken as `0.0.0`), compared without allocating.
    pub(crate) fn compare_to(&self, text: &str) -> Ordering {
        release_order::order(self.parts(), release_order::parse(text).unwrap_or(((0, 0, 0), "")))
    }

    fn parts(&self) -> release_order::Parts<'_> {
        ((self.major, self.minor, self.patch), &self.pre)
    }

    /// Where this release is, against the range the crate was generated for.
    pub fn support(&self) -> Support {
        if self.compare_to(FLOOR).is_lt() {
            Support::Older
        } else if self.compare_to(crate::CODEX_VERSION).is_gt() {
            Support::Newer
        } else {
            Support::InRange
        }
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        Ok(())
    }
}

impl Ord for Release {
    fn cmp(&self, other: &Self) -> Ordering {
        release_order::order(self.parts(), other.parts())
    }
}

impl PartialOrd for Release {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A server's release against the range the crate was generated for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// Older than [`FLOOR`]: its messages may not decode.
    Older,
    /// From [`FLOOR`] to [`crate::CODEX_VERSION`]: everything decodes, and the availability of
    /// each method and member says what it has.
    InRange,
    /// Newer than the crate: what it added is unknown to the types (kept as `Unrecognized`
    /// and unknown members, which decoding skips).
    Newer,
}

/// The releases of the supported range, oldest first ([`FLOOR`] to [`crate::CODEX_VERSION`]).
pub fn releases() -> &'static [&'static str] {
    RELEASES
}

/// A method of either direction, by its wire name; `None` when the crate does not know it.
pub fn method(wire: &str) -> Option<Availability> {
    find_method(wire).map(|row| row.availability)
}

/// A row of the methods' table ([`r`]).
#[derive(Debug)]
pub(crate) struct MethodRow {
    pub wire: &'static str,
    pub availability: Availability,
    /// The rows in [`OWNERS`] of its params type and of its result type (empty: none).
    pub params: &'static str,
    pub result: &'static str,
    pub experimental: bool,
}

/// A method: wire name, since (empty: the floor, see [`since`]), until, the rows in [`OWNERS`]
/// of its params type and of its result type, and whether it is experimental.
// A schema without methods leaves the table empty.
#[allow(dead_code)]
pub(crate) const fn r(
    wire: &'static str,
    since_text: &'static str,
    until: Option<&'static str>,
    params: &'static str,
    result: &'static str,
    experimental: bool,
) -> MethodRow {
    MethodRow { wire, availability: Availability::new(since(since_text), until), params, result, experimental }
}

/// The methods' table is sorted by wire name: a binary search, in a `const fn` so that the
/// marker types' `SINCE` and `UNTIL` are read from the table ([`since_of`]).
const fn find_method(wire: &str) -> Option<&'static MethodRow> {
    let (mut low, mut high) = (0, METHODS.len());
    while low < high {
        let mid = low + (high - low) / 2;
        match compare(METHODS[mid].wire, wire) {
            Ordering::Less => low = mid + 1,
            Ordering::Greater => high = mid,
            Ordering::Equal => return Some(&METHODS[mid]),
        }
    }
    None
}

/// `a.cmp(b)`, byte by byte as `str` orders (its `Ord` is not `const`).
const fn compare(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] != b[i] {
            return if a[i] < b[i] { Ordering::Less } else { Ordering::Greater };
        }
        i += 1;
    }
    if a.len() < b.len() {
        Ordering::Less
    } else if a.len() > b.len() {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

/// The row of a marker type's method, when the crate compiles: one the table lacks fails the
/// build.
const fn marker_row(wire: &str) -> &'static MethodRow {
    match find_method(wire) {
        Some(row) => row,
        None => panic!("a marker type's method is not in the methods' table"),
    }
}

/// The `SINCE` of the marker type of the method `wire` (`request::ThreadStart::SINCE`): its
/// row's since, as [`method`] answers.
#[allow(dead_code, reason = "only the marker types call it, and a schema without methods has none")]
pub(crate) const fn since_of(wire: &str) -> &'static str {
    marker_row(wire).availability.since
}

/// The `UNTIL` of the marker type of the method `wire`: its row's until.
#[allow(dead_code, reason = "only the marker types call it, and a schema without methods has none")]
pub(crate) const fn until_of(wire: &str) -> Option<&'static str> {
    marker_row(wire).availability.until
}

/// A since of the tables' rows, methods and members alike: they write the floor (what every
/// release of the range has) as `""`, its one spelling there.
const fn since(row: &'static str) -> &'static str {
    if row.is_empty() {
        FLOOR
    } else {
        row
    }
}

/// `Type.member` or `Type::value` (an enum value or union arm), by what the schema calls them:
/// a definition's name (`ThreadListParams.includedThreadIds`, `AskForApproval::on-failure`),
/// and a place inside one by the wire names on the way to it (`LoginAccountParams::chatgpt.appBrand`:
/// the member `appBrand` of the `chatgpt` arm of `LoginAccountParams`), as [`Unknown::item`]
/// names them. `Some` for what is not in every release of the range (added after [`FLOOR`],
/// removed, or always sent only since a later release); `None` for what every release of the
/// range has, and for what the crate does not know.
pub fn member(name: &str) -> Option<Availability> {
    // The type is what comes before a `.` or `::`, from the last one back (a type's own name
    // may hold both; a value may hold a `.`).
    let mut end = name.len();
    while let Some(i) = name[..end].rfind(['.', ':']) {
        let (owner, value, wire) = match name[..i].strip_suffix(':') {
            Some(owner) if &name[i..i + 1] == ":" => (owner, true, &name[i + 1..]),
            _ => (&name[..i], false, &name[i + 1..]),
        };
        // Every row of an externally tagged union is an arm, `Type::arm`, those whose key is a
        // member of the object (`{"custom": …}`) too.
        let named =
            |o: &Owner, m: &Member| m.wire == wire && if o.kind == Kind::External { value } else { m.value == value };
        if let Some(found) = find_owner(owner).and_then(|o| o.members.iter().find(|m| named(o, m))) {
            return found.availability();
        }
        end = owner.len();
    }
    None
}

/// The availability of what a path in a method's params names (from `params`, as
/// [`Unknown::path`] and the drift check write them; array indices are passed over):
///
/// ```
/// use codex_app_protocol::availability::at;
/// # if !codex_app_protocol::__test_support::written_for("0.171.0") { return; }
/// use codex_app_protocol::path::{JsonPath, Step};
///
/// let path = JsonPath::from_steps(&[Step::Key("params"), Step::Key("includedThreadIds")]);
/// assert_eq!(at("thread/list", &path).map(|a| a.since), Some("0.171.0"));
/// ```
///
/// `None` when the path names something every release of the range has, or nothing the crate
/// knows.
pub fn at(method: &str, path: &crate::path::JsonPath) -> Option<Availability> {
    use crate::path::Step;
    let entry = find_method(method)?;
    let mut owner = find_owner(entry.params)?;
    let mut steps = path.steps().peekable();
    if steps.peek() == Some(&Step::Key("params")) {
        steps.next();
    }
    let mut found = None;
    for step in steps {
        let Step::Key(step) = step else { continue };
        let m = owner.members.iter().find(|m| m.wire == step && !m.value)?;
        found = m.availability();
        match find_owner(m.child) {
            Some(next) => owner = next,
            None => break,
        }
    }
    found
}

/// Something a message uses that a release does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// Where, as a JSON path into the message (`params.includedThreadIds`,
    /// `params.input[0].type`).
    pub path: crate::path::JsonPath,
    /// What: `Type.member`, or `Type::value` for an enum value or union arm.
    pub item: String,
    pub availability: Availability,
    /// An enum value or union arm (the server refuses it) rather than a member (the server
    /// ignores it).
    pub is_value: bool,
}

impl fmt::Display for Unknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (`{}`: {})", self.path, self.item, self.availability)
    }
}

fn find_owner(name: &str) -> Option<&'static Owner> {
    owner_row(name).map(|i| &OWNERS[i])
}

/// The row of the named type in the owners' table (sorted by name).
fn owner_row(name: &str) -> Option<usize> {
    if name.is_empty() {
        return None;
    }
    OWNERS.binary_search_by(|o| o.name.cmp(name)).ok()
}

/// What the generated tables say of one type: its members, values and arms that are not in
/// every release of the range, and the members that lead to such a type.
#[derive(Debug)]
pub(crate) struct Owner {
    pub name: &'static str,
    pub kind: Kind,
    /// The tag member of a tagged union.
    pub tag: &'static str,
    pub members: &'static [Member],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(
    dead_code,
    reason = "only the generated tables build the owners' kinds, and a crate generated without history has no rows"
)]
pub(crate) enum Kind {
    Struct,
    Enum,
    /// Strings and single-key objects (serde's externally tagged form).
    External,
    Tagged,
    Untagged,
}

#[derive(Debug)]
pub(crate) struct Member {
    /// The member's wire name, or the value, tag value, key or arm name.
    pub wire: &'static str,
    /// An enum value or union arm rather than a member.
    pub value: bool,
    /// When codex has it. Since the floor, with no `until` or `always_since`, is every release
    /// of the range: such a row is listed because it leads to `child`.
    pub availability: Availability,
    /// Only codex's experimental API has it (a build without `experimental` lacks it).
    pub experimental: bool,
    /// The type the member's value (or an array's items) is of, when it is in the tables.
    pub child: &'static str,
}

/// The generated tables' rows (`generated/availability.rs`).
// A schema with nothing that changed within its range leaves the tables empty.
#[allow(dead_code)]
pub(crate) const fn o(name: &'static str, kind: Kind, tag: &'static str, members: &'static [Member]) -> Owner {
    Owner { name, kind, tag, members }
}

/// A member: wire name, since (empty: the floor), until, always sent since, child type.
// A schema with nothing that changed within its range leaves the tables empty.
#[allow(dead_code)]
pub(crate) const fn m(
    wire: &'static str,
    since_text: &'static str,
    until: Option<&'static str>,
    always_since: Option<&'static str>,
    child: &'static str,
) -> Member {
    let availability = Availability { since: since(since_text), until, always_since };
    Member { wire, value: false, availability, experimental: false, child }
}

/// An enum value or union arm: the value (tag, key or arm name), since, until, payload type.
// A schema with nothing that changed within its range leaves the tables empty.
#[allow(dead_code)]
pub(crate) const fn v(
    wire: &'static str,
    since_text: &'static str,
    until: Option<&'static str>,
    child: &'static str,
) -> Member {
    Member { wire, value: true, availability: Availability::new(since(since_text), until), experimental: false, child }
}

impl Member {
    /// The same row, of codex's experimental API.
    // A schema without an experimental bundle has no such row.
    #[allow(dead_code)]
    pub(crate) const fn experimental(self) -> Member {
        Member { experimental: true, ..self }
    }

    /// `None` for what every release of the range has.
    fn availability(&self) -> Option<Availability> {
        let a = self.availability;
        (a.since != FLOOR || a.until.is_some() || a.always_since.is_some()).then_some(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_order_as_semver() {
        let r = |s: &str| Release::parse(s).unwrap();
        assert!(r("0.128.0-alpha.1") < r("0.128.0"));
        assert!(r("0.128.0-alpha.2") < r("0.128.0-alpha.10"));
        assert!(r("0.128.0-alpha") < r("0.128.0-alpha.1"));
        assert!(r("0.128.0-1") < r("0.128.0-alpha"));
        assert!(r("0.99.0") < r("0.100.0"));
        assert_eq!(r("v0.171.0+build.5"), r("0.171.0"));
        for bad in ["", "0.171", "0.171.0.1", "x.1.0", "0.171.0-", "0..0"] {
            assert_eq!(Release::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_tables_are_sorted_and_name_known_types() {
        assert!(OWNERS.windows(2).all(|w| w[0].name < w[1].name));
        assert!(METHODS.windows(2).all(|w| w[0].wire < w[1].wire));
        let releases = |a: &Availability| [Some(a.since), a.until, a.always_since].into_iter().flatten();
        for m in METHODS {
            for v in releases(&m.availability) {
                assert!(RELEASES.contains(&v), "{}: {v} is not a release of the range", m.wire);
            }
        }
        for o in OWNERS {
            for (i, m) in o.members.iter().enumerate() {
                let twice = o.members[..i].iter().any(|n| (n.wire, n.value) == (m.wire, m.value));
                assert!(!twice, "{}.{}: two rows", o.name, m.wire);
                assert!(m.child.is_empty() || find_owner(m.child).is_some(), "{}.{} -> {}", o.name, m.wire, m.child);
                for v in releases(&m.availability) {
                    assert!(RELEASES.contains(&v), "{}.{}: {v} is not a release of the range", o.name, m.wire);
                }
            }
        }
        assert_eq!(RELEASES.first(), Some(&FLOOR));
        assert_eq!(RELEASES.last(), Some(&crate::CODEX_VERSION));
    }

    /// The marker types' `SINCE` and `UNTIL` are their rows' (the wire macros read them with
    /// `since_of` and `until_of`): for every row, as `method` answers, and the lookup the
    /// build makes finds every row, first, last and between.
    #[test]
    fn every_method_row_gives_its_marker_the_rows_since_and_until() {
        for row in METHODS {
            let a = method(row.wire).unwrap();
            assert_eq!((since_of(row.wire), until_of(row.wire)), (a.since, a.until), "{}", row.wire);
            assert!(std::ptr::eq(find_method(row.wire).unwrap(), row), "{}", row.wire);
        }
        for absent in ["", "a", "zzz", "thread/start/", "thread/star"] {
            assert!(find_method(absent).is_none(), "{absent}");
        }
        assert_eq!(crate::request::Initialize::SINCE, since_of("initialize"));
        assert_eq!(crate::request::Initialize::UNTIL, until_of("initialize"));
    }
}
