//! A walk over a decoded value that reports what only its types know.
//!
//! Serde's data model hides some things a tool comparing the wire with the types needs: an
//! `Unrecognized` variant (an enum value, union arm or method this version of the crate does
//! not know) is read and written exactly like a plain string or map, and an `Option<Option<T>>`
//! member (where `null` is not the same as absent) looks like any optional member. Every type
//! of this crate implements [`Inspect`], written with the type by the generator, which walks
//! the value and tells an [`Inspector`] about them, each with its JSON path:
//!
//! ```
//! use codex_app_protocol::inspect::{Inspect, Inspector, Step};
//! use codex_app_protocol::path::JsonPath;
//! use codex_app_protocol::ServerNotification;
//!
//! #[derive(Default)]
//! struct Unknowns(Vec<String>);
//!
//! impl Inspector for Unknowns {
//!     fn unrecognized(&mut self, path: &[Step<'_>], ty: &'static str) {
//!         self.0.push(format!("{ty} at {}", JsonPath::from_steps(path)));
//!     }
//! }
//!
//! let line = r#"{"method":"thread/status/changed","params":{"threadId":"t","status":{"type":"sleeping"}}}"#;
//! let message: ServerNotification = serde_json::from_str(line)?;
//! let mut unknowns = Unknowns::default();
//! message.inspect(&mut Vec::new(), &mut unknowns);
//! assert_eq!(unknowns.0, ["ThreadStatus at params.status"]);
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! The walk takes `&mut dyn Inspector`, so each type's walk is compiled once, whatever the
//! inspector.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::RawJson;

pub use crate::path::Step;

/// What a walk reports. Every method has a default that ignores the report.
pub trait Inspector {
    /// An `Unrecognized` variant of the type `ty` at `path`: an enum value, union arm or
    /// method this version of the crate does not know (kept as it came).
    fn unrecognized(&mut self, path: &[Step<'_>], ty: &'static str) {
        let _ = (path, ty);
    }

    /// A variant of a message, response or union enum `ty` at `path`, reported before its
    /// payload is walked: `rust` is the Rust variant name, `wire` its method or tag on the wire
    /// (`None` for an arm of an untagged union).
    fn variant(&mut self, path: &[Step<'_>], ty: &'static str, rust: &'static str, wire: Option<&str>) {
        let _ = (path, ty, rust, wire);
    }

    /// A member of the struct `ty` typed `Option<Option<T>>` (an explicit `null` is not the
    /// same as its absence); `path` ends with the member. Reported whether it is present or not.
    fn null_meaningful(&mut self, path: &[Step<'_>], ty: &'static str) {
        let _ = (path, ty);
    }
}

/// A value that can be walked for its [`Inspector`] reports. `path` is where the value sits
/// (empty for a whole message); the walk pushes and pops its own steps.
pub trait Inspect {
    fn inspect<'a>(&'a self, path: &mut Vec<Step<'a>>, inspector: &mut dyn Inspector);
}

macro_rules! leaves {
    ($($t:ty),*) => {
        $(impl Inspect for $t {
            #[inline]
            fn inspect<'a>(&'a self, _: &mut Vec<Step<'a>>, _: &mut dyn Inspector) {}
        })*
    };
}

leaves!(String, bool, i8, i16, i32, i64, u8, u16, u32, u64, f64, (), Value, RawJson);

impl<T: Inspect> Inspect for Option<T> {
    #[inline]
    fn inspect<'a>(&'a self, path: &mut Vec<Step<'a>>, inspector: &mut dyn Inspector) {
        if let Some(value) = self {
            value.inspect(path, inspector);
        }
    }
}

impl<T: Inspect + ?Sized> Inspect for Box<T> {
    #[inline]
    fn inspect<'a>(&'a self, path: &mut Vec<Step<'a>>, inspector: &mut dyn Inspector) {
        (**self).inspect(path, inspector);
    }
}

/// Draft-07 tuples (`items` as an array): each position walked under its index.
macro_rules! tuples {
    ($(($($t:ident $i:tt),+))*) => {
        $(impl<$($t: Inspect),+> Inspect for ($($t,)+) {
            fn inspect<'a>(&'a self, path: &mut Vec<Step<'a>>, inspector: &mut dyn Inspector) {
                $(
                    path.push(Step::Index($i));
                    self.$i.inspect(path, inspector);
                    path.pop();
                )+
            }
        })*
    };
}

tuples! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11)
}

impl<T: Inspect> Inspect for Vec<T> {
    fn inspect<'a>(&'a self, path: &mut Vec<Step<'a>>, inspector: &mut dyn Inspector) {
        for (i, item) in self.iter().enumerate() {
            path.push(Step::Index(i));
            item.inspect(path, inspector);
            path.pop();
        }
    }
}

impl<T: Inspect> Inspect for BTreeMap<String, T> {
    fn inspect<'a>(&'a self, path: &mut Vec<Step<'a>>, inspector: &mut dyn Inspector) {
        for (key, value) in self {
            member(path, inspector, key, value);
        }
    }
}

/// Walks `value` as the member `key` of the object at `path`.
#[inline]
pub(crate) fn member<'a, T: Inspect + ?Sized>(
    path: &mut Vec<Step<'a>>,
    inspector: &mut dyn Inspector,
    key: &'a str,
    value: &'a T,
) {
    path.push(Step::Key(key));
    value.inspect(path, inspector);
    path.pop();
}

/// A variant of the enum `ty` with its payload (at the same path).
#[inline]
pub(crate) fn variant<'a, T: Inspect + ?Sized>(
    path: &mut Vec<Step<'a>>,
    inspector: &mut dyn Inspector,
    ty: &'static str,
    rust: &'static str,
    wire: Option<&str>,
    payload: &'a T,
) {
    inspector.variant(path, ty, rust, wire);
    payload.inspect(path, inspector);
}

/// A message's variant: reported at the message's path, its payload walked under `member`
/// (`params` or nothing for a response's `result`, which the caller roots).
#[inline]
pub(crate) fn message<'a>(
    path: &mut Vec<Step<'a>>,
    inspector: &mut dyn Inspector,
    ty: &'static str,
    rust: &'static str,
    wire: &str,
    params: Option<&'a dyn Inspect>,
) {
    inspector.variant(path, ty, rust, Some(wire));
    if let Some(params) = params {
        member(path, inspector, "params", params);
    }
}

/// A variant of an externally tagged union written `{"key": payload}`: reported at the
/// union's path, its payload walked under `key`.
#[inline]
#[allow(dead_code)] // a schema may have no externally tagged union with object forms
pub(crate) fn keyed<'a, T: Inspect + ?Sized>(
    path: &mut Vec<Step<'a>>,
    inspector: &mut dyn Inspector,
    ty: &'static str,
    rust: &'static str,
    key: &'static str,
    payload: &'a T,
) {
    inspector.variant(path, ty, rust, Some(key));
    member(path, inspector, key, payload);
}
