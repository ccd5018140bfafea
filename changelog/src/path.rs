//! Where a change is: a method, a type or the notification envelope, then the steps into it.
//! Made once where the comparison walks, printed once ([`std::fmt::Display`]), and read as a
//! value by whoever needs its parts: nothing parses the printed text back.
//!
//! A type is printed by what the schema calls it ([`codex_app_codegen::schema_name`], as
//! `vendor-schemas/history.json` names it), not by its generated Rust name, which the root keeps
//! too for code that looks for the Rust items. A schema name two types of a release share (a v1
//! definition next to the v2 one of its name, codex 0.60.1 to 0.100.0) is printed as the Rust
//! name (`V1CodexErrorInfo`). Steps are printed with wire names: `.member`,
//! `::value` for a union's variant (an untagged union's by its Rust variant), `[]` an array's
//! items, `{}` a map's values, `{..}` the map of undeclared members.

use std::fmt;

use serde::{Serialize, Serializer};

use codex_app_codegen::ir::Direction;

/// Where a change is (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    pub root: Root,
    pub steps: Vec<Step>,
}

/// What a [`Path`] starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Root {
    /// A method by its wire name (`thread/start`): the method itself, its params or its response.
    Method { wire: String, part: Part },
    /// A named type: its generated Rust name and what the schema calls it ([`codex_app_codegen::ir::TypeDef::schema`]).
    Type { rust: String, schema: String },
    /// The members every server notification carries next to `method` and `params`
    /// (printed as the union that lists server notifications).
    Envelope,
}

/// The part of a method a [`Root::Method`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The method itself (added, removed, moved between stable and experimental).
    Method,
    Params,
    Response,
}

/// One step into a type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A struct's member, by its wire name.
    Member(String),
    /// A union's variant: the tag value or key of a tagged union, an untagged union's Rust
    /// variant.
    Arm(String),
    /// An array's items.
    Item,
    /// A map's values.
    MapValue,
    /// The map that keeps a struct's undeclared members (`additionalProperties`).
    Extra,
}

impl Path {
    /// A method itself, or its params or response.
    pub fn method(wire: &str, part: Part) -> Path {
        Path { root: Root::Method { wire: wire.to_owned(), part }, steps: Vec::new() }
    }

    /// A named type, by its Rust name and its schema name.
    pub fn ty(rust: &str, schema: &str) -> Path {
        Path { root: Root::Type { rust: rust.to_owned(), schema: schema.to_owned() }, steps: Vec::new() }
    }

    /// The notification envelope's members.
    pub fn envelope() -> Path {
        Path { root: Root::Envelope, steps: Vec::new() }
    }

    fn then(&self, step: Step) -> Path {
        let mut steps = self.steps.clone();
        steps.push(step);
        Path { root: self.root.clone(), steps }
    }

    /// `self.wire`.
    pub fn member(&self, wire: &str) -> Path {
        self.then(Step::Member(wire.to_owned()))
    }

    /// `self::name`.
    pub fn arm(&self, name: &str) -> Path {
        self.then(Step::Arm(name.to_owned()))
    }

    /// `self[]`.
    pub fn item(&self) -> Path {
        self.then(Step::Item)
    }

    /// `self{}`.
    pub fn map_value(&self) -> Path {
        self.then(Step::MapValue)
    }

    /// `self{..}`.
    pub fn extra(&self) -> Path {
        self.then(Step::Extra)
    }

    /// About a method or its params or response, not about a type.
    pub fn is_method(&self) -> bool {
        matches!(self.root, Root::Method { .. })
    }

    /// A named type itself, no place inside it.
    pub fn is_whole_type(&self) -> bool {
        matches!(self.root, Root::Type { .. }) && self.steps.is_empty()
    }

    /// The method's wire name, for a path into a method.
    pub fn method_wire(&self) -> Option<&str> {
        match &self.root {
            Root::Method { wire, .. } => Some(wire),
            _ => None,
        }
    }

    /// The Rust name of the type the path starts from: the named type's, or the envelope's
    /// union; `None` for a method.
    pub fn rust_type(&self) -> Option<&str> {
        match &self.root {
            Root::Type { rust, .. } => Some(rust),
            Root::Envelope => Some(Direction::ServerNotification.union_name()),
            Root::Method { .. } => None,
        }
    }

    /// The wire name of the last member on the way (`status` of `ThreadItem::commandExecution.status[]`).
    pub fn last_member(&self) -> Option<&str> {
        self.steps.iter().rev().find_map(|s| match s {
            Step::Member(wire) => Some(wire.as_str()),
            _ => None,
        })
    }
}

impl fmt::Display for Root {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Root::Method { wire, part: Part::Method } => f.write_str(wire),
            Root::Method { wire, part: Part::Params } => write!(f, "{wire} params"),
            Root::Method { wire, part: Part::Response } => write!(f, "{wire} response"),
            Root::Type { schema, .. } => f.write_str(schema),
            Root::Envelope => f.write_str(Direction::ServerNotification.union_name()),
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Member(wire) => write!(f, ".{wire}"),
            Step::Arm(name) => write!(f, "::{name}"),
            Step::Item => f.write_str("[]"),
            Step::MapValue => f.write_str("{}"),
            Step::Extra => f.write_str("{..}"),
        }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.root)?;
        self.steps.iter().try_for_each(|s| write!(f, "{s}"))
    }
}

/// As its printed text: the `path` of `cargo xtask diff --json` stays a string.
impl Serialize for Path {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
