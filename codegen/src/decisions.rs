//! Decisions the schema cannot make, kept as reviewed data in `vendor-schemas/decisions.json`
//! (compiled in, so every user of the generator sees the same file). They are one input of the
//! generator's [`crate::Settings`] ([`crate::Settings::decisions`]).
//!
//! - `responses`: the response type of each request method that the naming convention
//!   (`FooParams` -> `FooResponse`) does not pair, across every supported codex release
//!   (see [`crate::pairing`]); `"any"` where the schema defines none.
//! - `null_distinct_from_absent`: for an optional, nullable member, whether an explicit `null`
//!   means something other than leaving the member out (`distinct: true`: the field is
//!   `Option<Option<T>>`, three states) or not (`false`: `Option<T>`), with why
//!   ([`NullDecision`]). Keys are `Type.wireMember`. An entry is read for any optional nullable
//!   member: one whose description speaks of both `null` and omission (a *candidate*), and one
//!   that codex's own source declares `Option<Option<T>>` with double-option serde helpers,
//!   which the schema prints like any other optional nullable member.
//!
//! A candidate without an entry, like a request the pairing cannot pair, is a [`Missing`]
//! decision: with [`Undecided::Fail`] the generator stops with an error that lists every
//! missing decision of the schema set at once, each with a proposal (for a member, read from
//! its description by [`null_has_meaning`], with the description itself, so the reviewer
//! decides with the text at hand), as entries to paste into the file. An optional nullable
//! member whose description says nothing of it does not stop the generator (it is
//! `Option<T>`); when a release adds one, `cargo xtask upgrade` lists it for a decision
//! ([`new_undecided_nullables`]), since only codex's declaration can settle it.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::ir::*;
use crate::Error;

/// Where the decisions live, relative to the workspace root (for messages).
pub const DECISIONS_FILE: &str = "vendor-schemas/decisions.json";

const DECISIONS_JSON: &str = include_str!("../../vendor-schemas/decisions.json");

/// The reply recorded for a request method: a schema type, or any JSON value.
pub const ANY_REPLY: &str = "any";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decisions {
    /// Notes for the reviewer; not read.
    #[serde(rename = "_about", default)]
    pub about: Vec<String>,
    /// Request method (wire name) -> response type name, or `"any"`.
    #[serde(default)]
    pub responses: BTreeMap<String, String>,
    /// `Type.wireMember` -> whether `null` means something other than absence, and why.
    #[serde(default)]
    pub null_distinct_from_absent: BTreeMap<String, NullDecision>,
}

/// One entry of `null_distinct_from_absent`: `{"distinct": true, "why": "..."}`. A bare boolean
/// (the file's first format) is read as an entry without a reason.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "NullDecisionFormat")]
pub struct NullDecision {
    /// An explicit `null` means something other than absence: the field is `Option<Option<T>>`.
    pub distinct: bool,
    /// What settled it: codex's declaration (`codex declares ...`, with the file and commit read)
    /// or the member's description (`description: ...`). Empty for a bare boolean.
    pub why: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum NullDecisionFormat {
    Bare(bool),
    Reasoned(ReasonedNullDecision),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReasonedNullDecision {
    distinct: bool,
    why: String,
}

impl From<NullDecisionFormat> for NullDecision {
    fn from(format: NullDecisionFormat) -> NullDecision {
        match format {
            NullDecisionFormat::Bare(distinct) => NullDecision { distinct, why: String::new() },
            NullDecisionFormat::Reasoned(ReasonedNullDecision { distinct, why }) => NullDecision { distinct, why },
        }
    }
}

impl NullDecision {
    /// The entry as a line of the file holds it (without the key).
    pub fn to_json(&self) -> String {
        format!("{{\"distinct\": {}, \"why\": {}}}", self.distinct, json_string(&self.why))
    }
}

impl Decisions {
    pub fn from_json(text: &str) -> Result<Decisions, Error> {
        serde_json::from_str(text).map_err(|e| Error::new("", format!("{DECISIONS_FILE}: {e}")))
    }

    /// The checked-in decisions.
    pub fn checked_in() -> Result<&'static Decisions, Error> {
        static PARSED: OnceLock<Result<Decisions, String>> = OnceLock::new();
        PARSED
            .get_or_init(|| Decisions::from_json(DECISIONS_JSON).map_err(|e| e.message))
            .as_ref()
            .map_err(|message| Error::new("", message.clone()))
    }
}

/// What to do with a decision the decisions do not hold ([`Missing`]: a candidate member, a
/// request without a response type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undecided {
    /// Fail, listing every entry to add (regen: the generated crate is reviewed code).
    Fail,
    /// Take the proposals (comparing old releases, tests).
    Propose,
}

/// Whether a member is a candidate for `Option<Option<T>>`: optional, nullable, and its
/// description speaks of both `null` and omission.
pub fn is_null_candidate(f: &Field) -> bool {
    if f.required || !f.nullable {
        return false;
    }
    let Some(doc) = &f.doc else { return false };
    let words = words(doc);
    words.iter().any(|w| w == "null") && words.iter().any(|w| is_omit(w))
}

/// A candidate member the decisions do not cover, with the proposal read from its description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NullProposal {
    /// `Type.wireMember`, the key in `null_distinct_from_absent`.
    pub key: String,
    /// [`null_has_meaning`] of the description.
    pub proposal: bool,
    /// The member's description, on one line.
    pub doc: String,
}

/// A request method that neither the naming convention nor the decisions pair with a response
/// type, with a proposal ([`crate::pairing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseProposal {
    /// The wire name, the key in `responses`.
    pub method: String,
    /// `ClientRequest` or `ServerRequest`.
    pub direction: &'static str,
    /// A type of the schema, or [`ANY_REPLY`].
    pub proposal: String,
    /// Why this proposal, for the reviewer.
    pub why: String,
}

/// Every decision a schema set needs that the decisions do not hold: what one run of the
/// generator lists before it stops ([`Undecided::Fail`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Missing {
    /// The codex release whose schema needs them.
    pub codex_version: String,
    pub responses: Vec<ResponseProposal>,
    pub null_distinct_from_absent: Vec<NullProposal>,
}

impl Missing {
    pub fn is_empty(&self) -> bool {
        self.responses.is_empty() && self.null_distinct_from_absent.is_empty()
    }

    pub fn len(&self) -> usize {
        self.responses.len() + self.null_distinct_from_absent.len()
    }

    /// The entries to add, as lines to paste at the top of each object of the decisions file
    /// (every line ends with a comma, so it may be followed by the entries already there).
    pub fn entries(&self) -> String {
        let mut out = String::new();
        if !self.responses.is_empty() {
            out.push_str("  \"responses\": {\n");
            for r in &self.responses {
                out.push_str(&format!("    {}: {},\n", json_string(&r.method), json_string(&r.proposal)));
            }
        }
        if !self.null_distinct_from_absent.is_empty() {
            out.push_str("  \"null_distinct_from_absent\": {\n");
            for n in &self.null_distinct_from_absent {
                let entry = NullDecision { distinct: n.proposal, why: format!("description: {}", n.doc) };
                out.push_str(&format!("    {}: {},\n", json_string(&n.key), entry.to_json()));
            }
        }
        out
    }

    /// The whole message: what each decision is about, why each proposal, and the entries.
    pub fn render(&self) -> String {
        let mut out = format!(
            "codex {} needs {} decision(s) that {DECISIONS_FILE} does not hold. Review each proposal below, add the \
             entries to the file, then run again.\n",
            self.codex_version,
            self.len()
        );
        if !self.responses.is_empty() {
            out.push_str(&format!(
                "\n{} request(s) without a response type (the naming convention pairs `FooParams` with `FooResponse`; \
                 \"{ANY_REPLY}\" when the schema defines none):\n",
                self.responses.len()
            ));
            for r in &self.responses {
                out.push_str(&format!("  {} ({}): {} ({})\n", r.method, r.direction, json_string(&r.proposal), r.why));
            }
        }
        if !self.null_distinct_from_absent.is_empty() {
            out.push_str(&format!(
                "\n{} member(s) may give `null` a meaning of its own (true: an explicit `null` differs from absent, \
                 `Option<Option<T>>`; false: `Option<T>`); proposed from the descriptions:\n",
                self.null_distinct_from_absent.len()
            ));
            for n in &self.null_distinct_from_absent {
                out.push_str(&format!("  {}: {} ({})\n", n.key, n.proposal, n.doc));
            }
        }
        out.push_str(&format!("\nPaste each block at the top of its object in {DECISIONS_FILE}:\n{}", self.entries()));
        out
    }
}

fn json_string(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// Sets `null_meaningful` on every optional nullable member the decisions hold; a candidate
/// they do not cover ([`is_null_candidate`]) takes its proposal, and is returned. Any other
/// member the decisions do not hold stays `Option<T>`.
pub fn apply_null_decisions(ir: &mut Ir, decisions: &Decisions) -> Vec<NullProposal> {
    let mut missing = Vec::new();
    for def in ir.types.values_mut() {
        let TypeKind::Struct(s) = &mut def.kind else { continue };
        for f in &mut s.fields {
            if f.required || !f.nullable {
                continue;
            }
            let key = null_key(&def.name, f);
            f.null_meaningful = match decisions.null_distinct_from_absent.get(&key) {
                Some(decided) => decided.distinct,
                None if is_null_candidate(f) => {
                    let proposal = null_has_meaning(f.doc.as_deref());
                    missing.push(NullProposal { key, proposal, doc: one_line(f.doc.as_deref()) });
                    proposal
                }
                None => false,
            };
        }
    }
    missing
}

/// The key of a member in `null_distinct_from_absent`: `Type.wireMember`.
fn null_key(type_name: &str, f: &Field) -> String {
    format!("{type_name}.{}", f.wire)
}

fn one_line(doc: Option<&str>) -> String {
    doc.unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An optional nullable member that a release adds, that the decisions do not hold and whose
/// description does not settle it (not a candidate): whether its `null` means something of its
/// own is written only in codex's source (`Option<Option<T>>` with double-option serde helpers),
/// so `cargo xtask upgrade` lists it for a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndecidedNullable {
    /// `Type.wireMember`, the key in `null_distinct_from_absent`.
    pub key: String,
    /// The member's JSON pointer in the bundle (`#/definitions/v2/Type/properties/member`).
    pub pointer: String,
    /// The member's description, on one line (empty without one).
    pub doc: String,
}

/// The optional nullable members of `new` that `previous` does not have (the member or its
/// whole type is new), that the decisions do not hold and that are not candidates (a candidate
/// without a decision stops the generator instead). Sorted by key.
pub fn new_undecided_nullables(previous: &Ir, new: &Ir, decisions: &Decisions) -> Vec<UndecidedNullable> {
    let before: std::collections::BTreeSet<String> = nullable_members(previous).map(|(key, _, _)| key).collect();
    let mut out: Vec<UndecidedNullable> = nullable_members(new)
        .filter(|(key, _, f)| {
            !before.contains(key) && !decisions.null_distinct_from_absent.contains_key(key) && !is_null_candidate(f)
        })
        .map(|(key, def, f)| UndecidedNullable {
            key,
            pointer: format!("{}/properties/{}", def.pointer, f.wire.replace('~', "~0").replace('/', "~1")),
            doc: one_line(f.doc.as_deref()),
        })
        .collect();
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

/// [`new_undecided_nullables`] of two releases' schema sets, each lowered on its own (without the
/// supported range's history, taking the proposals for what the decisions do not hold).
pub fn new_undecided_nullables_of_sets(
    previous: &crate::SchemaSet,
    new: &crate::SchemaSet,
    settings: &crate::Settings,
) -> Result<Vec<UndecidedNullable>, Error> {
    let one_release = crate::Settings { history: None, floor: None, ..settings.clone().proposing() };
    let in_version = |v: &str| {
        let v = v.to_owned();
        move |mut e: Error| {
            e.message = format!("codex {v}: {}", e.message);
            e
        }
    };
    let previous_ir = crate::build_ir_with(previous, &one_release).map_err(in_version(&previous.codex_version))?;
    let new_ir = crate::build_ir_with(new, &one_release).map_err(in_version(&new.codex_version))?;
    Ok(new_undecided_nullables(&previous_ir, &new_ir, &settings.decisions))
}

/// Every optional nullable member of the structs of `ir`: its key, its type and itself.
fn nullable_members(ir: &Ir) -> impl Iterator<Item = (String, &TypeDef, &Field)> {
    ir.types.values().flat_map(|def| {
        let fields: &[Field] = match &def.kind {
            TypeKind::Struct(s) => &s.fields,
            _ => &[],
        };
        fields.iter().filter(|f| !f.required && f.nullable).map(move |f| (null_key(&def.name, f), def, f))
    })
}

fn words(doc: &str) -> Vec<String> {
    doc.to_ascii_lowercase()
        .replace('`', "")
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

fn is_omit(w: &str) -> bool {
    matches!(w, "omit" | "omits" | "omitted" | "omitting" | "omission")
}

/// The proposal for a candidate: whether its description gives an explicit `null` a meaning
/// distinct from omitting the member. It speaks of both, and does not equate them ("omit or
/// pass `null`", "omitted/null", "omission or `null`").
pub fn null_has_meaning(doc: Option<&str>) -> bool {
    let Some(doc) = doc else { return false };
    let words = words(doc);
    if !words.iter().any(|w| w == "null") || !words.iter().any(|w| is_omit(w)) {
        return false;
    }
    // "omit or null", "omitted / null", "omitted, null, or empty", "omit or pass null", "null or omitted"
    let equated = words.windows(3).any(|w| {
        (is_omit(&w[0]) && w[1] == "or" && w[2] == "null") || (w[0] == "null" && w[1] == "or" && is_omit(&w[2]))
    }) || words
        .windows(4)
        .any(|w| is_omit(&w[0]) && w[1] == "or" && matches!(w[2].as_str(), "pass" | "send" | "set") && w[3] == "null")
        || words.windows(2).any(|w| is_omit(&w[0]) && w[1] == "null");
    !equated
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_meaning_from_descriptions() {
        assert!(null_has_meaning(Some("Omit to leave the stored branch unchanged, set to `null` to clear it.")));
        assert!(null_has_meaning(Some("`null` clears the current service tier; omission leaves it unchanged.")));
        assert!(null_has_meaning(Some("When omitted, the server default applies. Set to `null` to disable the cap.")));
        assert!(!null_has_meaning(Some("Omit or pass `null` to clear the override.")));
        assert!(!null_has_meaning(Some("Omitted or null leaves it unchanged.")));
        assert!(!null_has_meaning(Some("Omitted/null preserves the list; [] clears it.")));
        assert!(!null_has_meaning(Some("Omission or `null` leaves the effort unchanged.")));
        assert!(!null_has_meaning(Some("Omitted, null, or empty means no exclusions.")));
        assert!(!null_has_meaning(Some("null when unavailable")));
        assert!(!null_has_meaning(None));
    }

    #[test]
    fn checked_in_decisions_parse() {
        let d = Decisions::checked_in().unwrap();
        assert!(!d.responses.is_empty());
        assert!(d.responses.values().all(|r| r == ANY_REPLY || r.ends_with("Response")), "{:?}", d.responses);
    }
}
