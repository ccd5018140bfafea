//! The intermediate representation between the schema and the Rust tokens.
//!
//! Plain data: no `quote`, no schema types. Every name is final here (Rust identifier plus
//! wire name), so emitters never recompute one, and a second reader of the IR (the changelog
//! diff, tests) sees exactly what the emitted code will contain.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Everything generated from one schema set.
#[derive(Debug, Clone, PartialEq)]
pub struct Ir {
    /// Every named type, keyed by Rust name (so output order never depends on traversal order).
    pub types: BTreeMap<String, TypeDef>,
    /// Methods per direction, in schema order.
    pub client_requests: Vec<Method>,
    pub server_requests: Vec<Method>,
    pub server_notifications: Vec<Method>,
    pub client_notifications: Vec<Method>,
    /// Sibling properties of the `ServerNotification` union: envelope members every
    /// notification may carry next to `method` and `params` (`emittedAtMs`).
    pub notification_envelope: Vec<Field>,
    /// True when the set had an experimental bundle (the experimental marks are meaningful).
    pub has_experimental: bool,
    /// What the generator could not type faithfully and did instead, sorted, one per place.
    pub warnings: Vec<crate::Warning>,
    /// The oldest codex release of the supported range, when the IR is of a range
    /// ([`crate::history::History::apply`]); `None` for one release's IR.
    pub floor: Option<String>,
    /// The releases of the range, oldest first (empty for one release's IR).
    pub releases: Vec<String>,
    /// What is not in every release of the range, by [`crate::history::keys`]: since when,
    /// until when, since when a member is always present.
    pub availability: BTreeMap<crate::history::keys::Key, crate::history::Availability>,
    /// The same of types, by schema name ([`TypeDef::schema`]).
    pub type_availability: BTreeMap<String, crate::history::Availability>,
}

/// A named Rust type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypeDef {
    pub name: String,
    /// JSON pointer of the schema it came from.
    pub pointer: String,
    /// What the schema calls it ([`crate::schema_name`]): the name the range's facts are kept
    /// by (`LoginAccountParams::chatgpt`), whatever `name` the generator gives it.
    #[serde(default)]
    pub schema: String,
    /// The name the generator gave it before codex's namespace was taken off its title
    /// (`Chatgptv2LoginAccountParams`): kept as a deprecated alias.
    #[serde(default)]
    pub former_name: Option<String>,
    pub doc: Option<String>,
    /// Only in the experimental bundle.
    pub experimental: bool,
    pub kind: TypeKind,
}

impl TypeDef {
    /// A type as lowering makes it: not experimental (the merge marks what is), its schema name
    /// given once every type is lowered.
    pub fn new(name: String, pointer: String, doc: Option<String>, kind: TypeKind) -> TypeDef {
        TypeDef { name, pointer, schema: String::new(), former_name: None, doc, experimental: false, kind }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TypeKind {
    /// `pub type Name = Ty;` (a named primitive, array or map).
    Alias(Ty),
    Struct(Struct),
    /// A string enum; open: unknown values are kept in a catch-all variant.
    StringEnum(StringEnum),
    /// A `oneOf` of objects told apart by a one-value string property (`type`, `mode`, ...).
    /// Open: an unknown tag keeps the whole object.
    Tagged(Tagged),
    /// A `oneOf` of strings and single-key objects (serde's externally tagged form).
    /// Open: an unknown string or key keeps the whole value.
    External(External),
    /// An `anyOf`/`oneOf` whose arms differ in JSON type or shape, tried in order.
    Untagged(Untagged),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Struct {
    pub fields: Vec<Field>,
    /// `additionalProperties: true` next to `properties`: unknown members are kept in a map.
    pub extra: Option<Ty>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Field {
    /// The JSON member name.
    pub wire: String,
    /// The Rust field name (snake_case, raw identifier if a keyword).
    pub rust: String,
    /// The type of a present, non-null value.
    pub ty: Ty,
    pub required: bool,
    /// The schema allows `null` (`type: [T, "null"]` or `anyOf [T, null]`).
    pub nullable: bool,
    /// An optional, nullable member whose description gives `null` a meaning of its own
    /// (e.g. "set to `null` to clear it"): absent, `null` and a value are three states.
    pub null_meaningful: bool,
    pub doc: Option<String>,
    pub experimental: bool,
}

impl Field {
    /// How the field is represented in Rust.
    pub fn presence(&self) -> Presence {
        match (self.required, self.nullable, self.null_meaningful) {
            (true, false, _) => Presence::Required,
            (true, true, _) => Presence::RequiredNullable,
            (false, _, true) => Presence::OptionalNullable,
            (false, _, false) => Presence::Optional,
        }
    }
}

/// The Rust shape of a field, derived from `required`, `nullable` and `null_meaningful`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// `T`: always present, never null.
    Required,
    /// `Option<T>`: always written; `None` is `null`.
    RequiredNullable,
    /// `Option<T>`: `None` is absent (never written); an incoming `null` reads as `None`.
    Optional,
    /// `Option<Option<T>>`: `None` absent, `Some(None)` explicit `null`, `Some(Some(v))`.
    OptionalNullable,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StringEnum {
    pub values: Vec<EnumValue>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnumValue {
    pub wire: String,
    pub rust: String,
    pub doc: Option<String>,
    pub experimental: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tagged {
    /// The tag member's wire name.
    pub tag: String,
    pub arms: Vec<TaggedArm>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaggedArm {
    /// The tag value.
    pub wire: String,
    /// The variant name.
    pub rust: String,
    /// The struct holding the arm's other members.
    pub payload: String,
    /// The payload contains the union by value (a recursive schema): held in a `Box`.
    pub boxed: bool,
    pub doc: Option<String>,
    pub experimental: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct External {
    pub arms: Vec<ExternalArm>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExternalArm {
    /// The string value, or the single key of the object form.
    pub wire: String,
    pub rust: String,
    /// `None` for the plain string form; the value's type for `{"key": value}`.
    pub payload: Option<Ty>,
    pub doc: Option<String>,
    pub experimental: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Untagged {
    pub arms: Vec<UntaggedArm>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UntaggedArm {
    pub rust: String,
    pub ty: Ty,
    /// What JSON the arm's schema accepts: how the decoder picks the arm.
    pub accepts: ArmMatch,
    pub doc: Option<String>,
    pub experimental: bool,
}

/// What JSON an untagged union arm accepts, read from its schema: its JSON types, required
/// members, the values of members whose schema is a string enum or const, and whether other
/// members are allowed. The decoder picks the first arm that accepts a value (as the schema
/// would), then the first that accepts it with unknown enum values allowed (an open enum keeps
/// a value added in a later release), then the first of the value's JSON type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ArmMatch {
    /// Any JSON value.
    Any,
    /// A value of one of these JSON types (`Number` accepts integers too).
    Types(Vec<JsonType>),
    /// A string, one of these values.
    Strings(Vec<String>),
    /// One of these JSON values (an `enum`/`const` that is not all strings), as JSON text.
    Values(Vec<String>),
    Object(ObjectMatch),
    /// Any of these.
    AnyOf(Vec<ArmMatch>),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectMatch {
    /// Members that must be present.
    pub required: Vec<String>,
    /// What members accept when present (members that accept anything are left out).
    pub members: Vec<(String, ArmMatch)>,
    /// `additionalProperties: false`: the only members allowed.
    pub closed: Option<Vec<String>>,
}

/// A JSON type, as an untagged union tells its arms apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum JsonType {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Array,
    Object,
}

/// A type expression.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Ty {
    Named(String),
    String,
    Bool,
    Int(IntKind),
    Float,
    /// Any JSON value (`true` schema, `{}`).
    Any,
    /// `null` only (a unit).
    Unit,
    Vec(Box<Ty>),
    /// A JSON object with arbitrary keys.
    Map(Box<Ty>),
    /// An inner nullable (`Vec<Option<T>>`, map values that may be null).
    Option(Box<Ty>),
    /// A type that contains itself by value (a recursive schema): held behind a `Box`.
    Boxed(Box<Ty>),
    /// A draft-07 tuple (`items` as an array of a fixed length): a Rust tuple.
    Tuple(Vec<Ty>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum IntKind {
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
}

/// A method of one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Method {
    /// The wire name (`thread/start`).
    pub wire: String,
    /// The marker type and variant name (`ThreadStart`).
    pub rust: String,
    pub params: Params,
    /// The result type of a request; `None` for notifications.
    pub response: Option<Ty>,
    pub doc: Option<String>,
    pub experimental: bool,
}

/// How a method carries `params`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Params {
    /// No `params` member at all in the schema.
    None,
    /// `params: {"type": "null"}`: the member may be absent or `null`.
    Null,
    /// A params value that must be present.
    Required(Ty),
    /// `params: anyOf [T, null]`, or not listed in `required`.
    Optional(Ty),
}

impl Params {
    pub fn ty(&self) -> Option<&Ty> {
        match self {
            Params::Required(t) | Params::Optional(t) => Some(t),
            Params::None | Params::Null => None,
        }
    }
}

/// Which of the four method unions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Direction {
    ClientRequest,
    ServerRequest,
    ServerNotification,
    ClientNotification,
}

impl Direction {
    pub const ALL: [Direction; 4] = [
        Direction::ClientRequest,
        Direction::ServerRequest,
        Direction::ServerNotification,
        Direction::ClientNotification,
    ];

    /// The schema definition that lists the direction's methods.
    pub fn union_name(self) -> &'static str {
        match self {
            Direction::ClientRequest => "ClientRequest",
            Direction::ServerRequest => "ServerRequest",
            Direction::ServerNotification => "ServerNotification",
            Direction::ClientNotification => "ClientNotification",
        }
    }

    pub fn is_request(self) -> bool {
        matches!(self, Direction::ClientRequest | Direction::ServerRequest)
    }
}

impl Ir {
    pub fn methods(&self, direction: Direction) -> &[Method] {
        match direction {
            Direction::ClientRequest => &self.client_requests,
            Direction::ServerRequest => &self.server_requests,
            Direction::ServerNotification => &self.server_notifications,
            Direction::ClientNotification => &self.client_notifications,
        }
    }

    pub fn methods_mut(&mut self, direction: Direction) -> &mut Vec<Method> {
        match direction {
            Direction::ClientRequest => &mut self.client_requests,
            Direction::ServerRequest => &mut self.server_requests,
            Direction::ServerNotification => &mut self.server_notifications,
            Direction::ClientNotification => &mut self.client_notifications,
        }
    }
}

impl Ty {
    /// The type without the `Box` of a recursive position (what the wire carries).
    pub fn unboxed(&self) -> &Ty {
        match self {
            Ty::Boxed(t) => t.unboxed(),
            t => t,
        }
    }

    /// Whether the type is or contains "any JSON" (`Value`).
    pub fn has_any(&self) -> bool {
        match self {
            Ty::Any => true,
            Ty::Vec(t) | Ty::Map(t) | Ty::Option(t) | Ty::Boxed(t) => t.has_any(),
            Ty::Tuple(items) => items.iter().any(Ty::has_any),
            Ty::Named(_) | Ty::String | Ty::Bool | Ty::Int(_) | Ty::Float | Ty::Unit => false,
        }
    }
}
