//! Tokens for the methods: marker types, the four message enums, the typed response enums and
//! the method visitors.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::docs::{doc_attrs, gate};
use super::types::{ident, ty_tokens, ty_tokens_in};
use crate::ir::*;
use crate::lower::CATCH_ALL;
use crate::Error;

pub fn emit_methods(ir: &Ir, codex_version: &str) -> Result<TokenStream, Error> {
    if let Some(f) = ir.notification_envelope.iter().find(|f| f.presence() != Presence::Optional) {
        return Err(Error::new(
            "#/definitions/ServerNotification/properties",
            format!("envelope member `{}` must be optional", f.wire),
        ));
    }
    let directions = Direction::ALL.map(|d| emit_direction(ir, d));
    // `Value` only where a method's params or result is "any".
    let any = Direction::ALL.iter().flat_map(|&d| ir.methods(d)).any(|m| m.params.ty().is_some_and(Ty::has_any) || m.response.as_ref().is_some_and(Ty::has_any));
    let value = any.then(|| quote! { use serde_json::Value; });
    Ok(quote! {
        use serde::{Deserialize, Deserializer, Serialize, Serializer};
        use serde_json::value::RawValue;
        #value

        use super::types::*;
        use crate::codec;

        /// The codex release whose schema this crate was generated from.
        pub const CODEX_VERSION: &str = #codex_version;

        /// Keeps the items after the version when this crate was generated from that codex
        /// release ([`CODEX_VERSION`]); otherwise puts in their place one test that fails and
        /// says why.
        ///
        /// For tests written against one release's types, which name types, members and
        /// variants another release may not have: after `cargo xtask regen` from another
        /// release they still compile, and the failing test asks for them to be checked
        /// against the new types (and the version they name changed). Set
        /// `CODEX_APP_SKIP_PINNED_TESTS=1` to have it pass with a note instead.
        ///
        /// ```
        /// codex_app_protocol::pinned_to_codex! { "0.0.0-not-this-one",
        ///     fn uses_types_of_another_release() {}
        /// }
        /// ```
        #[macro_export]
        macro_rules! pinned_to_codex {
            (#codex_version, $($item:item)*) => { $($item)* };
            ($version:literal, $($item:item)*) => {
                #[test]
                fn pinned_to_another_codex_release() {
                    $crate::pinned_tests_left_out($version);
                }
            };
        }

        #(#directions)*
    })
}

struct Names {
    enum_name: proc_macro2::Ident,
    module: proc_macro2::Ident,
    response: Option<proc_macro2::Ident>,
    trait_name: TokenStream,
    visitor: TokenStream,
    enum_doc: &'static str,
    module_doc: &'static str,
}

fn names(direction: Direction) -> Names {
    match direction {
        Direction::ClientRequest => Names {
            enum_name: format_ident!("ClientRequest"),
            module: format_ident!("request"),
            response: Some(format_ident!("ClientResponse")),
            trait_name: quote! { crate::Request },
            visitor: quote! { crate::RequestVisitor },
            enum_doc: " A request the client sends to the server.",
            module_doc: " Marker types for the requests the client sends, one per method.",
        },
        Direction::ServerRequest => Names {
            enum_name: format_ident!("ServerRequest"),
            module: format_ident!("server_request"),
            response: Some(format_ident!("ServerResponse")),
            trait_name: quote! { crate::Request },
            visitor: quote! { crate::RequestVisitor },
            enum_doc: " A request the server sends to the client (approvals, tool calls, ...).",
            module_doc: " Marker types for the requests the server sends, one per method.",
        },
        Direction::ServerNotification => Names {
            enum_name: format_ident!("ServerNotification"),
            module: format_ident!("notification"),
            response: None,
            trait_name: quote! { crate::Notification },
            visitor: quote! { crate::NotificationVisitor },
            enum_doc: " A notification the server sends to the client.",
            module_doc: " Marker types for the notifications the server sends, one per method.",
        },
        Direction::ClientNotification => Names {
            enum_name: format_ident!("ClientNotification"),
            module: format_ident!("client_notification"),
            response: None,
            trait_name: quote! { crate::Notification },
            visitor: quote! { crate::NotificationVisitor },
            enum_doc: " A notification the client sends to the server.",
            module_doc: " Marker types for the notifications the client sends, one per method.",
        },
    }
}

/// The Rust type of a method's params (`()` when it has none), with named types written as
/// `#prefix Name`.
fn params_ty(p: &Params, prefix: &TokenStream) -> TokenStream {
    match p {
        Params::None | Params::Null => quote! { () },
        Params::Required(t) => ty_tokens_in(t, prefix),
        Params::Optional(t) => {
            let t = ty_tokens_in(t, prefix);
            quote! { Option<#t> }
        }
    }
}

/// The line of a marker's docs that names its params and response types, linked.
fn types_doc(m: &Method) -> String {
    let link = |t: &Ty| match t {
        Ty::Named(n) => format!("[`{n}`](crate::{n})"),
        other => format!("`{}`", other.rust_text()),
    };
    let params = match &m.params {
        Params::None | Params::Null => "no params".to_owned(),
        Params::Required(t) => format!("params {}", link(t)),
        Params::Optional(t) => format!("params {} (optional)", link(t)),
    };
    match &m.response {
        Some(Ty::Any) => format!("Takes {params}; the response is any JSON value."),
        Some(r) => format!("Takes {params}; answered with {}.", link(r)),
        None => format!("Takes {params}."),
    }
}

/// The type of a message enum's `params` field: boxed, so a message is a few words whatever
/// its method (the largest params would otherwise set the size of every message, and each
/// move of one would copy it).
fn boxed_params_ty(p: &Params) -> TokenStream {
    match p {
        Params::None | Params::Null => quote! { () },
        Params::Required(t) => {
            let t = ty_tokens(t);
            quote! { Box<#t> }
        }
        Params::Optional(t) => {
            let t = ty_tokens(t);
            quote! { Option<Box<#t>> }
        }
    }
}

/// Everything one direction's methods need: marker types, the message enum with its
/// accessors, decoding, encoding and method visitor, and (for requests) the response enum.
fn emit_direction(ir: &Ir, direction: Direction) -> TokenStream {
    let d = DirectionEmitter::new(ir, direction);
    let markers = d.markers();
    let message_enum = d.message_enum();
    let accessors = d.accessors();
    let decoding = d.decoding();
    let visit_method = d.visit_method();
    let (serialize, envelope_writer) = (d.serialize(), d.envelope_writer());
    let inspect = d.inspect();
    let response = d.response_enum();
    let enum_name = &d.names.enum_name;
    quote! {
        #markers

        #message_enum

        impl #enum_name {
            #accessors

            #decoding

            #visit_method
        }

        #serialize

        #envelope_writer

        #inspect

        #response
    }
}

/// One direction of the IR, with what every part of its emission shares.
struct DirectionEmitter<'a> {
    methods: &'a [Method],
    names: Names,
    is_request: bool,
    /// The members every message of this direction may carry next to `method` and `params`
    /// (server notifications only).
    envelope: &'a [Field],
    catch_all: proc_macro2::Ident,
}

impl<'a> DirectionEmitter<'a> {
    fn new(ir: &'a Ir, direction: Direction) -> Self {
        DirectionEmitter {
            methods: ir.methods(direction),
            names: names(direction),
            is_request: direction.is_request(),
            envelope: if direction == Direction::ServerNotification { &ir.notification_envelope } else { &[] },
            catch_all: format_ident!("{}", CATCH_ALL),
        }
    }

    /// A link to the marker type of a method: [`request::ThreadStart`](crate::request::ThreadStart).
    fn marker_link(&self, m: &Method) -> String {
        let path = format!("{}::{}", self.names.module, m.rust);
        format!("[`{path}`](crate::{path})")
    }

    /// `id` as the first member of a request variant.
    fn id_field(&self) -> Option<TokenStream> {
        self.is_request.then(|| quote! { id: RequestId, })
    }

    fn envelope_fields(&self) -> Vec<TokenStream> {
        self.envelope
            .iter()
            .map(|f| {
                let docs = doc_attrs(f.doc.as_deref(), f.experimental);
                let name = ident(&f.rust);
                let ty = ty_tokens(&f.ty);
                quote! { #docs #name: Option<#ty>, }
            })
            .collect()
    }

    fn envelope_none(&self) -> Vec<TokenStream> {
        self.envelope
            .iter()
            .map(|f| {
                let name = ident(&f.rust);
                quote! { #name: None, }
            })
            .collect()
    }

    /// The module of marker types, one per method, implementing `Request` or `Notification`.
    fn markers(&self) -> TokenStream {
        let trait_name = &self.names.trait_name;
        let markers = self.methods.iter().map(|m| {
            let docs = doc_attrs(m.doc.as_deref(), m.experimental);
            let gate = gate(m.experimental);
            let name = ident(&m.rust);
            let wire = &m.wire;
            // Markers are named like methods, and a method can be named like a type: refer to
            // types through `super::` so a marker never shadows one.
            let params = params_ty(&m.params, &quote! { super:: });
            let response = m.response.as_ref().map(|r| {
                let r = ty_tokens_in(r, &quote! { super:: });
                quote! { type Response = #r; }
            });
            let method_doc = format!(" `{wire}`");
            let links = format!(" {}", types_doc(m));
            let sep = (!docs.is_empty()).then(|| quote! { #[doc = ""] });
            quote! {
                #[doc = #method_doc]
                #[doc = ""]
                #[doc = #links]
                #sep
                #docs #gate
                #[derive(Debug)]
                pub enum #name {}

                #gate
                impl #trait_name for #name {
                    const METHOD: &'static str = #wire;
                    type Params = #params;
                    #response
                }
            }
        });
        let (module, module_doc) = (&self.names.module, self.names.module_doc);
        quote! {
            #[doc = #module_doc]
            pub mod #module {
                #(#markers)*
            }
        }
    }

    /// The message enum: one variant per method with its boxed params, and the catch-all.
    fn message_enum(&self) -> TokenStream {
        let id_field = self.id_field();
        let envelope_fields = self.envelope_fields();
        let variants = self.methods.iter().map(|m| {
            let docs = doc_attrs(m.doc.as_deref(), m.experimental);
            let gate = gate(m.experimental);
            let name = ident(&m.rust);
            let wire = format!(" `{}`: {}", m.wire, self.marker_link(m));
            let sep = (!docs.is_empty()).then(|| quote! { #[doc = ""] });
            let params = match &m.params {
                Params::None | Params::Null => TokenStream::new(),
                p => {
                    let t = boxed_params_ty(p);
                    quote! { params: #t, }
                }
            };
            quote! { #[doc = #wire] #sep #docs #gate #name { #id_field #params #(#envelope_fields)* }, }
        });
        let (enum_name, enum_doc, catch_all) = (&self.names.enum_name, self.names.enum_doc, &self.catch_all);
        let unrecognized_params_doc = " `params` as it came (`None` when absent or `null`).";
        quote! {
            #[doc = #enum_doc]
            #[derive(Debug, Clone, PartialEq)]
            pub enum #enum_name {
                #(#variants)*
                /// A method this version of the crate does not know, kept as it came.
                #catch_all {
                    #id_field
                    method: String,
                    #[doc = #unrecognized_params_doc]
                    params: Option<crate::RawJson>,
                    #(#envelope_fields)*
                },
            }
        }
    }

    /// `method()` and, for requests, `id()`.
    fn accessors(&self) -> TokenStream {
        let catch_all = &self.catch_all;
        let method_arms = self.methods.iter().map(|m| {
            let gate = gate(m.experimental);
            let name = ident(&m.rust);
            let wire = &m.wire;
            quote! { #gate Self::#name { .. } => #wire, }
        });
        let id_fn = self.is_request.then(|| {
            let arms = self.methods.iter().map(|m| {
                let gate = gate(m.experimental);
                let name = ident(&m.rust);
                quote! { #gate Self::#name { id, .. } => id, }
            });
            quote! {
                /// The request id.
                pub fn id(&self) -> &RequestId {
                    match self {
                        #(#arms)*
                        Self::#catch_all { id, .. } => id,
                    }
                }
            }
        });
        quote! {
            /// The method name on the wire.
            pub fn method(&self) -> &str {
                match self {
                    #(#method_arms)*
                    Self::#catch_all { method, .. } => method,
                }
            }

            #id_fn
        }
    }

    /// `deserialize_params` reads params straight from the line's deserializer (one pass);
    /// `from_parts` decodes raw params through it; notifications also get `set_envelope`.
    fn decoding(&self) -> TokenStream {
        let is_request = self.is_request;
        let catch_all = &self.catch_all;
        let envelope_none = self.envelope_none();
        let params_arms = self.methods.iter().map(|m| {
            let gate = gate(m.experimental);
            let name = ident(&m.rust);
            let wire = &m.wire;
            let id = is_request.then(|| quote! { id, });
            match &m.params {
                Params::None | Params::Null => quote! {
                    #gate #wire => {
                        <()>::deserialize(params)?;
                        Self::#name { #id #(#envelope_none)* }
                    }
                },
                _ => quote! {
                    #gate #wire => Self::#name { #id params: Deserialize::deserialize(params)?, #(#envelope_none)* },
                },
            }
        });
        let id_param = is_request.then(|| quote! { id: RequestId, });
        let id_arg = is_request.then(|| quote! { id, });
        // Notifications always take the other members, so the signature does not depend on
        // whether this schema has envelope members.
        let extra_param = (!is_request).then(|| quote! { extra: &[(std::borrow::Cow<'_, str>, &RawValue)], });
        let from_parts_body = if is_request {
            quote! { codec::decode_raw(params, |params| Self::deserialize_params(id.clone(), method, params)) }
        } else {
            quote! {
                let mut message = codec::decode_raw(params, |params| Self::deserialize_params(method, params))?;
                message.set_envelope(extra)?;
                Ok(message)
            }
        };
        let set_envelope = (!is_request).then(|| self.set_envelope());
        let from_parts_doc = if is_request {
            " Decodes a request from its id, method and raw `params` (absent and `null` are the same)."
        } else {
            " Decodes a notification from its method, raw `params` (absent and `null` are the same) and other members."
        };
        let deserialize_params_doc = if is_request {
            " Decodes the `params` of a request of `method` straight from `params` (pass a `null` when the message has none)."
        } else {
            " Decodes the `params` of a notification of `method` straight from `params` (pass a `null` when the message has none); the envelope members are left unset (see `set_envelope`)."
        };
        quote! {
            #[doc = #from_parts_doc]
            pub fn from_parts(#id_param method: &str, params: Option<&RawValue>, #extra_param) -> Result<Self, codec::ParamsError> {
                #from_parts_body
            }

            #[doc = #deserialize_params_doc]
            pub fn deserialize_params<'de, D: Deserializer<'de>>(#id_param method: &str, params: D) -> Result<Self, D::Error> {
                Ok(match method {
                    #(#params_arms)*
                    _ => Self::#catch_all { #id_arg method: method.to_owned(), params: Option::<crate::RawJson>::deserialize(params)?, #(#envelope_none)* },
                })
            }

            #set_envelope
        }
    }

    /// A notification's `set_envelope`: the envelope members from the message's other members.
    fn set_envelope(&self) -> TokenStream {
        let catch_all = &self.catch_all;
        let body = if self.envelope.is_empty() {
            quote! { let _ = extra; }
        } else {
            let names: Vec<_> = self.envelope.iter().map(|f| ident(&f.rust)).collect();
            // One member binds as itself, more as a tuple.
            let bound = match names.as_slice() {
                [one] => quote! { #one },
                _ => quote! { (#(#names,)*) },
            };
            let arms = self.methods.iter().map(|m| {
                let gate = gate(m.experimental);
                let name = ident(&m.rust);
                quote! { #gate Self::#name { #(#names,)* .. } => #bound, }
            });
            let sets = self.envelope.iter().map(|f| {
                let name = ident(&f.rust);
                let wire = &f.wire;
                quote! { *#name = codec::member(extra, #wire)?; }
            });
            quote! {
                let #bound = match self {
                    #(#arms)*
                    Self::#catch_all { #(#names,)* .. } => #bound,
                };
                #(#sets)*
            }
        };
        quote! {
            /// Sets the envelope members every notification may carry from the message's
            /// members other than `method` and `params`.
            pub fn set_envelope(&mut self, extra: &[(std::borrow::Cow<'_, str>, &RawValue)]) -> Result<(), codec::ParamsError> {
                #body
                Ok(())
            }
        }
    }

    /// `visit_method`: the marker type of a method, by its wire name.
    fn visit_method(&self) -> TokenStream {
        let (module, visitor) = (&self.names.module, &self.names.visitor);
        let visit_arms = self.methods.iter().map(|m| {
            let gate = gate(m.experimental);
            let name = ident(&m.rust);
            let wire = &m.wire;
            quote! { #gate #wire => visitor.visit::<#module::#name>(), }
        });
        quote! {
            /// Calls `visitor` with the marker type of `method`, or its `unrecognized` for a
            /// method this version of the crate does not know.
            pub fn visit_method<V: #visitor>(method: &str, visitor: V) -> V::Output {
                match method {
                    #(#visit_arms)*
                    _ => visitor.unrecognized(),
                }
            }
        }
    }

    /// `Serialize` for the message enum: the whole message object, through a
    /// `codec::MessageWriter` that knows the id, method and envelope, so each arm only hands
    /// over its params.
    fn serialize(&self) -> TokenStream {
        let id = if self.is_request { quote! { Some(self.id()) } } else { quote! { None } };
        let write_envelope = match self.envelope {
            [] => quote! { |_| Ok(()) },
            [_] => quote! { |map| write_envelope(map, self.envelope()) },
            more => {
                let names: Vec<_> = more.iter().map(|f| ident(&f.rust)).collect();
                quote! { |map| { let (#(#names),*) = self.envelope(); write_envelope(map, #(#names),*) } }
            }
        };
        let serialize_arms = self.methods.iter().map(|m| {
            let gate = gate(m.experimental);
            let name = ident(&m.rust);
            match &m.params {
                Params::None | Params::Null => quote! { #gate Self::#name { .. } => message.params(None::<&()>), },
                Params::Required(_) => quote! { #gate Self::#name { params, .. } => message.params(Some(params)), },
                Params::Optional(_) => quote! { #gate Self::#name { params, .. } => message.params(params.as_ref()), },
            }
        });
        let (enum_name, catch_all) = (&self.names.enum_name, &self.catch_all);
        quote! {
            impl Serialize for #enum_name {
                fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                    let message = codec::MessageWriter::new(serializer, #id, self.method(), #write_envelope);
                    match self {
                        #(#serialize_arms)*
                        Self::#catch_all { params, .. } => message.params(params.as_ref()),
                    }
                }
            }
        }
    }

    /// `Inspect` for the message enum: the variant reported with its method, then its params
    /// walked under `params`; an unknown method reported as `Unrecognized`.
    fn inspect(&self) -> TokenStream {
        let arms = self.methods.iter().map(|m| {
            let gate = gate(m.experimental);
            let name = ident(&m.rust);
            let rust = &m.rust;
            match &m.params {
                Params::None | Params::Null => quote! { #gate Self::#name { .. } => Some((#rust, None)), },
                Params::Required(_) | Params::Optional(_) => quote! { #gate Self::#name { params, .. } => Some((#rust, Some(params))), },
            }
        });
        let (enum_name, catch_all) = (&self.names.enum_name, &self.catch_all);
        let ty = enum_name.to_string();
        quote! {
            #[cfg(feature = "inspect")]
            impl crate::inspect::Inspect for #enum_name {
                fn inspect<'a>(&'a self, path: &mut Vec<crate::inspect::Step<'a>>, inspector: &mut dyn crate::inspect::Inspector) {
                    // An `Option` rather than an early return: a schema may have no method here.
                    let known: Option<(&'static str, Option<&'a dyn crate::inspect::Inspect>)> = match self {
                        #(#arms)*
                        Self::#catch_all { .. } => None,
                    };
                    match known {
                        Some((rust, params)) => crate::inspect::message(path, inspector, #ty, rust, self.method(), params),
                        None => inspector.unrecognized(path, #ty),
                    }
                }
            }
        }
    }

    /// `write_envelope`, which the `Serialize` impl calls, when there are envelope members.
    fn envelope_writer(&self) -> Option<TokenStream> {
        (!self.envelope.is_empty()).then(|| {
            let params = self.envelope.iter().map(|f| {
                let name = ident(&f.rust);
                let ty = ty_tokens(&f.ty);
                quote! { #name: &Option<#ty> }
            });
            let writes = self.envelope.iter().map(|f| {
                let name = ident(&f.rust);
                let wire = &f.wire;
                quote! { if let Some(value) = #name { map.serialize_entry(#wire, value)?; } }
            });
            let names: Vec<_> = self.envelope.iter().map(|f| ident(&f.rust)).collect();
            let tys: Vec<_> = self.envelope.iter().map(|f| ty_tokens(&f.ty)).collect();
            // One member is returned as itself, more as a tuple.
            let (bound, ret) = match (names.as_slice(), tys.as_slice()) {
                ([one], [ty]) => (quote! { #one }, quote! { &Option<#ty> }),
                _ => (quote! { (#(#names,)*) }, quote! { (#(&Option<#tys>,)*) }),
            };
            let arms = self.methods.iter().map(|m| {
                let gate = gate(m.experimental);
                let name = ident(&m.rust);
                quote! { #gate Self::#name { #(#names,)* .. } => #bound, }
            });
            let (enum_name, catch_all) = (&self.names.enum_name, &self.catch_all);
            quote! {
                impl #enum_name {
                    /// The envelope members of this notification.
                    fn envelope(&self) -> #ret {
                        match self {
                            #(#arms)*
                            Self::#catch_all { #(#names,)* .. } => #bound,
                        }
                    }
                }

                /// Writes the envelope members every notification may carry.
                fn write_envelope<M: serde::ser::SerializeMap>(map: &mut M, #(#params),*) -> Result<(), M::Error> {
                    #(#writes)*
                    Ok(())
                }
            }
        })
    }

    /// For requests: the enum of results typed by method (`ClientResponse`, `ServerResponse`).
    fn response_enum(&self) -> Option<TokenStream> {
        let response = self.names.response.as_ref()?;
        let (enum_name, catch_all) = (&self.names.enum_name, &self.catch_all);
        let variants = self.methods.iter().map(|m| {
            let gate = gate(m.experimental);
            let name = ident(&m.rust);
            let ty = ty_tokens(m.response.as_ref().expect("paired"));
            let doc = format!(" The result of `{}` ({}).", m.wire, self.marker_link(m));
            // Boxed for the same reason as params.
            quote! { #[doc = #doc] #gate #name(Box<#ty>), }
        });
        let arms = self.methods.iter().map(|m| {
            let gate = gate(m.experimental);
            let name = ident(&m.rust);
            let wire = &m.wire;
            quote! { #gate #wire => Self::#name(Deserialize::deserialize(result)?), }
        });
        let inspect_arms = self.methods.iter().map(|m| {
            let gate = gate(m.experimental);
            let name = ident(&m.rust);
            let (rust, wire) = (&m.rust, &m.wire);
            quote! { #gate Self::#name(result) => Some((#rust, #wire, result)), }
        });
        let response_text = response.to_string();
        let doc = format!(" The `result` of a response to a [`{enum_name}`], typed by the request's method.");
        Some(quote! {
            #[doc = #doc]
            #[derive(Debug, Clone, PartialEq, Serialize)]
            #[serde(untagged)]
            pub enum #response {
                #(#variants)*
                /// The result of a method this version of the crate does not know, kept as it came.
                #catch_all(crate::RawJson),
            }

            #[cfg(feature = "inspect")]
            impl crate::inspect::Inspect for #response {
                fn inspect<'a>(&'a self, path: &mut Vec<crate::inspect::Step<'a>>, inspector: &mut dyn crate::inspect::Inspector) {
                    let known: Option<(&'static str, &'static str, &'a dyn crate::inspect::Inspect)> = match self {
                        #(#inspect_arms)*
                        Self::#catch_all(_) => None,
                    };
                    match known {
                        Some((rust, wire, result)) => crate::inspect::variant(path, inspector, #response_text, rust, Some(wire), result),
                        None => inspector.unrecognized(path, #response_text),
                    }
                }
            }

            impl #response {
                /// Decodes the `result` of a response to a request of `method` (a client keeps
                /// `id -> method` for the requests it sent).
                pub fn decode(method: &str, result: &RawValue) -> Result<Self, codec::ParamsError> {
                    codec::decode_raw(Some(result), |result| Self::deserialize_result(method, result))
                }

                /// Decodes the `result` of a response to a request of `method` straight from
                /// `result`.
                pub fn deserialize_result<'de, D: Deserializer<'de>>(method: &str, result: D) -> Result<Self, D::Error> {
                    Ok(match method {
                        #(#arms)*
                        _ => Self::#catch_all(crate::RawJson::deserialize(result)?),
                    })
                }
            }
        })
    }
}
