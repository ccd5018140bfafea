//! The macros the generated types are written with: each states a type's wire shape once
//! (Rust name, wire name, presence, type), and every impl that reads or writes it comes from
//! that one statement. Written by hand; not part of the public API.
//!
//! - [`wire_struct!`]: a struct (a JSON object with known members). Each member is
//!   `pub rust_name: Type = "wireName" (presence),` (after its docs, an optional
//!   `#[deprecated(note = ...)]` and an optional `#[cfg(...)]`) where the presence is one of
//!   the modules below; an open object ends with `..pub extra: BTreeMap<String, T>`, the members the
//!   schema leaves open; `fn new(required: T, ...);` after the struct asks for a constructor.
//!   Expands to the struct, `Serialize` (members in order, an optional one
//!   only when `Some`, then the open object's members), its members' table (`codec::Table`:
//!   each member's wire name, field offset and the reads of its type and presence), which
//!   `codec::DecodeStruct` hands the decoding loop every struct shares, and `Deserialize`.
//! - [`wire_enum!`]: a string enum, `Variant = "wire",` per value, plus the catch-all
//!   `Unrecognized(String)`. `as_str`, `Serialize` and decoding all read the same table.
//! - [`wire_tagged!`], [`wire_external!`] and [`wire_untagged!`]: the three kinds of union,
//!   each from one table of arms.
//!
//! Every macro also writes the type's `Inspect` walk from the same statement (with the
//! `inspect` feature).
//!
//! With the `experimental` feature every macro also writes the type's
//! `experimental::Surface` walk from the same lines: a member, value or arm gated by its
//! `#[cfg(feature = "experimental")]` is experimental surface when used; a member whose type
//! leads to some says so after its presence (`(optional, experimental inside)`), an arm after
//! its wire name (`= "tag" (experimental inside)`), and only those are walked into.
//!
//! The presence of a member decides how its field is written and read; each is a module with
//! the same items (`member`, its entry in the struct's table, which decoding and the `inspect`
//! walk read; `write`; `initial!`),
//! so the macros need no case analysis:
//!
//! | presence | field | absent | `null` | written |
//! |---|---|---|---|---|
//! | [`required`] | `T` | error | as `T` reads it | always |
//! | [`optional`] | `Option<T>` | `None` | `None` | when `Some` |
//! | [`required_nullable`] | `Option<T>` | `None` | `None` | always (`None` as `null`) |
//! | [`optional_nullable`] | `Option<Option<T>>` | `None` | `Some(None)` | when `Some` |

/// A struct and its wire impls, from one list of members. See the module docs.
macro_rules! wire_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[doc = $doc:literal])*
                $(#[deprecated(note = $note:literal)])?
                $(#[cfg($cfg:meta)])?
                pub $field:ident: $ty:ty = $wire:literal ($presence:ident $(, experimental $inside:ident)?),
            )*
            $(..pub $extra:ident: $extra_ty:ty)?
        }
        $(fn new($($param:ident: $param_ty:ty),+);)?
    ) => {
        $(#[$meta])*
        pub struct $name {
            $(
                $(#[doc = $doc])*
                $(#[deprecated(note = $note)])?
                $(#[cfg($cfg)])?
                pub $field: $ty,
            )*
            $(
                /// Members the schema leaves open (`additionalProperties`), kept as they came.
                pub $extra: $extra_ty,
            )?
        }

        impl serde::Serialize for $name {
            #[allow(unused_mut, deprecated)]
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                // A call per member, without a branch on its result: the first error is kept,
                // and every write after it does nothing.
                let mut map = $crate::wire_macros::Members::new(serializer)?;
                $(
                    $(#[cfg($cfg)])?
                    $crate::wire_macros::$presence::write(&mut map, $wire, &self.$field);
                )*
                $(map.extra(&self.$extra);)?
                map.end()
            }
        }

        impl $crate::codec::DecodeStruct for $name {
            const EXPECTING: &'static str = concat!("struct ", stringify!($name));

            #[inline]
            fn visit_members(reader: &mut $crate::codec::Reader<'_>, object: $crate::codec::Object) -> $crate::codec::Result<Self> {
                // SAFETY: `TABLE` lists every field of the struct, each with its type, from the
                // struct's own list of members above.
                unsafe { $crate::codec::decode_members(reader, object, Self::table()) }
            }
        }

        impl $name {
            /// The members' table the shared decoding loop reads (`codec::structs`): each field's
            /// offset with the functions of its type and presence.
            #[allow(deprecated)]
            const TABLE: $crate::codec::Table = $crate::codec::Table::new(
                &[$(
                    $(#[cfg($cfg)])?
                    $crate::wire_macros::$presence::member::<$ty>($wire, ::std::mem::offset_of!(Self, $field)),
                )*],
                $crate::wire_macros::extra_table!($($extra_ty, ::std::mem::offset_of!(Self, $extra))?),
            );

            /// The table as the loops read it. With `inspect`, which reads it too, one `static`
            /// (a constant's address is a copy of it in each codegen unit that takes it, so the
            /// decoder's and the walk's would be two); without, the constant, which only the
            /// types decoded in a build compile.
            #[inline]
            fn table() -> &'static $crate::codec::Table {
                #[cfg(feature = "inspect")]
                {
                    static TABLE: $crate::codec::Table = $name::TABLE;
                    &TABLE
                }
                #[cfg(not(feature = "inspect"))]
                {
                    &Self::TABLE
                }
            }
        }

        $crate::wire_macros::decode_with!($name, $crate::codec::decode_struct);

        #[cfg(feature = "inspect")]
        impl $crate::inspect::Inspect for $name {
            fn inspect<'a>(&'a self, path: &mut Vec<$crate::inspect::Step<'a>>, inspector: &mut dyn $crate::inspect::Inspector) {
                // SAFETY: `TABLE` lists every field of the struct, each with its type, from the
                // struct's own list of members above; `self` is borrowed for `'a`.
                unsafe {
                    $crate::codec::inspect_members(
                        (self as *const Self).cast(),
                        Self::table(),
                        stringify!($name),
                        path,
                        inspector,
                    )
                };
                $($crate::inspect::Inspect::inspect(&self.$extra, path, inspector);)?
            }
        }

        #[cfg(feature = "experimental")]
        impl $crate::experimental::Surface for $name {
            #[allow(unused_variables, deprecated)]
            fn experimental_path(&self, path: &mut Vec<&'static str>) -> bool {
                $(
                    $(
                        #[cfg($cfg)]
                        if $crate::wire_macros::$presence::used(&self.$field).is_some() {
                            path.push($wire);
                            return true;
                        }
                    )?
                    $(
                        if $crate::experimental::$inside($crate::wire_macros::$presence::used(&self.$field), Some($wire), path) {
                            return true;
                        }
                    )?
                )*
                false
            }
        }

        $crate::wire_macros::constructor! {
            $name ($($($param: $param_ty),+)?) {
                $($(#[cfg($cfg)])? $field: $presence,)*
            }
            $($extra)?
        }
    };
}

/// `new(required members...)`, when the struct has required members and others: each
/// required member from its parameter, every other one absent.
macro_rules! constructor {
    ($name:ident () { $($fields:tt)* } $($extra:ident)?) => {};
    (
        $name:ident ($($param:ident: $param_ty:ty),+) {
            $($(#[cfg($cfg:meta)])? $field:ident: $presence:ident,)*
        }
        $($extra:ident)?
    ) => {
        impl $name {
            /// The required members; every optional member starts absent.
            #[allow(deprecated)]
            pub fn new($($param: $param_ty),+) -> Self {
                Self {
                    $($(#[cfg($cfg)])? $field: $crate::wire_macros::$presence::initial!($field),)*
                    $($extra: Default::default(),)?
                }
            }
        }
    };
}

/// `Deserialize` and `codec::Decode` for a type that decodes with `$decode` (every generated
/// type): its `Deserialize` buffers its value's text and reads that.
macro_rules! decode_with {
    ($name:ident, $decode:path) => {
        impl<'de> serde::Deserialize<'de> for $name {
            #[inline]
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::codec::deserialize_via_text(deserializer)
            }
        }

        impl $crate::codec::Decode for $name {
            #[inline]
            fn decode(reader: &mut $crate::codec::Reader<'_>) -> $crate::codec::Result<Self> {
                $decode(reader)
            }
        }
    };
}

/// A struct's open object in its table: `Some` with the map's field, or `None`.
macro_rules! extra_table {
    () => {
        None
    };
    ($ty:ty, $offset:expr) => {
        Some($crate::codec::Extra::map::<$ty>($offset))
    };
}

/// A string enum and its wire impls, from one table of values. See the module docs.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $(
                $(#[doc = $doc:literal])*
                $(#[cfg($cfg:meta)])?
                $variant:ident = $wire:literal,
            )*
        }
    ) => {
        $(#[$meta])*
        pub enum $name {
            $(
                $(#[doc = $doc])*
                $(#[cfg($cfg)])?
                $variant,
            )*
            /// A value this version of the crate does not know, kept as it came.
            Unrecognized(String),
        }

        impl $name {
            /// The value as it is written on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant => $wire,
                    )*
                    Self::Unrecognized(value) => value,
                }
            }
        }

        impl $crate::codec::StringEnum for $name {
            const EXPECTING: &'static str = concat!("`", stringify!($name), "` (a string)");

            #[inline]
            fn from_wire(value: &str) -> Option<Self> {
                Some(match value {
                    $(
                        $(#[cfg($cfg)])?
                        $wire => Self::$variant,
                    )*
                    _ => return None,
                })
            }

            #[inline]
            fn unrecognized(value: String) -> Self {
                Self::Unrecognized(value)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        $crate::wire_macros::decode_with!($name, $crate::codec::decode_string_enum);

        #[cfg(feature = "inspect")]
        impl $crate::inspect::Inspect for $name {
            fn inspect<'a>(&'a self, path: &mut Vec<$crate::inspect::Step<'a>>, inspector: &mut dyn $crate::inspect::Inspector) {
                if let Self::Unrecognized(_) = self {
                    inspector.unrecognized(path, stringify!($name));
                }
            }
        }

        #[cfg(feature = "experimental")]
        impl $crate::experimental::Surface for $name {
            fn experimental_path(&self, _: &mut Vec<&'static str>) -> bool {
                $($(
                    #[cfg($cfg)]
                    if let Self::$variant = self {
                        return true;
                    }
                )?)*
                false
            }
        }
    };
}

/// An internally tagged union (`{"type": "tag", ...members}`) and its wire impls, from one
/// table: `Variant(Payload) = "tag",` per arm, plus the catch-all `Unrecognized` that keeps an
/// unknown arm's object. `Serialize` (the tag first, then the payload's members), the tag-first
/// decoding and the walk all read the same table.
macro_rules! wire_tagged {
    (
        $(#[$meta:meta])*
        pub enum $name:ident (tag = $tag:literal) {
            $(
                $(#[doc = $doc:literal])*
                $(#[cfg($cfg:meta)])?
                $variant:ident($payload:ty) = $wire:literal $((experimental $inside:ident))?,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(serde::Serialize)]
        #[serde(tag = $tag)]
        pub enum $name {
            $(
                $(#[doc = $doc])*
                $(#[cfg($cfg)])?
                #[serde(rename = $wire)]
                $variant($payload),
            )*
            /// A variant this version of the crate does not know; the whole object, kept as it came.
            #[serde(untagged)]
            Unrecognized(serde_json::Map<String, serde_json::Value>),
        }

        impl $crate::codec::TaggedUnion for $name {
            const TAG: &'static str = $tag;
            const EXPECTING: &'static str = concat!("`", stringify!($name), "` (a JSON object with a `", $tag, "` member)");

            fn decode_arm(
                tag: &str,
                reader: &mut $crate::codec::Reader<'_>,
                object: $crate::codec::Object,
                start: $crate::codec::Mark,
            ) -> $crate::codec::Result<Self> {
                Ok(match tag {
                    $(
                        $(#[cfg($cfg)])?
                        $wire => Self::$variant(<$payload as $crate::codec::DecodeStruct>::visit_members(reader, object)?),
                    )*
                    _ => Self::Unrecognized($crate::codec::unrecognized_arm(reader, start)?),
                })
            }
        }

        $crate::wire_macros::decode_with!($name, $crate::codec::decode_tagged);

        #[cfg(feature = "inspect")]
        impl $crate::inspect::Inspect for $name {
            fn inspect<'a>(&'a self, path: &mut Vec<$crate::inspect::Step<'a>>, inspector: &mut dyn $crate::inspect::Inspector) {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant(payload) => {
                            $crate::inspect::variant(path, inspector, stringify!($name), stringify!($variant), Some($wire), payload)
                        }
                    )*
                    Self::Unrecognized(_) => inspector.unrecognized(path, stringify!($name)),
                }
            }
        }

        $crate::wire_macros::union_surface!($name, units [] arms [$([$($cfg)?] $variant [$($inside)?])*]);
    };
}

/// An untagged union (each arm its own JSON) and its wire impls, from one table:
/// `Variant(Type) = index if <codec::Match>,` per arm, where the
/// [`codec::Match`](crate::codec::Match) states what the arm's schema accepts. Decoding picks
/// the arm by those (the way the schema would pick it) and decodes only that arm; `Serialize`
/// writes the arm's value; the walk reports the arm.
macro_rules! wire_untagged {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $(
                $(#[doc = $doc:literal])*
                $(#[cfg($cfg:meta)])?
                $variant:ident($ty:ty) = $index:literal $((experimental $inside:ident))? if $accepts:expr,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(serde::Serialize)]
        #[serde(untagged)]
        pub enum $name {
            $(
                $(#[doc = $doc])*
                $(#[cfg($cfg)])?
                $variant($ty),
            )*
        }

        impl $crate::codec::UntaggedUnion for $name {
            const EXPECTING: &'static str = concat!("`", stringify!($name), "` (one of: ", stringify!($($variant),*), ")");
            const ARMS: &'static [(usize, $crate::codec::Match)] = &[$($(#[cfg($cfg)])? ($index, $accepts),)*];

            fn decode_arm(arm: usize, reader: &mut $crate::codec::Reader<'_>) -> $crate::codec::Result<Self> {
                Ok(match arm {
                    $(
                        $(#[cfg($cfg)])?
                        $index => Self::$variant(<$ty as $crate::codec::Decode>::decode(reader)?),
                    )*
                    _ => return Err(serde::de::Error::custom("no such variant")),
                })
            }
        }

        $crate::wire_macros::decode_with!($name, $crate::codec::decode_untagged);

        #[cfg(feature = "inspect")]
        impl $crate::inspect::Inspect for $name {
            fn inspect<'a>(&'a self, path: &mut Vec<$crate::inspect::Step<'a>>, inspector: &mut dyn $crate::inspect::Inspector) {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant(value) => {
                            $crate::inspect::variant(path, inspector, stringify!($name), stringify!($variant), None, value)
                        }
                    )*
                }
            }
        }

        $crate::wire_macros::union_surface!($name, units [] arms [$([$($cfg)?] $variant [$($inside)?])*]);
    };
}

/// An externally tagged union (a plain string, or an object with one member whose key names
/// the variant) and its wire impls, from two tables: the string values
/// (`Variant = "wire",`), then after `keyed` the object forms (`Variant(Payload) = "key",`),
/// plus the catch-all `Unrecognized` that keeps an unknown value whole.
macro_rules! wire_external {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $(
                $(#[doc = $udoc:literal])*
                $(#[cfg($ucfg:meta)])?
                $unit:ident = $uwire:literal,
            )*
        }
        keyed {
            $(
                $(#[doc = $kdoc:literal])*
                $(#[cfg($kcfg:meta)])?
                $keyed:ident($payload:ty) = $kwire:literal $((experimental $inside:ident))?,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(serde::Serialize)]
        pub enum $name {
            $(
                $(#[doc = $udoc])*
                $(#[cfg($ucfg)])?
                #[serde(rename = $uwire)]
                $unit,
            )*
            $(
                $(#[doc = $kdoc])*
                $(#[cfg($kcfg)])?
                #[serde(rename = $kwire)]
                $keyed($payload),
            )*
            /// A value this version of the crate does not know, kept as it came.
            #[serde(untagged)]
            Unrecognized(serde_json::Value),
        }

        impl $crate::codec::ExternalUnion for $name {
            const EXPECTING: &'static str = concat!("`", stringify!($name), "` (a string or an object with one member)");

            #[allow(clippy::match_single_binding)]
            #[inline]
            fn from_unit(value: &str) -> Self {
                match value {
                    $(
                        $(#[cfg($ucfg)])?
                        $uwire => Self::$unit,
                    )*
                    _ => Self::Unrecognized(serde_json::Value::String(value.to_owned())),
                }
            }

            #[allow(clippy::match_single_binding)]
            fn decode_keyed(key: &str, reader: &mut $crate::codec::Reader<'_>) -> $crate::codec::Result<Self> {
                Ok(match key {
                    $(
                        $(#[cfg($kcfg)])?
                        $kwire => Self::$keyed(<$payload as $crate::codec::Decode>::decode(reader)?),
                    )*
                    _ => Self::Unrecognized($crate::codec::unrecognized_keyed(key, reader)?),
                })
            }

            #[inline]
            fn unrecognized(value: serde_json::Value) -> Self {
                Self::Unrecognized(value)
            }
        }

        $crate::wire_macros::decode_with!($name, $crate::codec::decode_external);

        #[cfg(feature = "inspect")]
        impl $crate::inspect::Inspect for $name {
            fn inspect<'a>(&'a self, path: &mut Vec<$crate::inspect::Step<'a>>, inspector: &mut dyn $crate::inspect::Inspector) {
                match self {
                    $(
                        $(#[cfg($ucfg)])?
                        Self::$unit => inspector.variant(path, stringify!($name), stringify!($unit), Some($uwire)),
                    )*
                    $(
                        $(#[cfg($kcfg)])?
                        Self::$keyed(payload) => {
                            $crate::inspect::keyed(path, inspector, stringify!($name), stringify!($keyed), $kwire, payload)
                        }
                    )*
                    Self::Unrecognized(_) => inspector.unrecognized(path, stringify!($name)),
                }
            }
        }

        $crate::wire_macros::union_surface!(
            $name,
            units [$([$($ucfg)?] $unit)*]
            arms [$([$($kcfg)?] $keyed [$($inside)?])*]
        );
    };
}

/// The `Surface` walk of a union (tagged, untagged, externally tagged), the same for each: an
/// experimental value or arm is surface itself; an arm marked `experimental inside` is asked
/// for the path inside its value.
#[doc(hidden)]
macro_rules! union_surface {
    (
        $name:ident,
        units [$([$($ucfg:meta)?] $unit:ident)*]
        arms [$([$($cfg:meta)?] $variant:ident [$($inside:ident)?])*]
    ) => {
        #[cfg(feature = "experimental")]
        impl $crate::experimental::Surface for $name {
            fn experimental_path(&self, path: &mut Vec<&'static str>) -> bool {
                $($(
                    #[cfg($ucfg)]
                    if let Self::$unit = self {
                        return true;
                    }
                )?)*
                $(
                    $(
                        #[cfg($cfg)]
                        if let Self::$variant(_) = self {
                            return true;
                        }
                    )?
                    $(
                        if let Self::$variant(value) = self {
                            return $crate::experimental::$inside(Some(value), None, path);
                        }
                    )?
                )*
                let _ = path;
                false
            }
        }
    };
}

pub(crate) use {
    constructor, decode_with, extra_table, union_surface, wire_enum, wire_external, wire_struct, wire_tagged,
    wire_untagged,
};

use crate::codec::{Decode, Field, Member, Present};
use serde::ser::{Serialize, SerializeMap};

/// A struct's members as they are written: the map, and the first error a write gave. Each
/// member is one call that returns nothing (what a struct's `Serialize` compiles per member),
/// not a call and a branch on its result.
pub struct Members<M: SerializeMap> {
    map: M,
    error: Option<M::Error>,
}

impl<M: SerializeMap> Members<M> {
    #[inline]
    pub fn new<S: serde::Serializer<SerializeMap = M, Ok = M::Ok, Error = M::Error>>(
        serializer: S,
    ) -> Result<Self, M::Error> {
        Ok(Members { map: serializer.serialize_map(None)?, error: None })
    }

    /// Writes one member, unless a write before failed.
    #[inline]
    pub fn entry<T: Serialize + ?Sized>(&mut self, wire: &str, value: &T) {
        if self.error.is_none() {
            if let Err(e) = self.map.serialize_entry(wire, value) {
                self.error = Some(e);
            }
        }
    }

    /// The members the schema leaves open, as they came.
    #[inline]
    pub fn extra<V: Serialize>(&mut self, extra: &std::collections::BTreeMap<String, V>) {
        for (key, value) in extra {
            self.entry(key, value);
        }
    }

    #[inline]
    pub fn end(self) -> Result<M::Ok, M::Error> {
        match self.error {
            Some(e) => Err(e),
            None => self.map.end(),
        }
    }
}

/// A member that must be present: the field is `T`.
pub mod required {
    use super::*;

    /// In `new`, a required member starts as the parameter of the same name.
    macro_rules! initial {
        ($field:ident) => {
            $field
        };
    }
    pub(crate) use initial;

    /// While decoding: the value, once its member was read.
    pub type Slot<T> = Option<T>;

    /// The member in its struct's table: its field is the value.
    pub const fn member<F: Decode + Field>(wire: &'static str, offset: usize) -> Member {
        Member::required::<F>(wire, offset)
    }

    #[inline]
    pub fn write<M: SerializeMap, T: Serialize>(map: &mut Members<M>, wire: &'static str, value: &T) {
        map.entry(wire, value)
    }

    /// The member's value when the member is used (present and not `null`), for the
    /// experimental walk: always.
    #[cfg(feature = "experimental")]
    #[inline]
    pub fn used<T>(value: &T) -> Option<&T> {
        Some(value)
    }
}

/// A member that may be absent, where `null` is the same as absent: the field is
/// `Option<T>`, written only when `Some`.
pub mod optional {
    use super::*;

    /// In `new`, a member that may be absent starts absent.
    macro_rules! initial {
        ($field:ident) => {
            None
        };
    }
    pub(crate) use initial;

    /// While decoding: the field itself (`None` until the member is read).
    pub type Slot<T> = T;

    /// The member in its struct's table: its field is an `Option`, `null` read as absent.
    pub const fn member<F: Decode + Default + Field>(wire: &'static str, offset: usize) -> Member {
        Member::optional::<F>(wire, offset)
    }

    #[inline]
    pub fn write<M: SerializeMap, T: Serialize>(map: &mut Members<M>, wire: &'static str, value: &Option<T>) {
        if let Some(value) = value {
            map.entry(wire, value)
        }
    }

    /// The member's value when it is used: when present (`null` reads as absent).
    #[cfg(feature = "experimental")]
    #[inline]
    pub fn used<T>(value: &Option<T>) -> Option<&T> {
        value.as_ref()
    }
}

/// A member that must be present but may be `null`: the field is `Option<T>`, always written
/// (`None` as `null`); an absent one reads as `None`.
// Each presence module goes unused with the schemas that have no member of that presence.
#[allow(dead_code, unused_imports)]
pub mod required_nullable {
    use super::*;

    #[inline]
    pub fn write<M: SerializeMap, T: Serialize>(map: &mut Members<M>, wire: &'static str, value: &Option<T>) {
        map.entry(wire, value)
    }

    #[cfg(feature = "experimental")]
    pub use super::optional::used;
    pub(crate) use super::optional::{initial, member};
}

/// A member whose `null` means something other than its absence: the field is
/// `Option<Option<T>>`, `None` absent, `Some(None)` an explicit `null`.
#[allow(dead_code, unused_imports)]
pub mod optional_nullable {
    use super::*;

    pub(crate) use super::optional::{initial, write};

    /// The member in its struct's table: its field is an `Option<Option<T>>`, `Some` when
    /// present.
    pub const fn member<F: Present + Default + Field>(wire: &'static str, offset: usize) -> Member {
        Member::present::<F>(wire, offset)
    }

    /// The member's value when it is used: present and not `null`.
    #[cfg(feature = "experimental")]
    #[inline]
    pub fn used<T>(value: &Option<Option<T>>) -> Option<&T> {
        value.as_ref().and_then(Option::as_ref)
    }
}
