//! The report: every change, where it is filed, and what it means for each role.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use super::path::Path;
use codex_app_codegen::ir::Direction;

/// Every change between two schema sets, with headline counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub old_version: String,
    pub new_version: String,
    /// Whether each side had an experimental bundle (its experimental marks are meaningful).
    pub old_has_experimental: bool,
    pub new_has_experimental: bool,
    pub counts: Counts,
    /// Breaking first, then compatible, then Rust-API-only; each grouped by [`FiledUnder`].
    pub changes: Vec<Change>,
    /// Roles and users of every type that a change is filed under (see [`FiledUnder::Shared`]).
    pub types: BTreeMap<String, Usage>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub breaking: usize,
    /// Of `breaking`, how many only concern the experimental API.
    pub breaking_experimental: usize,
    pub compatible: usize,
    pub compatible_experimental: usize,
    /// Types removed or renamed: code that names them changes, the wire does not.
    pub rust_api: usize,
    pub methods_added: usize,
    pub methods_removed: usize,
    pub methods_to_stable: usize,
    pub methods_to_experimental: usize,
    /// Methods with any other change of their own (params or response).
    pub methods_changed: usize,
    pub types_added: usize,
    pub types_removed: usize,
    pub types_renamed: usize,
    /// Named types with a change to their contents.
    pub types_changed: usize,
}

/// One change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Where the change is filed.
    pub filed_under: FiledUnder,
    /// What changed: a method (`thread/start`, `thread/start params`) or a place in a type, by
    /// the type's schema name (`LoginAccountParams::chatgpt.type`): see [`Path`]. Serialized as
    /// its printed text.
    pub path: Path,
    #[serde(flatten)]
    pub kind: Kind,
    /// Confined to the experimental API.
    pub experimental: bool,
    pub severity: Severity,
    /// The effect on a client that sends the changed value; `None` when it does not send it.
    pub sends: Option<Effect>,
    /// The effect on a client that receives the changed value; `None` when it does not.
    pub receives: Option<Effect>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Breaking,
    Compatible,
    /// Only the Rust API changed (a type removed or renamed); the wire is the same.
    RustApi,
}

/// What a change means for one role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Effect {
    pub breaking: bool,
    /// Why, or what to do; empty when there is nothing to add.
    pub why: String,
}

/// Where a change is filed: under the one method whose messages carry the changed type, or,
/// for a type several methods use, under the type itself.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "filed_under", rename_all = "snake_case")]
pub enum FiledUnder {
    Method {
        #[serde(serialize_with = "direction_name")]
        direction: Direction,
        method: String,
        /// The method is experimental (in the new version; in the old one if it was removed).
        experimental: bool,
    },
    /// A type used by several methods (its users are in [`Report::types`]).
    Shared { name: String, experimental: bool },
    /// A type no method uses.
    Unused { name: String, experimental: bool },
    /// The members every server notification may carry next to `method` and `params`.
    Envelope,
}

/// Who uses a type, in either version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub sends: bool,
    pub receives: bool,
    /// The methods whose messages carry it (wire names), sorted.
    pub methods: Vec<String>,
}

/// What changed. Types are written as the generated Rust type (`Option<String>`, `Vec<Turn>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    MethodAdded {
        params: Option<String>,
        response: Option<String>,
    },
    MethodRemoved,
    /// A method, type or member that was experimental is stable.
    ToStable,
    /// A method, type or member that was stable is experimental.
    ToExperimental,
    /// How the method carries params (`none`, `required T`, `optional T`).
    ParamsChanged {
        old: String,
        new: String,
    },
    TypeAdded,
    TypeRemoved,
    /// The type's name changed, its shape did not (a renamed definition, a renumbered inline
    /// type, a definition that replaced an inline type, another alias of the same type).
    /// `alias_of`: both names are aliases of this Rust type, so even code is unaffected.
    Renamed {
        old: String,
        new: String,
        alias_of: Option<String>,
    },
    /// The kind of type changed (struct, enum, union, alias).
    ShapeChanged {
        old: String,
        new: String,
    },
    /// The type at `path` changed.
    TypeChanged {
        old: String,
        new: String,
    },
    FieldAdded {
        ty: String,
        presence: String,
    },
    FieldRemoved {
        ty: String,
        presence: String,
    },
    /// One field removed and one added with the same type and presence.
    FieldRenamed {
        old: String,
        new: String,
        ty: String,
    },
    /// Required/optional/nullable changed (`ty` is the Rust field type before and after).
    PresenceChanged {
        old: String,
        new: String,
        old_ty: String,
        new_ty: String,
    },
    ValueAdded {
        value: String,
    },
    ValueRemoved {
        value: String,
    },
    /// An enum value or union variant removed and one added that differ only in case or
    /// separators (`onFailure` -> `on-failure`).
    ValueRenamed {
        old: String,
        new: String,
    },
    /// A union arm with a payload (`payload` is its type or a summary of its members).
    VariantAdded {
        value: String,
        payload: String,
    },
    VariantRemoved {
        value: String,
    },
    TagChanged {
        old: String,
        new: String,
    },
    /// The map that keeps undeclared members (`additionalProperties`).
    ExtraChanged {
        old: Option<String>,
        new: Option<String>,
    },
}

fn direction_name<S: Serializer>(d: &Direction, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(d.union_name())
}

impl Change {
    pub fn is_breaking(&self) -> bool {
        self.severity == Severity::Breaking
    }
}

impl Report {
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serializes") + "\n"
    }

    /// One line of counts, for a terminal.
    pub fn summary(&self) -> String {
        if self.is_empty() {
            return "none".to_owned();
        }
        let c = &self.counts;
        format!(
            "{} breaking ({} experimental), {} compatible, {} Rust API only; methods: {} added, {} removed, {} changed; \
             types: {} added, {} removed, {} changed",
            c.breaking,
            c.breaking_experimental,
            c.compatible,
            c.rust_api,
            c.methods_added,
            c.methods_removed,
            c.methods_changed,
            c.types_added,
            c.types_removed,
            c.types_changed
        )
    }
}
