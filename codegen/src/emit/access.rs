//! Accessors a client needs on decoded messages, from what the IR knows:
//!
//! - where a server notification belongs: [`Routes`] finds, per notification, the path of
//!   each of [`Settings::routes`] (`params.threadId`, `params.turnId` (or `params.turn.id`) and
//!   `params.item.id`); the method
//!   table writes them on the method's row (`thread(thread_id)`), and the protocol crate's
//!   `wire_notifications!` makes `ServerNotification::thread_id`, `turn_id` and `item_id` of
//!   them, so a client routes the notifications of concurrent turns without looking into the
//!   JSON again;
//! - `id()` on each tagged union that is a notification's `item` ([`Route::union_member`]),
//!   used by `item_id` (this file's output).
//!
//! (`ClientResponse::into_result::<R>()` comes with the request table.)

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::docs::gate;
use super::types::ident;
use crate::ir::*;
use crate::settings::{Route, Settings};
use crate::Error;

/// The route paths of the server notifications ([`Settings::routes`]).
pub struct Routes<'a> {
    ir: &'a Ir,
    routes: &'a [Route],
}

impl<'a> Routes<'a> {
    pub fn new(ir: &'a Ir, settings: &'a Settings) -> Self {
        Routes { ir, routes: &settings.routes }
    }

    /// `(accessor, path)` for each accessor that reads something of `m`'s params: the path
    /// as the row writes it, from the params (`thread_id`, `turn.as_ref()?.id`, `item.id()`).
    /// A path through an experimental member of a stable method is left out (the row has one
    /// gate, the method's).
    pub fn of(&self, m: &Method) -> Vec<(&'a str, String)> {
        let Some(Ty::Named(params)) = m.params.ty() else { return Vec::new() };
        let mut out = Vec::new();
        for route in self.routes {
            let found = path_at(self.ir, params, route).or_else(|| {
                let member = route.union_member.as_deref()?;
                union_id_at(self.ir, params, member).map(|(access, _)| access)
            });
            if let Some(access) = found {
                if m.experimental || !access.experimental {
                    out.push((route.accessor.as_str(), access.path));
                }
            }
        }
        out
    }
}

/// The first of `route`'s paths that `params` has.
fn path_at(ir: &Ir, params: &str, route: &Route) -> Option<Access> {
    route.paths.iter().find_map(|path| string_at(ir, params, &path.iter().map(String::as_str).collect::<Vec<_>>()))
}

/// The tagged unions whose `id()` a route reads (`ThreadItem`).
fn item_unions(ir: &Ir, routes: &[Route]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for m in &ir.server_notifications {
        let Some(Ty::Named(params)) = m.params.ty() else { continue };
        for route in routes {
            let Some(member) = route.union_member.as_deref() else { continue };
            if path_at(ir, params, route).is_none() {
                out.extend(union_id_at(ir, params, member).map(|(_, union)| union));
            }
        }
    }
    out
}

pub fn emit_access(ir: &Ir, settings: &Settings) -> Result<TokenStream, Error> {
    let catch_all = format_ident!("{}", settings.catch_all);
    let unions: Vec<TokenStream> =
        item_unions(ir, &settings.routes).iter().map(|union| union_id(ir, union, &catch_all)).collect();
    let types = (!unions.is_empty()).then(|| quote! { use super::types::*; });
    let raw = raw_routes(&settings.routes);
    Ok(quote! {
        #types

        #raw

        #(#unions)*
    })
}

/// `ROUTES`: each accessor's wire paths in the params (a union member's `id` last), which
/// `jsonrpc::RawRoute` reads from the params of a notification the crate does not type, so
/// that the members that route a notification are stated once, in [`Settings::routes`].
fn raw_routes(routes: &[Route]) -> TokenStream {
    let fields = routes.iter().map(|route| {
        let accessor = format_ident!("{}", route.accessor);
        let union_id = route.union_member.iter().map(|m| vec![m.clone(), "id".to_owned()]);
        let mut paths: Vec<Vec<String>> = route.paths.clone();
        paths.extend(union_id.filter(|p| !route.paths.contains(p)));
        let paths = paths.iter().map(|p| quote! { &[#(#p),*] });
        quote! { #accessor: &[#(#paths),*], }
    });
    quote! {
        /// The members of a notification's params that route it, tried in order: what
        /// `thread_id()`, `turn_id()` and `item_id()` read of the typed notifications, for
        /// [`RawRoute`](crate::jsonrpc::RawRoute) to read from raw params.
        pub(crate) const ROUTES: crate::jsonrpc::RoutePaths = crate::jsonrpc::RoutePaths { #(#fields)* };
    }
}

/// A path that reads a string, and whether it goes through an experimental member.
struct Access {
    path: String,
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

/// The step to a member that is not the last: through its `Option`s, if any.
fn step(f: &Field) -> String {
    match f.presence() {
        Presence::Required => f.rust.clone(),
        Presence::RequiredNullable | Presence::Optional => format!("{}.as_ref()?", f.rust),
        Presence::OptionalNullable => format!("{}.as_ref()?.as_ref()?", f.rust),
    }
}

/// The string at `path` (wire names) in a value of the struct `name`; `None` when the struct
/// has no such member of type string. The last member is read whatever its presence.
fn string_at(ir: &Ir, name: &str, path: &[&str]) -> Option<Access> {
    let TypeKind::Struct(s) = &ir.types.get(name)?.kind else { return None };
    let (first, rest) = path.split_first()?;
    let field = s.fields.iter().find(|f| f.wire == *first)?;
    if rest.is_empty() {
        if *resolve(ir, &field.ty) != Ty::String {
            return None;
        }
        return Some(Access { path: field.rust.clone(), experimental: field.experimental });
    }
    let Ty::Named(inner) = resolve(ir, &field.ty) else { return None };
    let nested = string_at(ir, inner, rest)?;
    Some(Access {
        path: format!("{}.{}", step(field), nested.path),
        experimental: field.experimental || nested.experimental,
    })
}

/// `item.id()` when the params' `member` (`item`) is a tagged union whose arms have a string
/// `id`; the union's name (it gets an `id()` accessor).
fn union_id_at(ir: &Ir, params: &str, member: &str) -> Option<(Access, String)> {
    let TypeKind::Struct(s) = &ir.types.get(params)?.kind else { return None };
    let field = s.fields.iter().find(|f| f.wire == member)?;
    let Ty::Named(union) = resolve(ir, &field.ty) else { return None };
    let TypeKind::Tagged(tagged) = &ir.types.get(union)?.kind else { return None };
    if !tagged.arms.iter().all(|arm| string_at(ir, &arm.payload, &["id"]).is_some()) {
        return None;
    }
    Some((Access { path: format!("{}.id()", step(field)), experimental: field.experimental }, union.clone()))
}

/// `id()` on a tagged union whose every arm has a string `id`.
fn union_id(ir: &Ir, union: &str, catch_all: &proc_macro2::Ident) -> TokenStream {
    let TypeKind::Tagged(tagged) = &ir.types[union].kind else { unreachable!("checked by union_id_at") };
    let arms = tagged.arms.iter().map(|arm| {
        let access = string_at(ir, &arm.payload, &["id"]).expect("checked by union_id_at");
        let gate = gate(arm.experimental || access.experimental);
        let name = ident(&arm.rust);
        let member = ident(&access.path);
        quote! { #gate Self::#name(item) => crate::wire_methods::Route::route(&item.#member), }
    });
    let ty = ident(union);
    let gate_impl = gate(ir.types[union].experimental);
    let doc = format!(
        " The item's `id`; for a `{}` this crate does not know, its `id` member if that is a string.",
        tagged.tag
    );
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
