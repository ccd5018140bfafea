//! How types and presences are written in the report: as the generated Rust type.

use std::fmt::Write as _;

use codex_app_codegen::ir::*;

pub(super) fn kind_name(kind: &TypeKind) -> &'static str {
    match kind {
        TypeKind::Alias(_) => "alias",
        TypeKind::Struct(_) => "struct",
        TypeKind::StringEnum(_) => "string enum",
        TypeKind::Tagged(_) => "tagged union",
        TypeKind::External(_) => "externally tagged union",
        TypeKind::Untagged(_) => "untagged union",
    }
}

/// A one-line summary of a type's wire shape: `{ id, name? }`, `"a" | "b"`, `type: "x" | "y"`.
pub(super) fn summary(kind: &TypeKind) -> String {
    pub(super) const MAX: usize = 8;
    pub(super) fn list(items: Vec<String>, sep: &str) -> String {
        let more = items.len().saturating_sub(MAX);
        let mut s = items.into_iter().take(MAX).collect::<Vec<_>>().join(sep);
        if more > 0 {
            let _ = write!(s, "{sep}… ({more} more)");
        }
        s
    }
    match kind {
        TypeKind::Alias(t) => rust_ty(t),
        TypeKind::Struct(s) => {
            let fields = s
                .fields
                .iter()
                .map(|f| match f.presence() {
                    Presence::Required | Presence::RequiredNullable => f.wire.clone(),
                    Presence::Optional | Presence::OptionalNullable => format!("{}?", f.wire),
                })
                .collect();
            if s.fields.is_empty() {
                "{}".to_owned()
            } else {
                format!("{{ {} }}", list(fields, ", "))
            }
        }
        TypeKind::StringEnum(e) => list(e.values.iter().map(|v| format!("\"{}\"", v.wire)).collect(), " | "),
        TypeKind::External(e) => list(
            e.arms
                .iter()
                .map(|a| match &a.payload {
                    None => format!("\"{}\"", a.wire),
                    Some(t) => format!("{{ {}: {} }}", a.wire, rust_ty(t)),
                })
                .collect(),
            " | ",
        ),
        TypeKind::Tagged(t) => {
            format!("{}: {}", t.tag, list(t.arms.iter().map(|a| format!("\"{}\"", a.wire)).collect(), " | "))
        }
        TypeKind::Untagged(u) => list(u.arms.iter().map(|a| rust_ty(&a.ty)).collect(), " | "),
    }
}

pub use codex_app_codegen::render::{field_ty, ty as rust_ty};

pub(super) fn presence_name(p: Presence) -> &'static str {
    match p {
        Presence::Required => "required",
        Presence::RequiredNullable => "required, nullable",
        Presence::Optional => "optional",
        Presence::OptionalNullable => "optional, null distinct from absent",
    }
}

pub(super) fn params_presence(p: &Params) -> Option<Presence> {
    match p {
        Params::None | Params::Null => None,
        Params::Required(_) => Some(Presence::Required),
        Params::Optional(_) => Some(Presence::Optional),
    }
}

pub(super) fn params_text(p: &Params) -> String {
    match p {
        Params::None | Params::Null => "none".to_owned(),
        Params::Required(t) => rust_ty(t),
        Params::Optional(t) => format!("Option<{}>", rust_ty(t)),
    }
}
