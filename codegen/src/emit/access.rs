//! Accessors a client needs on decoded messages, written out from what the IR knows:
//!
//! - where a server notification belongs: `ServerNotification::thread_id`, `turn_id`
//!   (`params.turnId`, or `params.turn.id`) and `item_id` (`params.item.id`), so a client routes
//!   the notifications of concurrent turns without looking into the JSON again;
//! - `id()` on each tagged union that is a notification's `item`, used by `item_id`;
//! - `ClientResponse::into_result::<R>()`: the typed result of a request, taken out of the
//!   response enum it was decoded into (one decode, by the request's method).

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::docs::gate;
use super::types::ident;
use crate::ir::*;
use crate::lower::CATCH_ALL;
use crate::Error;

pub fn emit_access(ir: &Ir) -> Result<TokenStream, Error> {
    let catch_all = format_ident!("{}", CATCH_ALL);
    let (mut thread, mut turn, mut item) = (Vec::new(), Vec::new(), Vec::new());
    let mut item_unions = BTreeSet::new();
    for m in &ir.server_notifications {
        let Some(Ty::Named(params)) = m.params.ty() else { continue };
        let name = ident(&m.rust);
        let optional = matches!(m.params, Params::Optional(_));
        let base = quote! { params };
        let arm = |access: Access| {
            let gate = gate(m.experimental || access.experimental);
            let expr = access.expr;
            if optional {
                quote! { #gate Self::#name { params: Some(params), .. } => #expr, }
            } else {
                quote! { #gate Self::#name { params, .. } => #expr, }
            }
        };
        if let Some(access) = string_at(ir, params, &base, &["threadId"]) {
            thread.push(arm(access));
        }
        if let Some(access) = string_at(ir, params, &base, &["turnId"]).or_else(|| string_at(ir, params, &base, &["turn", "id"])) {
            turn.push(arm(access));
        }
        if let Some(access) = string_at(ir, params, &base, &["item", "id"]) {
            item.push(arm(access));
        } else if let Some((access, union)) = union_id_at(ir, params, &base) {
            item_unions.insert(union);
            item.push(arm(access));
        }
    }
    let unions = item_unions.iter().map(|union| union_id(ir, union, &catch_all));
    // A schema with no notification of a kind gets a plain `None` (a lone `_ => None` arm
    // would be a needless match).
    let body = |arms: &[TokenStream]| if arms.is_empty() { quote! { None } } else { quote! { match self { #(#arms)* _ => None } } };
    let (thread_body, turn_body, item_body) = (body(&thread), body(&turn), body(&item));
    let results = ir.client_requests.iter().map(|m| {
        let gate = gate(m.experimental);
        let name = ident(&m.rust);
        quote! { #gate Self::#name(result) => result, }
    }).collect::<Vec<_>>();
    // Only the item unions' `id()` names generated types here.
    let types = (!item_unions.is_empty()).then(|| quote! { use super::types::*; });
    let into_result = if results.is_empty() {
        quote! {
            let _ = self;
            None
        }
    } else {
        quote! {
            let typed: Box<dyn std::any::Any> = match self {
                #(#results)*
                Self::#catch_all(_) => return None,
            };
            typed.downcast::<R::Response>().ok().map(|result| *result)
        }
    };
    Ok(quote! {
        use super::methods::*;
        #types

        impl ServerNotification {
            /// The thread this notification is about: `params.threadId`, for the methods whose
            /// params have it. `None` for the others and for a method this crate does not know
            /// (`Unrecognized`: read its params).
            pub fn thread_id(&self) -> Option<&str> {
                #thread_body
            }

            /// The turn this notification is about: `params.turnId`, or `params.turn.id`, for
            /// the methods whose params have one. `None` for the others and for a method this
            /// crate does not know.
            pub fn turn_id(&self) -> Option<&str> {
                #turn_body
            }

            /// The item this notification is about: `params.item.id` (item lifecycle
            /// notifications such as `item/started` and `item/completed`). `None` for the others
            /// and for a method this crate does not know.
            pub fn item_id(&self) -> Option<&str> {
                #item_body
            }
        }

        #(#unions)*

        impl ClientResponse {
            /// The typed result of a request of `R`: `Some` when this is the result of a method
            /// whose response type is `R::Response` (as [`ClientResponse::deserialize_result`]
            /// typed it by the request's method), without decoding it again; `None` otherwise
            /// (another method, or `Unrecognized`).
            pub fn into_result<R: crate::Request>(self) -> Option<R::Response>
            where
                R::Response: 'static,
            {
                #into_result
            }
        }
    })
}

/// An expression of type `Option<&str>`, and whether it reads an experimental member.
struct Access {
    expr: TokenStream,
    experimental: bool,
}

/// The type a `Ty` stands for, through aliases.
fn resolve<'a>(ir: &'a Ir, ty: &'a Ty) -> &'a Ty {
    match ty {
        Ty::Named(n) => match ir.types.get(n).map(|d| &d.kind) {
            Some(TypeKind::Alias(inner)) => resolve(ir, inner),
            _ => ty,
        },
        _ => ty,
    }
}

/// The string at `path` (wire names) below `base`, a value of the struct `name`, as an
/// `Option<&str>` expression; `None` when the struct has no such member of type string.
fn string_at(ir: &Ir, name: &str, base: &TokenStream, path: &[&str]) -> Option<Access> {
    let TypeKind::Struct(s) = &ir.types.get(name)?.kind else { return None };
    let (first, rest) = path.split_first()?;
    let field = s.fields.iter().find(|f| f.wire == *first)?;
    let member = ident(&field.rust);
    let value = quote! { #base.#member };
    let presence = field.presence();
    let access = if rest.is_empty() {
        if *resolve(ir, &field.ty) != Ty::String {
            return None;
        }
        let expr = match presence {
            Presence::Required => quote! { Some(#value.as_str()) },
            Presence::RequiredNullable | Presence::Optional => quote! { #value.as_deref() },
            Presence::OptionalNullable => quote! { #value.as_ref().and_then(|v| v.as_deref()) },
        };
        Access { expr, experimental: false }
    } else {
        let Ty::Named(inner) = resolve(ir, &field.ty) else { return None };
        let var = format_ident!("{}", field.rust.trim_start_matches("r#"));
        let nested = |base: &TokenStream| string_at(ir, inner, base, rest);
        match presence {
            Presence::Required => nested(&value)?,
            Presence::RequiredNullable | Presence::Optional => {
                let Access { expr, experimental } = nested(&quote! { #var })?;
                Access { expr: quote! { #value.as_ref().and_then(|#var| #expr) }, experimental }
            }
            Presence::OptionalNullable => {
                let Access { expr, experimental } = nested(&quote! { #var })?;
                Access { expr: quote! { #value.as_ref().and_then(|v| v.as_ref()).and_then(|#var| #expr) }, experimental }
            }
        }
    };
    Some(Access { expr: access.expr, experimental: access.experimental || field.experimental })
}

/// `params.item.id()` when `item` is a tagged union whose arms have a string `id`; the
/// union's name (it gets an `id()` accessor).
fn union_id_at(ir: &Ir, params: &str, base: &TokenStream) -> Option<(Access, String)> {
    let TypeKind::Struct(s) = &ir.types.get(params)?.kind else { return None };
    let field = s.fields.iter().find(|f| f.wire == "item")?;
    let Ty::Named(union) = resolve(ir, &field.ty) else { return None };
    let TypeKind::Tagged(tagged) = &ir.types.get(union)?.kind else { return None };
    let item = quote! { item };
    if !tagged.arms.iter().all(|arm| string_at(ir, &arm.payload, &item, &["id"]).is_some()) {
        return None;
    }
    let member = ident(&field.rust);
    let expr = match field.presence() {
        Presence::Required => quote! { #base.#member.id() },
        Presence::RequiredNullable | Presence::Optional => quote! { #base.#member.as_ref().and_then(|item| item.id()) },
        Presence::OptionalNullable => quote! { #base.#member.as_ref().and_then(|v| v.as_ref()).and_then(|item| item.id()) },
    };
    Some((Access { expr, experimental: field.experimental }, union.clone()))
}

/// `id()` on a tagged union whose every arm has a string `id`.
fn union_id(ir: &Ir, union: &str, catch_all: &proc_macro2::Ident) -> TokenStream {
    let TypeKind::Tagged(tagged) = &ir.types[union].kind else { unreachable!("checked by union_id_at") };
    let item = quote! { item };
    let arms = tagged.arms.iter().map(|arm| {
        let access = string_at(ir, &arm.payload, &item, &["id"]).expect("checked by union_id_at");
        let gate = gate(arm.experimental || access.experimental);
        let name = ident(&arm.rust);
        let expr = access.expr;
        quote! { #gate Self::#name(item) => #expr, }
    });
    let ty = ident(union);
    let gate_impl = gate(ir.types[union].experimental);
    let doc = format!(" The item's `id`; for a `{}` this crate does not know, its `id` member if that is a string.", tagged.tag);
    quote! {
        #gate_impl
        impl #ty {
            #[doc = #doc]
            pub fn id(&self) -> Option<&str> {
                match self {
                    #(#arms)*
                    Self::#catch_all(object) => object.get("id").and_then(serde_json::Value::as_str),
                }
            }
        }
    }
}
