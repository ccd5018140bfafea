//! The runtime side of the experimental gate.
//!
//! The server rejects experimental methods and members unless `initialize` sent
//! `capabilities.experimentalApi: true`, with error `-32600` and the message
//! `<descriptor> requires experimentalApi capability`. [`ExperimentalApi`] tells a client
//! before it sends: the descriptor of the first experimental surface a value uses, worded as
//! the server words it (`mock/experimentalMethod`, `thread/start.dynamicTools`).

use std::fmt;

use crate::path::JsonPath;

/// Implemented for `ClientRequest` and every client request params type.
pub trait ExperimentalApi {
    /// The first experimental method or member this value uses (a member counts when it is
    /// present and not `null`), or `None` for a stable value.
    fn experimental_reason(&self) -> Option<ExperimentalReason>;
}

/// The experimental surface a request uses: its method, when the method is experimental, or
/// the member of its params that is, with the members that lead to it.
///
/// It displays as the server's descriptor (`mock/experimentalMethod`,
/// `thread/start.dynamicTools`, `thread/items/list.deferOutput.commandExecution`: the method,
/// then the members' wire names joined with `.`), which
/// [`error_message`](Self::error_message) puts in the server's error.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExperimentalReason {
    method: &'static str,
    members: Vec<&'static str>,
}

impl ExperimentalReason {
    /// The method of the request.
    pub fn method(&self) -> &'static str {
        self.method
    }

    /// The wire names of the members from the params down to the experimental one (outermost
    /// first); empty when the method itself is experimental.
    pub fn members(&self) -> &[&'static str] {
        &self.members
    }

    /// Where in the request the experimental member is (`params.dynamicTools`); `params` when
    /// the method itself is experimental.
    pub fn path(&self) -> JsonPath {
        self.members.iter().fold(JsonPath::root().key("params"), |path, member| path.key(member))
    }

    /// The message the server answers with when this is used without the capability.
    pub fn error_message(&self) -> String {
        experimental_error_message(&self.to_string())
    }

    /// An experimental method.
    // Used by the method tables of a schema that has an experimental method.
    #[allow(dead_code)]
    pub(crate) fn method_itself(method: &'static str) -> ExperimentalReason {
        ExperimentalReason { method, members: Vec::new() }
    }
}

impl fmt::Display for ExperimentalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.method)?;
        for member in &self.members {
            write!(f, ".{member}")?;
        }
        Ok(())
    }
}

/// The message the server answers with when the surface its descriptor `reason` names is used
/// without the capability.
pub fn experimental_error_message(reason: &str) -> String {
    format!("{reason} requires experimentalApi capability")
}

/// The experimental surface a value uses, found by walking it: every generated type has it
/// (with the `experimental` feature), written by its wire macro from the type's own
/// statement. An experimental member, enum value or union arm is the `#[cfg(feature =
/// "experimental")]` on its line; a member or arm whose type leads to experimental surface
/// says `experimental inside`, and only those are walked.
#[doc(hidden)]
pub trait Surface {
    /// Whether this value uses experimental surface; if so, the wire names of the members
    /// that lead to it are pushed onto `path` (outermost first).
    fn experimental_path(&self, path: &mut Vec<&'static str>) -> bool;
}

/// The first experimental surface `params` of `method` uses.
pub(crate) fn reason<T: Surface + ?Sized>(method: &'static str, params: &T) -> Option<ExperimentalReason> {
    let mut members = Vec::new();
    params.experimental_path(&mut members).then_some(ExperimentalReason { method, members })
}

/// Types that hold no experimental surface of their own.
macro_rules! no_surface {
    ($($ty:ty),*) => {
        $(impl Surface for $ty {
            fn experimental_path(&self, _: &mut Vec<&'static str>) -> bool {
                false
            }
        })*
    };
}

no_surface!(String, bool, i32, i64, u8, u16, u32, u64, f64, (), serde_json::Value, crate::RawJson);

impl<T: Surface + ?Sized> Surface for Box<T> {
    fn experimental_path(&self, path: &mut Vec<&'static str>) -> bool {
        (**self).experimental_path(path)
    }
}

impl<T: Surface> Surface for Option<T> {
    fn experimental_path(&self, path: &mut Vec<&'static str>) -> bool {
        self.as_ref().is_some_and(|value| value.experimental_path(path))
    }
}

impl<T: Surface> Surface for Vec<T> {
    fn experimental_path(&self, path: &mut Vec<&'static str>) -> bool {
        self.iter().any(|value| value.experimental_path(path))
    }
}

impl<T: Surface> Surface for std::collections::BTreeMap<String, T> {
    fn experimental_path(&self, path: &mut Vec<&'static str>) -> bool {
        self.values().any(|value| value.experimental_path(path))
    }
}

macro_rules! tuple_surface {
    ($(($($t:ident $i:tt),+))*) => {
        $(impl<$($t: Surface),+> Surface for ($($t,)+) {
            fn experimental_path(&self, path: &mut Vec<&'static str>) -> bool {
                $(self.$i.experimental_path(path))||+
            }
        })*
    };
}

tuple_surface!((A 0) (A 0, B 1) (A 0, B 1, C 2) (A 0, B 1, C 2, D 3) (A 0, B 1, C 2, D 3, E 4) (A 0, B 1, C 2, D 3, E 4, F 5));

/// The walk of a member or arm marked `experimental inside`: its value's surface, under its
/// wire name (a union arm adds no name: `None`).
// Used by the wire macros where a line is marked so; a schema may have none.
#[allow(dead_code)]
#[inline]
pub fn inside<T: Surface + ?Sized>(
    value: Option<&T>,
    wire: Option<&'static str>,
    path: &mut Vec<&'static str>,
) -> bool {
    let Some(value) = value else { return false };
    path.extend(wire);
    if value.experimental_path(path) {
        return true;
    }
    if wire.is_some() {
        path.pop();
    }
    false
}
