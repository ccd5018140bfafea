//! Decisions the schema cannot make, kept as reviewed data in `vendor-schemas/decisions.json`
//! (compiled in, so every user of the generator sees the same file). They are one input of the
//! generator's [`crate::Settings`] ([`crate::Settings::decisions`]).
//!
//! - `responses`: the response type of each request method that the naming convention
//!   (`FooParams` -> `FooResponse`) does not pair, across every supported codex release
//!   (see [`crate::pairing`]); `"any"` where the schema defines none.
//! - `null_distinct_from_absent`: for each *candidate* member (optional, nullable, and its
//!   description speaks of both `null` and omission), whether an explicit `null` means
//!   something other than leaving the member out (`true`: the field is `Option<Option<T>>`,
//!   three states) or not (`false`: `Option<T>`). Keys are `Type.wireMember`.
//!
//! A candidate without an entry, like a request the pairing cannot pair, is a [`Missing`]
//! decision: with [`Undecided::Fail`] the generator stops with an error that lists every
//! missing decision of the schema set at once, each with a proposal (for a member, read from
//! its description by [`null_has_meaning`], with the description itself, so the reviewer
//! decides with the text at hand), as entries to paste into the file.

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
    /// `Type.wireMember` -> whether `null` means something other than absence.
    #[serde(default)]
    pub null_distinct_from_absent: BTreeMap<String, bool>,
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
                out.push_str(&format!("    {}: {},\n", json_string(&n.key), n.proposal));
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

/// Sets `null_meaningful` on every candidate member from the decisions; a candidate they do not
/// cover takes its proposal, and is returned.
pub fn apply_null_decisions(ir: &mut Ir, decisions: &Decisions) -> Vec<NullProposal> {
    let mut missing = Vec::new();
    for def in ir.types.values_mut() {
        let TypeKind::Struct(s) = &mut def.kind else { continue };
        for f in &mut s.fields {
            if !is_null_candidate(f) {
                continue;
            }
            let key = format!("{}.{}", def.name, f.wire);
            f.null_meaningful = match decisions.null_distinct_from_absent.get(&key) {
                Some(decided) => *decided,
                None => {
                    let proposal = null_has_meaning(f.doc.as_deref());
                    let doc = f.doc.as_deref().unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" ");
                    missing.push(NullProposal { key, proposal, doc });
                    proposal
                }
            };
        }
    }
    missing
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
