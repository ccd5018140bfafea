//! The keys of an IR's items, by what the schema calls them ([`crate::schema_name`]), never
//! by the generator's names: `dir:method` for methods (`ClientRequest:thread/list`),
//! `Type.member` (wire name), `Type::value` for enum values and union arms (the tag or key;
//! an untagged arm by [`untagged_arm`]), `ServerNotification.emittedAtMs` for the
//! envelope. A type is kept apart, by its schema name (`LoginAccountParams::chatgpt`).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ir::{Direction, Ir, Ty, UntaggedArm};

/// An item's key: made by one of the functions below from what the schema calls the item, or
/// read from a committed file ([`super::HISTORY_FILE`], [`super::RETIRED_FILE`]), whose keys
/// these functions wrote; printed as it is made. Nothing splits one back into parts: what an
/// item is lives beside its key, in the IR.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Key(String);

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub fn method(direction: Direction, wire: &str) -> Key {
    Key(format!("{}:{wire}", direction.union_name()))
}
pub fn member(owner: &str, wire: &str) -> Key {
    Key(format!("{owner}.{wire}"))
}
pub fn value(owner: &str, wire: &str) -> Key {
    Key(format!("{owner}::{wire}"))
}
/// An untagged union's arm, by what its schema is: a type's schema name (the union's own
/// arm `Union::x` as it is, a definition as `Union::Definition`), else its JSON type
/// (`Union::string`).
pub fn untagged_arm(ir: &Ir, owner: &str, arm: &UntaggedArm) -> Key {
    value(owner, &untagged_arm_name(ir, owner, arm))
}
/// [`untagged_arm`] without the union's name.
pub fn untagged_arm_name(ir: &Ir, owner: &str, arm: &UntaggedArm) -> String {
    fn word(ir: &Ir, owner: &str, ty: &Ty) -> String {
        match ty {
            Ty::Named(n) => match ir.types.get(n) {
                Some(def) => {
                    let prefix = format!("{owner}::");
                    def.schema.strip_prefix(&prefix).unwrap_or(&def.schema).to_owned()
                }
                None => n.clone(),
            },
            Ty::Option(t) | Ty::Boxed(t) => word(ir, owner, t),
            Ty::String => "string".into(),
            Ty::Bool => "boolean".into(),
            Ty::Int(_) => "integer".into(),
            Ty::Float => "number".into(),
            Ty::Vec(_) | Ty::Tuple(_) => "array".into(),
            Ty::Map(_) => "object".into(),
            Ty::Unit => "null".into(),
            Ty::Any => "any".into(),
        }
    }
    word(ir, owner, &arm.ty)
}
