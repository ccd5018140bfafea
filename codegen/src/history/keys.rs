//! The keys of an IR's items, by what the schema calls them ([`crate::schema_name`]), never
//! by the generator's names: `dir:method` for methods (`ClientRequest:thread/list`),
//! `Type.member` (wire name), `Type::value` for enum values and union arms (the tag or key;
//! an untagged arm by [`untagged_arm`]), `ServerNotification.emittedAtMs` for the
//! envelope. A type is kept apart, by its schema name (`LoginAccountParams::chatgpt`).

use crate::ir::{Direction, Ir, Ty, UntaggedArm};

pub fn method(direction: Direction, wire: &str) -> String {
    format!("{}:{wire}", direction.union_name())
}
pub fn member(owner: &str, wire: &str) -> String {
    format!("{owner}.{wire}")
}
pub fn value(owner: &str, wire: &str) -> String {
    format!("{owner}::{wire}")
}
/// An untagged union's arm, by what its schema is: a type's schema name (the union's own
/// arm `Union::x` as it is, a definition as `Union::Definition`), else its JSON type
/// (`Union::string`).
pub fn untagged_arm(ir: &Ir, owner: &str, arm: &UntaggedArm) -> String {
    format!("{owner}::{}", untagged_arm_name(ir, owner, arm))
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
