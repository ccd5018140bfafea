//! The client's `ServerRequestHandler` (`client/src/generated/handler.rs`): one async method
//! per server request of the schema, each answering by default what [`crate::refusal`] says,
//! plus `other`, `handle` and the `dispatch` that calls the method of each request.
//!
//! The file is a module of `codex-app-client` (declared by the hand-written
//! `client/src/handler.rs`, whose `HandlerResult`, `unhandled` and `encode` it uses); protocol
//! types are named through `crate::protocol`, the client's re-export of the protocol crate.

use proc_macro2::TokenStream;
use quote::quote;

use super::docs::{doc_lines, gate};
use super::types::ident;
use crate::ir::*;
use crate::naming;
use crate::refusal::{self, Build, DefaultAnswer, Fill};
use crate::Error;

/// The trait's provided methods that are not requests: a request's method never takes their
/// names.
const OTHER_METHODS: &[&str] = &["other", "handle"];

/// The experimental note of a server request's method.
const EXPERIMENTAL_NOTE: &str = "**Experimental**: the server sends it only to a client that opted in \
(`capabilities.experimentalApi`); this method needs the `experimental` feature, without which the request \
reaches [`other`](Self::other).";

pub fn emit_handler(ir: &Ir, codex_version: &str) -> Result<TokenStream, Error> {
    let wires: Vec<&str> = ir.server_requests.iter().map(|m| m.wire.as_str()).collect();
    let names = naming::methods(&wires, OTHER_METHODS);
    let methods = ir.server_requests.iter().zip(&names).map(|(m, name)| method(ir, m, name));
    let arms: Vec<TokenStream> = ir.server_requests.iter().zip(&names).map(|(m, name)| dispatch_arm(m, name)).collect();
    let dispatch = if arms.is_empty() {
        quote! { encode(handler.other(request).await) }
    } else {
        quote! {
            match request {
                #(#arms)*
                other => encode(handler.other(other).await),
            }
        }
    };
    let trait_doc = [
        format!(
            " Answers the server's requests: one typed async method per request of the codex {codex_version} schema, \
             each with a safe default, and [`other`](Self::other) for any other request. Override the methods your \
             application handles; the others keep their defaults."
        ),
        String::new(),
        format!(" {}", refusal::RULE_DOC),
        " Each method's docs say what it answers by default; [`DefaultHandler`](super::DefaultHandler) has every default.".to_owned(),
        String::new(),
        " The methods are generated from the schema and named after the wire method (`item/commandExecution/requestApproval` \
         is `item_command_execution_request_approval`), so they follow codex releases: a request a release adds gets \
         its method with the next `cargo xtask regen`, and one it removes loses it."
            .to_owned(),
    ];
    // `dispatch` allows `match_single_binding`: every arm but `other` is gated when the
    // schema's requests are all experimental.
    Ok(quote! {
        use std::future::Future;

        use serde_json::value::RawValue;

        use super::{encode, unhandled, HandlerResult};
        use crate::protocol;

        #( #[doc = #trait_doc] )*
        pub trait ServerRequestHandler: Send + Sync + 'static {
            #(#methods)*

            /// Any other server request: a method newer than this crate, or one of the
            /// experimental API when the `experimental` feature is off. Gets the whole request.
            ///
            /// **Default**: a JSON-RPC error ([`unhandled`]).
            fn other(&self, request: protocol::ServerRequest) -> impl Future<Output = HandlerResult<serde_json::Value>> + Send {
                let method = request.method().to_owned();
                async move { Err(unhandled(&method)) }
            }

            /// Answers one request with its encoded result. By default [`dispatch`]: the method
            /// of the request (or [`other`](Self::other)).
            ///
            /// Override it to see every request before the typed methods do: a handler that
            /// wraps another answers what it knows and passes the rest to the inner handler's
            /// `handle`, whatever requests the schema has.
            fn handle(&self, request: protocol::ServerRequest) -> impl Future<Output = HandlerResult<Box<RawValue>>> + Send {
                dispatch(self, request)
            }
        }

        /// Calls the method of `handler` that answers `request` (or
        /// [`other`](ServerRequestHandler::other)) and encodes its result: what
        /// [`ServerRequestHandler::handle`] does by default.
        #[allow(clippy::match_single_binding)]
        pub async fn dispatch<H: ServerRequestHandler + ?Sized>(handler: &H, request: protocol::ServerRequest) -> HandlerResult<Box<RawValue>> {
            #dispatch
        }
    })
}

/// One request's method with its default body.
fn method(ir: &Ir, m: &Method, name: &str) -> TokenStream {
    let name = ident(name);
    let answer = refusal::default_answer(ir, m);
    let mut doc = vec![format!("`{}`", m.wire)];
    let description = doc_lines(m.doc.as_deref(), false);
    if !description.is_empty() {
        doc.push(String::new());
        doc.extend(description);
    }
    if m.experimental {
        doc.push(String::new());
        doc.push(EXPERIMENTAL_NOTE.to_owned());
    }
    doc.push(String::new());
    let (body, default_doc) = match &answer {
        DefaultAnswer::Refuse(fill) => {
            let value = fill_expr(fill);
            (quote! { async { Ok(#value) } }, format!("**Default**: refuses, answering `{}`.", fill.json()))
        }
        DefaultAnswer::Error(why) => {
            let wire = &m.wire;
            (
                quote! { async { Err(unhandled(#wire)) } },
                format!("**Default**: a JSON-RPC error ([`unhandled`]): {why}."),
            )
        }
    };
    doc.push(default_doc);
    let doc = doc.into_iter().map(|l| if l.is_empty() { l } else { format!(" {l}") });
    let gate = gate(m.experimental);
    let response = response_ty(m);
    let (param, consume) = match params_ty(&m.params) {
        Some(ty) => (quote! { params: #ty }, quote! { let _ = params; }),
        None => (TokenStream::new(), TokenStream::new()),
    };
    quote! {
        #( #[doc = #doc] )*
        #gate
        fn #name(&self, #param) -> impl Future<Output = HandlerResult<#response>> + Send {
            #consume
            #body
        }
    }
}

/// The arm of `dispatch` for one request: unbox its params, call its method.
fn dispatch_arm(m: &Method, name: &str) -> TokenStream {
    let gate = gate(m.experimental);
    let variant = ident(&m.rust);
    let name = ident(name);
    match &m.params {
        Params::None | Params::Null => quote! {
            #gate protocol::ServerRequest::#variant { .. } => encode(handler.#name().await),
        },
        Params::Required(_) => quote! {
            #gate protocol::ServerRequest::#variant { params, .. } => encode(handler.#name(*params).await),
        },
        Params::Optional(_) => quote! {
            #gate protocol::ServerRequest::#variant { params, .. } => encode(handler.#name(params.map(|p| *p)).await),
        },
    }
}

/// The params argument's type; `None` for a request without params.
fn params_ty(p: &Params) -> Option<TokenStream> {
    match p {
        Params::None | Params::Null => None,
        Params::Required(t) => Some(ty(t)),
        Params::Optional(t) => {
            let t = ty(t);
            Some(quote! { Option<#t> })
        }
    }
}

/// The result type: the paired response, `serde_json::Value` when it is "any".
fn response_ty(m: &Method) -> TokenStream {
    m.response.as_ref().map_or_else(|| quote! { serde_json::Value }, ty)
}

/// A type as the client names it: schema types through `protocol::`, full paths for the rest.
fn ty(t: &Ty) -> TokenStream {
    match t {
        Ty::Named(n) => {
            let n = ident(n);
            quote! { protocol::#n }
        }
        Ty::Any => quote! { serde_json::Value },
        Ty::Vec(t) => {
            let t = ty(t);
            quote! { Vec<#t> }
        }
        Ty::Map(t) => {
            let t = ty(t);
            quote! { std::collections::BTreeMap<String, #t> }
        }
        Ty::Option(t) => {
            let t = ty(t);
            quote! { Option<#t> }
        }
        other => crate::render::ty_tokens(other),
    }
}

/// The Rust expression of a refusing value.
fn fill_expr(fill: &Fill) -> TokenStream {
    match fill {
        Fill::Value { ty, variant, .. } => {
            let (ty, variant) = (ident(ty), ident(variant));
            quote! { protocol::#ty::#variant }
        }
        Fill::Empty { ty } => {
            let ty = ident(ty);
            quote! { protocol::#ty::default() }
        }
        Fill::Struct { ty, build, members } => {
            let ty = ident(ty);
            let values = members.iter().map(|m| fill_expr(&m.fill));
            match build {
                Build::New => quote! { protocol::#ty::new(#(#values),*) },
                Build::Literal => {
                    let names = members.iter().map(|m| ident(&m.rust));
                    quote! { protocol::#ty { #(#names: #values),* } }
                }
            }
        }
    }
}
