//! `ExperimentalApi` impls: for `ClientRequest` and every client request params type, the
//! server's descriptor of the first experimental surface a value uses.
//!
//! The descriptor is the method, then the wire names of the members leading to what is
//! experimental (`thread/start.dynamicTools`, `thread/items/list.deferOutput.commandExecution`),
//! as the server words it. A member counts as used when it is present and not `null`.
//!
//! A params type shared by several methods gets no impl of its own (its descriptor would
//! depend on the method): each of those methods checks its params inline, with its own name.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::types::ident;
use crate::ir::*;
use crate::Error;

/// How deep the generator follows members looking for experimental surface.
const MAX_DEPTH: usize = 8;

pub fn emit_experimental(ir: &Ir) -> Result<TokenStream, Error> {
    let mut cx = Reach { ir, memo: BTreeMap::new() };
    let mut impls = Vec::new();
    let mut uses: BTreeMap<&str, usize> = BTreeMap::new();
    for m in &ir.client_requests {
        if let Some(Ty::Named(params)) = m.params.ty() {
            *uses.entry(params.as_str()).or_default() += 1;
        }
    }
    let mut request_arms = Vec::new();
    for m in &ir.client_requests {
        let name = ident(&m.rust);
        let wire = &m.wire;
        let Some(Ty::Named(params)) = m.params.ty() else {
            if m.experimental {
                request_arms.push(quote! { Self::#name { .. } => Some(#wire), });
            }
            continue;
        };
        let body = if m.experimental || ir.types[params].experimental {
            quote! { Some(#wire) }
        } else {
            let value = quote! { self };
            cx.expr(&Ty::Named(params.clone()), &value, wire, 0, &mut BTreeSet::new()).unwrap_or(quote! { None })
        };
        let optional = matches!(m.params, Params::Optional(_));
        if m.experimental {
            request_arms.push(quote! { Self::#name { .. } => Some(#wire), });
        }
        if matches!(ir.types[params].kind, TypeKind::Alias(_)) || uses[params.as_str()] > 1 {
            // An alias (a map) is not a type of its own to implement the trait for, and a
            // params type of several methods has a descriptor per method: check inline.
            let value = quote! { params };
            let inner = cx.expr(&Ty::Named(params.clone()), &value, wire, 0, &mut BTreeSet::new());
            if let (false, Some(inner)) = (m.experimental, inner) {
                let bind = if optional { quote! { params: Some(params), .. } } else { quote! { params, .. } };
                request_arms.push(quote! { Self::#name { #bind } => #inner, });
            }
            continue;
        }
        if !m.experimental {
            request_arms.push(if optional {
                quote! { Self::#name { params, .. } => params.as_deref().and_then(ExperimentalApi::experimental_reason), }
            } else {
                quote! { Self::#name { params, .. } => params.experimental_reason(), }
            });
        }
        let ty = ident(params);
        impls.push(quote! {
            impl ExperimentalApi for #ty {
                fn experimental_reason(&self) -> Option<&'static str> {
                    #body
                }
            }
        });
    }
    let items = quote! {
        impl ExperimentalApi for ClientRequest {
            fn experimental_reason(&self) -> Option<&'static str> {
                match self {
                    #(#request_arms)*
                    _ => None,
                }
            }
        }

        #(#impls)*
    };
    // Import the types module only when the impls name a generated type.
    let text = items.to_string();
    let names_a_type = text.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| ir.types.contains_key(w));
    let types = names_a_type.then(|| quote! { use super::types::*; });
    Ok(quote! {
        use super::methods::*;
        #types
        use crate::ExperimentalApi;

        #items
    })
}

struct Reach<'a> {
    ir: &'a Ir,
    /// Named type -> whether it can reach experimental surface.
    memo: BTreeMap<String, bool>,
}

impl Reach<'_> {
    /// Whether a value of `ty` can use experimental surface.
    fn reaches(&mut self, ty: &Ty, stack: &mut BTreeSet<String>) -> bool {
        match ty {
            Ty::Vec(t) | Ty::Map(t) | Ty::Option(t) | Ty::Boxed(t) => self.reaches(t, stack),
            Ty::Tuple(items) => items.iter().any(|t| self.reaches(t, stack)),
            Ty::Named(n) => {
                if let Some(r) = self.memo.get(n) {
                    return *r;
                }
                if !stack.insert(n.clone()) {
                    return false;
                }
                let def = &self.ir.types[n];
                let r = def.experimental
                    || match &def.kind {
                        TypeKind::Alias(t) => self.reaches(t, stack),
                        TypeKind::Struct(s) => s.fields.iter().any(|f| f.experimental || self.reaches(&f.ty, stack)),
                        TypeKind::StringEnum(e) => e.values.iter().any(|v| v.experimental),
                        TypeKind::Tagged(t) => t
                            .arms
                            .iter()
                            .any(|a| a.experimental || self.reaches(&Ty::Named(a.payload.clone()), stack)),
                        TypeKind::External(e) => e
                            .arms
                            .iter()
                            .any(|a| a.experimental || a.payload.as_ref().is_some_and(|p| self.reaches(p, stack))),
                        TypeKind::Untagged(u) => u.arms.iter().any(|a| a.experimental || self.reaches(&a.ty, stack)),
                    };
                stack.remove(n);
                self.memo.insert(n.clone(), r);
                r
            }
            _ => false,
        }
    }

    /// An expression of type `Option<&'static str>` over `value` (a reference to a `ty`), or
    /// `None` when `ty` cannot reach experimental surface.
    fn expr(&mut self, ty: &Ty, value: &TokenStream, path: &str, depth: usize, stack: &mut BTreeSet<String>) -> Option<TokenStream> {
        if depth > MAX_DEPTH || !self.reaches(ty, &mut BTreeSet::new()) {
            return None;
        }
        let v = format_ident!("v{}", depth);
        match ty {
            Ty::Vec(t) => {
                let inner = self.expr(t, &quote! { #v }, path, depth + 1, stack)?;
                Some(quote! { #value.iter().find_map(|#v| #inner) })
            }
            Ty::Map(t) => {
                let inner = self.expr(t, &quote! { #v }, path, depth + 1, stack)?;
                Some(quote! { #value.values().find_map(|#v| #inner) })
            }
            Ty::Option(t) => {
                let inner = self.expr(t, &quote! { #v }, path, depth + 1, stack)?;
                Some(quote! { #value.as_ref().and_then(|#v| #inner) })
            }
            // `value` is a `&Box<T>`: look at the `T`.
            Ty::Boxed(t) => self.expr(t, &quote! { (&**#value) }, path, depth + 1, stack),
            Ty::Tuple(items) => {
                let checks: Vec<TokenStream> = items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, t)| {
                        let index = proc_macro2::Literal::usize_unsuffixed(i);
                        self.expr(t, &quote! { (&#value.#index) }, path, depth + 1, stack)
                    })
                    .collect();
                let (first, rest) = checks.split_first()?;
                Some(quote! { #first #( .or_else(|| #rest) )* })
            }
            Ty::Named(n) => {
                if !stack.insert(n.clone()) {
                    return None;
                }
                let def = &self.ir.types[n];
                let out = if def.experimental {
                    Some(quote! { Some(#path) })
                } else {
                    self.kind_expr(n, &def.kind.clone(), value, path, depth, stack)
                };
                stack.remove(n);
                out
            }
            _ => None,
        }
    }

    fn kind_expr(
        &mut self,
        name: &str,
        kind: &TypeKind,
        value: &TokenStream,
        path: &str,
        depth: usize,
        stack: &mut BTreeSet<String>,
    ) -> Option<TokenStream> {
        let ty = ident(name);
        match kind {
            TypeKind::Alias(t) => self.expr(t, value, path, depth, stack),
            TypeKind::Struct(s) => {
                let mut checks = Vec::new();
                for f in &s.fields {
                    let field = ident(&f.rust);
                    let here = format!("{path}.{}", f.wire);
                    if f.experimental {
                        let used = match f.presence() {
                            Presence::Required => quote! { true },
                            Presence::RequiredNullable | Presence::Optional => quote! { #value.#field.is_some() },
                            Presence::OptionalNullable => quote! { matches!(#value.#field, Some(Some(_))) },
                        };
                        checks.push(quote! { #used.then_some(#here) });
                        continue;
                    }
                    let v = format_ident!("v{}", depth + 1);
                    let Some(inner) = self.expr(&f.ty, &quote! { #v }, &here, depth + 1, stack) else { continue };
                    checks.push(match f.presence() {
                        Presence::Required => quote! { { let #v = &#value.#field; #inner } },
                        Presence::RequiredNullable | Presence::Optional => {
                            quote! { #value.#field.as_ref().and_then(|#v| #inner) }
                        }
                        Presence::OptionalNullable => quote! { #value.#field.as_ref().and_then(Option::as_ref).and_then(|#v| #inner) },
                    });
                }
                let (first, rest) = checks.split_first()?;
                Some(quote! { #first #( .or_else(|| #rest) )* })
            }
            TypeKind::StringEnum(e) => {
                let values: Vec<_> = e.values.iter().filter(|v| v.experimental).map(|v| ident(&v.rust)).collect();
                (!values.is_empty()).then(|| quote! { matches!(#value, #( #ty::#values )|*).then_some(#path) })
            }
            TypeKind::Tagged(t) => {
                let arms: Vec<(String, bool, Ty)> =
                    t.arms.iter().map(|a| (a.rust.clone(), a.experimental, Ty::Named(a.payload.clone()))).collect();
                self.match_expr(&ty, &arms, value, path, depth, stack)
            }
            TypeKind::External(e) => {
                let mut out = Vec::new();
                for a in &e.arms {
                    let rust = ident(&a.rust);
                    match (&a.payload, a.experimental) {
                        (None, true) => out.push(quote! { #ty::#rust => Some(#path), }),
                        (Some(_), true) => out.push(quote! { #ty::#rust(..) => Some(#path), }),
                        (Some(p), false) => {
                            let v = format_ident!("v{}", depth + 1);
                            if let Some(inner) = self.expr(p, &quote! { #v }, path, depth + 1, stack) {
                                out.push(quote! { #ty::#rust(#v) => #inner, });
                            }
                        }
                        (None, false) => {}
                    }
                }
                (!out.is_empty()).then(|| quote! { match #value { #(#out)* _ => None } })
            }
            TypeKind::Untagged(u) => {
                let arms: Vec<(String, bool, Ty)> = u.arms.iter().map(|a| (a.rust.clone(), a.experimental, a.ty.clone())).collect();
                self.match_expr(&ty, &arms, value, path, depth, stack)
            }
        }
    }

    fn match_expr(
        &mut self,
        ty: &proc_macro2::Ident,
        arms: &[(String, bool, Ty)],
        value: &TokenStream,
        path: &str,
        depth: usize,
        stack: &mut BTreeSet<String>,
    ) -> Option<TokenStream> {
        let mut out = Vec::new();
        for (rust, experimental, payload) in arms {
            let rust = ident(rust);
            if *experimental {
                out.push(quote! { #ty::#rust(..) => Some(#path), });
                continue;
            }
            let v = format_ident!("v{}", depth + 1);
            if let Some(inner) = self.expr(payload, &quote! { #v }, path, depth + 1, stack) {
                out.push(quote! { #ty::#rust(#v) => #inner, });
            }
        }
        (!out.is_empty()).then(|| quote! { match #value { #(#out)* _ => None } })
    }
}
