//! Tokens for the named types: one function per [`TypeKind`].

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use std::fmt::Write as _;

use super::docs::{deprecation, doc_attrs, doc_comment, doc_lines, gate, EXPERIMENTAL_GATE};
use super::experimental::Reaching;
use super::Part;
use crate::ir::*;
use crate::naming;
use crate::render::{self, ty_tokens};
use crate::Error;

pub fn emit_types(ir: &Ir) -> Result<Vec<Part>, Error> {
    let mut parts = Vec::new();
    let mut tokens = TokenStream::new();
    let reaching = Reaching::new(ir);
    let notes = Notes(ir);
    for def in ir.types.values() {
        // Consecutive tokens are laid out together.
        for part in emit_type(def, &reaching, &notes) {
            match part {
                Part::Tokens(t) => tokens.extend(t),
                text => {
                    if !tokens.is_empty() {
                        parts.push(Part::Tokens(std::mem::take(&mut tokens)));
                    }
                    parts.push(text);
                }
            }
        }
    }
    parts.push(Part::Tokens(tokens));
    // Import only what the code uses: a small schema may need no `BTreeMap` or `codec`.
    let text: String = parts
        .iter()
        .map(|p| match p {
            Part::Tokens(t) => t.to_string(),
            Part::Text(t) => t.clone(),
        })
        .collect::<Vec<_>>()
        .join(" ");
    let uses = |word: &str| text.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w == word);
    let map = uses("BTreeMap").then(|| quote! { use std::collections::BTreeMap; });
    let serde_names: Vec<Ident> = ["Deserialize", "Deserializer", "Serialize"]
        .into_iter()
        .filter(|w| uses(w))
        .map(|w| format_ident!("{w}"))
        .collect();
    let serde = (!serde_names.is_empty()).then(|| quote! { use serde::{#(#serde_names),*}; });
    let map_access = uses("MapAccess").then(|| quote! { use serde::de::MapAccess; });
    let ser = uses("Serializer").then(|| quote! { use serde::ser::{SerializeMap, Serializer}; });
    let value = uses("Value").then(|| quote! { use serde_json::Value; });
    let codec = uses("codec").then(|| quote! { use crate::codec; });
    let macros: Vec<Ident> =
        ["decode_with", "wire_enum", "wire_external", "wire_struct", "wire_tagged", "wire_untagged"]
            .into_iter()
            .filter(|w| uses(w))
            .map(|w| format_ident!("{w}"))
            .collect();
    let macros = (!macros.is_empty()).then(|| quote! { use crate::wire_macros::{#(#macros),*}; });
    parts.insert(
        0,
        Part::Tokens(quote! {
            #map
            #serde
            #map_access
            #ser
            #value
            #codec
            #macros
        }),
    );
    Ok(parts)
}

/// The availability notes of a type's rows: a row of an item that is not in every release of
/// the supported range starts with its doc attributes, on the row's own line (as its gate).
pub struct Notes<'a>(pub &'a Ir);

impl Notes<'_> {
    pub fn member(&self, owner: &str, wire: &str) -> String {
        self.key(&crate::history::keys::member(owner, wire))
    }
    pub fn value(&self, owner: &str, wire: &str) -> String {
        self.key(&crate::history::keys::value(owner, wire))
    }
    /// `#[doc = ""] #[doc = "*Since codex 0.171.0.*"] ` or nothing.
    pub fn key(&self, key: &crate::history::Key) -> String {
        match self.0.availability.get(key).and_then(|a| note_text(a, self.0.floor.as_deref())) {
            Some(text) => format!("#[doc = \"\"] #[doc = {text:?}] "),
            None => String::new(),
        }
    }
}

/// The sentence a doc comment gets for an item's availability, or `None` for an item in every
/// release of the range.
pub fn note_text(a: &crate::history::Availability, floor: Option<&str>) -> Option<String> {
    let mut parts = Vec::new();
    match &a.until {
        Some(until) if Some(a.since.as_str()) == floor => {
            parts.push(format!("In codex releases up to {until} (not in later ones)"))
        }
        Some(until) => parts.push(format!("In codex {} to {until} (not in later releases)", a.since)),
        None if Some(a.since.as_str()) != floor => parts.push(format!("Since codex {}", a.since)),
        None => {}
    }
    if let Some(r) = &a.always_since {
        parts.push(format!("always sent since codex {r}; an older codex may leave it out"));
    }
    if parts.is_empty() {
        return None;
    }
    let mut text = parts.join("; ");
    if let Some(first) = text.get(0..1) {
        text = first.to_uppercase() + &text[1..];
    }
    Some(format!(" *{text}.*"))
}

/// The presence module of `protocol/src/wire_macros.rs` that reads and writes a field.
fn presence_keyword(f: &Field) -> &'static str {
    match f.presence() {
        // A required member whose type is itself nullable reads and writes like one declared
        // required-and-nullable.
        Presence::Required if matches!(f.ty, Ty::Option(_)) => "required_nullable",
        Presence::Required => "required",
        Presence::RequiredNullable => "required_nullable",
        Presence::Optional => "optional",
        Presence::OptionalNullable => "optional_nullable",
    }
}

/// An experimental member's, value's or arm's gate, written at the start of its line.
fn gate_text(experimental: bool) -> String {
    if experimental {
        format!("{EXPERIMENTAL_GATE} ")
    } else {
        String::new()
    }
}

/// Whether a member or arm that is not experimental itself holds a type that can use
/// experimental surface: its line says `experimental inside`, and the walk goes into it.
fn inside(experimental: bool, ty: &Ty, reaching: &Reaching) -> bool {
    !experimental && reaching.ty(ty)
}

/// Whether the struct `name` is what a client request sends as its params: the params type
/// itself, or the payload of an arm of the tagged union that is.
fn sent_as_params(ir: &Ir, name: &str) -> bool {
    ir.client_requests.iter().filter_map(|m| m.params.ty()).any(|ty| match ty {
        Ty::Named(params) if params == name => true,
        Ty::Named(params) => match ir.types.get(params).map(|d| &d.kind) {
            Some(TypeKind::Tagged(t)) => t.arms.iter().any(|a| a.payload == name),
            _ => false,
        },
        _ => false,
    })
}

/// The start of a wire-macro invocation for `def`: its feature gate, `macro! {` and the
/// type's docs (the derives and the declaration follow).
fn invocation_start(def: &TypeDef, macro_name: &str) -> String {
    let mut out = String::new();
    if def.experimental {
        let _ = writeln!(out, "{EXPERIMENTAL_GATE}");
    }
    let _ = writeln!(out, "{macro_name}! {{");
    out.push_str(&doc_comment(&doc_lines(def.doc.as_deref(), def.experimental), "    "));
    out
}

/// A struct as a `wire_struct!` invocation: the declaration with each member's wire name and
/// presence, from which the macro writes `Serialize` and the decoding.
fn struct_text(def: &TypeDef, s: &Struct, reaching: &Reaching, notes: &Notes) -> String {
    let mut out = invocation_start(def, "wire_struct");
    let default = if s.fields.iter().all(|f| f.presence() != Presence::Required) { ", Default" } else { "" };
    let _ = writeln!(out, "    #[derive(Debug, Clone, PartialEq{default})]");
    if s.fields.is_empty() && s.extra.is_none() {
        let _ = writeln!(out, "    pub struct {} {{}}", def.name);
        out.push_str("}\n");
        return out;
    }
    let _ = writeln!(out, "    pub struct {} {{", def.name);
    for f in &s.fields {
        out.push_str(&doc_comment(&doc_lines(f.doc.as_deref(), f.experimental), "        "));
        // The availability note is a doc attribute: it goes before `#[deprecated]`.
        let mut note = notes.member(&def.schema, &f.wire);
        if let Some(deprecated) = deprecation(f.doc.as_deref()) {
            let _ = writeln!(out, "        {note}#[deprecated(note = {deprecated:?})]");
            note.clear();
        }
        let _ = writeln!(
            out,
            "        {}{}pub {}: {} = {:?} ({}{}),",
            note,
            gate_text(f.experimental),
            f.rust,
            render::field_ty(f),
            f.wire,
            presence_keyword(f),
            if inside(f.experimental, &f.ty, reaching) { ", experimental inside" } else { "" }
        );
    }
    if let Some(extra) = &s.extra {
        let _ = writeln!(out, "        ..pub {}: BTreeMap<String, {}>", extra_field(s), render::ty(extra));
    }
    out.push_str("    }\n");
    // `new(required...)` for a struct with required members and others: the optional members
    // start absent. Without it such a struct can only be built by a literal naming every
    // member, which also breaks when the `experimental` feature adds members. Params a client
    // sends (a request's params type, or an arm of it when it is a tagged union) get one too
    // when every member is required: code that must build against the crate of any release
    // (the client's handles) builds them with it, so that a member a later release adds keeps
    // that code compiling, and the code names the type it sends.
    let required: Vec<&Field> = s.fields.iter().filter(|f| presence_keyword(f) == "required").collect();
    let sent = sent_as_params(notes.0, &def.name);
    if !required.is_empty() && (required.len() < s.fields.len() || s.extra.is_some() || sent) {
        let params: Vec<String> = required.iter().map(|f| format!("{}: {}", f.rust, render::field_ty(f))).collect();
        let _ = writeln!(out, "    fn new({});", params.join(", "));
    }
    out.push_str("}\n");
    out
}

/// A string enum as a `wire_enum!` invocation: one `Variant = "wire"` line per value, from
/// which the macro writes `as_str`, `Serialize` and the decoding.
fn string_enum_text(def: &TypeDef, e: &StringEnum, notes: &Notes) -> String {
    let mut out = invocation_start(def, "wire_enum");
    out.push_str("    #[derive(Debug, Clone, PartialEq, Eq, Hash)]\n");
    let _ = writeln!(out, "    pub enum {} {{", def.name);
    for v in &e.values {
        out.push_str(&doc_comment(&doc_lines(v.doc.as_deref(), v.experimental), "        "));
        let _ = writeln!(
            out,
            "        {}{}{} = {:?},",
            notes.value(&def.schema, &v.wire),
            gate_text(v.experimental),
            v.rust,
            v.wire
        );
    }
    out.push_str("    }\n}\n");
    out
}

/// One named type: structs, string enums and unions as wire-macro text, scalar unions and
/// aliases as tokens.
fn emit_type(def: &TypeDef, reaching: &Reaching, notes: &Notes) -> Vec<Part> {
    let mut parts = emit_type_itself(def, reaching, notes);
    if let Some(former) = &def.former_name {
        let (old, new, gate) = (ident(former), ident(&def.name), gate(def.experimental));
        let doc = format!(" The former name of [`{}`], which had codex's namespace in it.", def.name);
        let note = format!("renamed to `{}`", def.name);
        parts.push(Part::Tokens(quote! {
            #[doc = #doc]
            #[deprecated(note = #note)]
            #gate pub type #old = #new;
        }));
    }
    parts
}

fn emit_type_itself(def: &TypeDef, reaching: &Reaching, notes: &Notes) -> Vec<Part> {
    let docs = doc_attrs(def.doc.as_deref(), def.experimental);
    let gate = gate(def.experimental);
    let name = ident(&def.name);
    let (item, impls) = match &def.kind {
        TypeKind::Struct(s) => {
            return vec![Part::Text(struct_text(def, s, reaching, notes))];
        }
        TypeKind::StringEnum(e) => return vec![Part::Text(string_enum_text(def, e, notes))],
        TypeKind::Alias(ty) => {
            let ty = ty_tokens(ty);
            (quote! { pub type #name = #ty; }, Vec::new())
        }
        TypeKind::Tagged(t) => return vec![Part::Text(tagged_text(def, t, reaching, notes))],
        TypeKind::Untagged(u) if !scalar_only(u) => return vec![Part::Text(untagged_text(def, u, reaching, notes))],
        TypeKind::External(e) => return vec![Part::Text(external_text(def, e, reaching, notes))],
        TypeKind::Untagged(u) => emit_scalar_union(&name, u),
    };
    vec![Part::Tokens(quote! {
        #docs #gate #item
        #( #gate #impls )*
    })]
}

pub fn ident(name: &str) -> Ident {
    match name.strip_prefix("r#") {
        Some(raw) => Ident::new_raw(raw, Span::call_site()),
        None => Ident::new(name, Span::call_site()),
    }
}

/// `codec::Decode` for a named type through its `codec` function (`decode(reader)`), and its
/// `Deserialize` through its text (`decode_with!`).
fn deserialize_impl(name: &Ident, decode: TokenStream) -> TokenStream {
    quote! {
        decode_with!(#name, #decode);
    }
}

/// The field that keeps the members of an open object.
fn extra_field(s: &Struct) -> Ident {
    format_ident!("{}", naming::extra_field(&s.fields.iter().map(|f| f.rust.as_str()).collect::<Vec<_>>()))
}

/// A tagged union as a `wire_tagged!` invocation: one `Variant(Payload) = "tag",` line per
/// arm, from which the macro writes the enum, `Serialize`, the tag-first decoding and the walk.
fn tagged_text(def: &TypeDef, t: &Tagged, reaching: &Reaching, notes: &Notes) -> String {
    let mut out = invocation_start(def, "wire_tagged");
    out.push_str("    #[derive(Debug, Clone, PartialEq)]\n");
    let _ = writeln!(out, "    pub enum {} (tag = {:?}) {{", def.name, t.tag);
    for a in &t.arms {
        out.push_str(&doc_comment(&doc_lines(a.doc.as_deref(), a.experimental), "        "));
        let payload = if a.boxed { format!("Box<{}>", a.payload) } else { a.payload.clone() };
        let mark =
            if inside(a.experimental, &Ty::Named(a.payload.clone()), reaching) { " (experimental inside)" } else { "" };
        let _ = writeln!(
            out,
            "        {}{}{}({payload}) = {:?}{mark},",
            notes.value(&def.schema, &a.wire),
            gate_text(a.experimental),
            a.rust,
            a.wire
        );
    }
    out.push_str("    }\n}\n");
    out
}

/// An externally tagged union as a `wire_external!` invocation: the string values
/// (`Variant = "wire",`), then the object forms (`keyed { Variant(Payload) = "key", }`), from
/// which the macro writes the enum, `Serialize`, decoding and the walk.
fn external_text(def: &TypeDef, e: &External, reaching: &Reaching, notes: &Notes) -> String {
    let mut out = invocation_start(def, "wire_external");
    out.push_str("    #[derive(Debug, Clone, PartialEq)]\n");
    let arm = |out: &mut String, a: &ExternalArm| {
        out.push_str(&doc_comment(&doc_lines(a.doc.as_deref(), a.experimental), "        "));
        let gate = format!("{}{}", notes.value(&def.schema, &a.wire), gate_text(a.experimental));
        match &a.payload {
            None => {
                let _ = writeln!(out, "        {gate}{} = {:?},", a.rust, a.wire);
            }
            Some(ty) => {
                let mark = if inside(a.experimental, ty, reaching) { " (experimental inside)" } else { "" };
                let _ = writeln!(out, "        {gate}{}({}) = {:?}{mark},", a.rust, render::ty(ty), a.wire);
            }
        }
    };
    let _ = writeln!(out, "    pub enum {} {{", def.name);
    for a in e.arms.iter().filter(|a| a.payload.is_none()) {
        arm(&mut out, a);
    }
    out.push_str("    }\n    keyed {\n");
    for a in e.arms.iter().filter(|a| a.payload.is_some()) {
        arm(&mut out, a);
    }
    out.push_str("    }\n}\n");
    out
}

/// Whether every arm of an untagged union is a plain scalar (`RequestId`: a string or an
/// integer): such a union is read straight from the scalar.
fn scalar_only(u: &Untagged) -> bool {
    u.arms.iter().all(|a| matches!(a.ty, Ty::String | Ty::Int(_) | Ty::Bool | Ty::Float))
}

/// An untagged union as a `wire_untagged!` invocation: one `Variant(Type) = index if <Match>`
/// entry per arm, where the [`ArmMatch`] (JSON type, required members, enum and const members,
/// closed objects) is what the arm's schema accepts; the decoder picks the arm by it, the way
/// the schema would, and decodes only that arm.
fn untagged_text(def: &TypeDef, u: &Untagged, reaching: &Reaching, notes: &Notes) -> String {
    let mut out = invocation_start(def, "wire_untagged");
    out.push_str("    #[derive(Debug, Clone, PartialEq)]\n");
    let _ = writeln!(out, "    pub enum {} {{", def.name);
    for (i, a) in u.arms.iter().enumerate() {
        out.push_str(&doc_comment(&doc_lines(a.doc.as_deref(), a.experimental), "        "));
        let mark = if inside(a.experimental, &a.ty, reaching) { " (experimental inside)" } else { "" };
        let _ = writeln!(
            out,
            "        {}{}{}({}) = {i}{mark} if {},",
            notes.key(&crate::history::keys::untagged_arm(notes.0, &def.schema, a)),
            gate_text(a.experimental),
            a.rust,
            render::ty(&a.ty),
            match_text(&a.accepts, "        ")
        );
    }
    out.push_str("    }\n}\n");
    out
}

/// A [`codec::Match`] literal for what an arm accepts; an object's members one per line
/// (below `indent`), anything nested on one line.
fn match_text(m: &ArmMatch, indent: &str) -> String {
    let strs = |v: &[String]| format!("&[{}]", v.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", "));
    match m {
        ArmMatch::Any => "codec::Match::Any".to_owned(),
        ArmMatch::Types(types) => {
            let types: Vec<String> = types.iter().map(|t| format!("codec::JsonType::{t:?}")).collect();
            format!("codec::Match::Types(&[{}])", types.join(", "))
        }
        ArmMatch::Strings(values) => format!("codec::Match::Strings({})", strs(values)),
        ArmMatch::Values(values) => format!("codec::Match::Values({})", strs(values)),
        ArmMatch::Object(o) => {
            let closed = match &o.closed {
                Some(c) => format!("Some({})", strs(c)),
                None => "None".to_owned(),
            };
            let mut out = format!("codec::Match::Object {{\n{indent}    required: {},\n", strs(&o.required));
            if o.members.is_empty() {
                let _ = writeln!(out, "{indent}    members: &[],");
            } else {
                let _ = writeln!(out, "{indent}    members: &[");
                for (member, m) in &o.members {
                    let _ =
                        writeln!(out, "{indent}        ({member:?}, {}),", match_text(m, &format!("{indent}        ")));
                }
                let _ = writeln!(out, "{indent}    ],");
            }
            let _ = write!(out, "{indent}    closed: {closed},\n{indent}}}");
            out
        }
        ArmMatch::AnyOf(arms) => {
            let arms: Vec<String> = arms.iter().map(|a| match_text(a, indent)).collect();
            format!("codec::Match::AnyOf(&[{}])", arms.join(", "))
        }
    }
}

/// An untagged union of plain scalars: `Serialize` derived, read straight from the scalar.
fn emit_scalar_union(name: &Ident, u: &Untagged) -> (TokenStream, Vec<TokenStream>) {
    let variants = u.arms.iter().map(|a| {
        let docs = doc_attrs(a.doc.as_deref(), a.experimental);
        let gate = gate(a.experimental);
        let rust = ident(&a.rust);
        let ty = ty_tokens(&a.ty);
        quote! { #docs #gate #rust(#ty), }
    });
    // Scalar unions (`RequestId`: string or integer) can be map keys.
    let hashable = u.arms.iter().all(|a| matches!(a.ty, Ty::String | Ty::Int(_) | Ty::Bool));
    let eq_hash = if hashable {
        quote! { Eq, Hash, }
    } else {
        TokenStream::new()
    };
    let item = quote! {
        #[derive(Debug, Clone, PartialEq, #eq_hash Serialize)]
        #[serde(untagged)]
        pub enum #name {
            #(#variants)*
        }
    };
    let arm_names = u.arms.iter().map(|a| a.rust.as_str()).collect::<Vec<_>>().join(", ");
    let expecting = format!("`{name}` (one of: {arm_names})");
    let tries = u.arms.iter().map(|a| {
        let gate = gate(a.experimental);
        let rust = ident(&a.rust);
        let read = match &a.ty {
            Ty::String => quote! { scalar.as_str().map(str::to_owned) },
            Ty::Bool => quote! { scalar.as_bool() },
            Ty::Float => quote! { scalar.as_f64() },
            int => {
                let t = ty_tokens(int);
                quote! { scalar.as_int::<#t>() }
            }
        };
        quote! {
            #gate
            if let Some(value) = #read {
                return Some(Self::#rust(value));
            }
        }
    });
    let union_impl = quote! {
        impl codec::ScalarUnion for #name {
            const EXPECTING: &'static str = #expecting;

            fn from_scalar(scalar: &codec::Scalar<'_>) -> Option<Self> {
                #(#tries)*
                None
            }
        }
    };
    let name_text = name.to_string();
    let walks = u.arms.iter().map(|a| {
        let gate = gate(a.experimental);
        let rust = ident(&a.rust);
        let rust_text = &a.rust;
        quote! { #gate Self::#rust(_) => inspector.variant(path, #name_text, #rust_text, None), }
    });
    let inspect_impl = inspect_impl(name, quote! { match self { #(#walks)* } });
    // A scalar arm holds nothing below it: only an experimental arm is surface.
    let gated: Vec<Ident> = u.arms.iter().filter(|a| a.experimental).map(|a| ident(&a.rust)).collect();
    let used = if gated.is_empty() {
        quote! { false }
    } else {
        quote! { matches!(self, #(Self::#gated(_))|*) }
    };
    let surface_impl = quote! {
        #[cfg(feature = "experimental")]
        impl crate::experimental::Surface for #name {
            fn experimental_path(&self, _: &mut Vec<&'static str>) -> bool {
                #used
            }
        }
    };
    (item, vec![union_impl, deserialize_impl(name, quote! { codec::decode_scalar_union }), inspect_impl, surface_impl])
}

/// `Inspect` for a type written as tokens, with `body` (which sees `self`, `path`, `inspector`).
fn inspect_impl(name: &Ident, body: TokenStream) -> TokenStream {
    quote! {
        #[cfg(feature = "inspect")]
        impl crate::inspect::Inspect for #name {
            fn inspect<'a>(&'a self, path: &mut Vec<crate::inspect::Step<'a>>, inspector: &mut dyn crate::inspect::Inspector) {
                #body
            }
        }
    }
}
