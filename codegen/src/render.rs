//! How an IR type is written as Rust source: the one place. The emitters write types with it
//! (as text in the wire-macro invocations, as tokens elsewhere) and the changelog
//! (`diff::written`) shows types with it, so a report names exactly the generated type.

use proc_macro2::TokenStream;

use crate::ir::{Field, Presence, Ty};

/// The generated Rust type (`Option<Vec<Turn>>`, `BTreeMap<String, Value>`).
pub fn ty(ty: &Ty) -> String {
    match ty {
        Ty::Named(n) => n.clone(),
        Ty::String => "String".to_owned(),
        Ty::Bool => "bool".to_owned(),
        Ty::Int(k) => format!("{k:?}").to_ascii_lowercase(),
        Ty::Float => "f64".to_owned(),
        Ty::Any => "Value".to_owned(),
        Ty::Unit => "()".to_owned(),
        Ty::Vec(t) => format!("Vec<{}>", self::ty(t)),
        Ty::Map(t) => format!("BTreeMap<String, {}>", self::ty(t)),
        Ty::Option(t) => format!("Option<{}>", self::ty(t)),
        Ty::Boxed(t) => format!("Box<{}>", self::ty(t)),
        Ty::Tuple(items) => {
            let items: Vec<String> = items.iter().map(self::ty).collect();
            if items.len() == 1 {
                format!("({},)", items[0])
            } else {
                format!("({})", items.join(", "))
            }
        }
    }
}

/// The Rust type of a field as declared: the member's type wrapped as its presence needs.
pub fn field_ty(f: &Field) -> String {
    let t = ty(&f.ty);
    match f.presence() {
        Presence::Required => t,
        Presence::RequiredNullable | Presence::Optional => format!("Option<{t}>"),
        Presence::OptionalNullable => format!("Option<Option<{t}>>"),
    }
}

/// [`ty`] as tokens, for the parts written with `quote`.
pub fn ty_tokens(t: &Ty) -> TokenStream {
    ty(t).parse().expect("a rendered type is valid Rust")
}
