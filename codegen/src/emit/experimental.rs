//! Which types lead to experimental surface, for the `experimental inside` marks the wire
//! macros walk (`ExperimentalApi::experimental_reason`).
//!
//! An experimental member, enum value, union arm or method is gated on its own line
//! (`#[cfg(feature = "experimental")]`), and that gate is also what marks it used. A member or
//! arm that is not experimental but whose type can hold experimental surface says
//! `experimental inside`: the walk goes into it, adding the member's wire name to the
//! descriptor (`thread/items/list.deferOutput.commandExecution`). Nothing else is walked.

use std::collections::BTreeSet;

use crate::ir::*;

/// The named types a value of which can use experimental surface.
pub struct Reaching(BTreeSet<String>);

impl Reaching {
    pub fn new(ir: &Ir) -> Self {
        // A fixed point: a type reaches when it is experimental, has an experimental part,
        // or has a part whose type reaches.
        let mut set = BTreeSet::new();
        loop {
            let before = set.len();
            for (name, def) in &ir.types {
                if set.contains(name) {
                    continue;
                }
                let reaches = |t: &Ty| ty_in(t, &set);
                let r = def.experimental
                    || match &def.kind {
                        TypeKind::Alias(t) => reaches(t),
                        TypeKind::Struct(s) => s.fields.iter().any(|f| f.experimental || reaches(&f.ty)),
                        TypeKind::StringEnum(e) => e.values.iter().any(|v| v.experimental),
                        TypeKind::Tagged(t) => {
                            t.arms.iter().any(|a| a.experimental || reaches(&Ty::Named(a.payload.clone())))
                        }
                        TypeKind::External(e) => {
                            e.arms.iter().any(|a| a.experimental || a.payload.as_ref().is_some_and(reaches))
                        }
                        TypeKind::Untagged(u) => u.arms.iter().any(|a| a.experimental || reaches(&a.ty)),
                    };
                if r {
                    set.insert(name.clone());
                }
            }
            if set.len() == before {
                return Reaching(set);
            }
        }
    }

    /// Whether a value of `ty` can use experimental surface.
    pub fn ty(&self, ty: &Ty) -> bool {
        ty_in(ty, &self.0)
    }
}

fn ty_in(ty: &Ty, set: &BTreeSet<String>) -> bool {
    match ty {
        Ty::Vec(t) | Ty::Map(t) | Ty::Option(t) | Ty::Boxed(t) => ty_in(t, set),
        Ty::Tuple(items) => items.iter().any(|t| ty_in(t, set)),
        Ty::Named(n) => set.contains(n),
        _ => false,
    }
}
