//! The macros the generated method tables are written with: one row per method, from which
//! the marker type, the message enum's variant, its decoding, encoding, method visitor and
//! walk, the response enum's variant and the accessors all expand. Written by hand; not part
//! of the public API.
//!
//! - [`wire_requests!`]: the requests of one direction (`ClientRequest`, `ServerRequest`) and
//!   their typed results (`ClientResponse`, `ServerResponse`). A row is
//!   `Variant = "wire/method" (required Params) -> Response,` (after the method's docs and,
//!   for an experimental method, its `#[cfg(feature = "experimental")]`); the params are
//!   `(required T)` (`params: Box<T>`), `(optional T)` (`params: Option<Box<T>>`) or `()`
//!   (no params member), in `methods { ... }` after the header. `impl ExperimentalApi;` in
//!   the header adds the enum's
//!   `ExperimentalApi` and one for each params type (see [`params`]).
//! - [`wire_notifications!`]: the notifications of one direction, with the envelope members
//!   every notification may carry (`emittedAtMs`), stated once after `envelope`. A row is
//!   `Variant = "wire/method" (required Params)`, then the members that route it, each
//!   optional: `thread(path)`, `turn(path)`, `item(path)`, where `path` reads an `Option<&str>`
//!   (through [`Route`]) from the params (`thread(thread_id)`, `turn(turn.as_ref()?.id)`,
//!   `item(item.id())`).
//!
//! The params kinds are modules ([`params::required`], [`params::optional`]) with the same
//! items, so the rows need no case analysis; `shared` after a row's params type marks a params
//! type several methods share, or a type alias, which gets no `ExperimentalApi` impl of its own.

/// The requests of one direction and their typed results, from one table. See the module docs.
macro_rules! wire_requests {
    (
        $(#[doc = $doc:literal])*
        pub enum $name:ident;
        $(#[doc = $module_doc:literal])*
        pub mod $module:ident;
        $(#[doc = $response_doc:literal])*
        pub enum $response:ident;
        $(impl $api:ident;)?
        methods $rows:tt
    ) => {
        $crate::wire_methods::wire_requests!(@enum [$(#[doc = $doc])*] [$(#[doc = $module_doc])*] [$(#[doc = $response_doc])*] $name $module $response $rows);
        $($crate::wire_methods::wire_requests!(@$api $name $rows);)?
    };
    (
        @enum [$($doc:tt)*] [$($module_doc:tt)*] [$($response_doc:tt)*] $name:ident $module:ident $response:ident {
            $(
                $(#[doc = $method_doc:literal])*
                $(#[cfg($cfg:meta)])?
                $variant:ident = $wire:literal ($($kind:ident $params:ty $(, $shared:ident)?)?) -> $result:ty,
            )*
        }
    ) => {
        $($module_doc)*
        pub mod $module {
            $(
                #[doc = concat!(" `", $wire, "`")]
                #[doc = ""]
                $(#[doc = $method_doc])*
                $(#[cfg($cfg)])?
                #[derive(Debug)]
                pub enum $variant {}

                $(#[cfg($cfg)])?
                $crate::wire_methods::since_until!($variant = $wire);
            )*
        }

        $(
            $(#[cfg($cfg)])?
            impl $crate::Request for $module::$variant {
                const METHOD: &'static str = $wire;
                type Params = $crate::wire_methods::params::marker_params!($($kind $params)?);
                type Response = $result;
            }
        )*

        $($doc)*
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $(
                #[doc = concat!(" `", $wire, "`: [`", stringify!($module), "::", stringify!($variant), "`](crate::", stringify!($module), "::", stringify!($variant), ")")]
                #[doc = ""]
                $(#[doc = $method_doc])*
                $(#[cfg($cfg)])?
                $variant {
                    id: $crate::RequestId,
                    $(params: $crate::wire_methods::params::$kind::field!($params),)?
                    /// The W3C trace context of the request (the envelope's `trace`), boxed:
                    /// most requests carry none, and a message stays a few words.
                    trace: Option<Box<$crate::jsonrpc::TraceContext>>,
                },
            )*
            /// A method this version of the crate does not know, kept as it came.
            Unrecognized {
                id: $crate::RequestId,
                method: String,
                /// `params` as it came (`None` when absent or `null`).
                params: Option<$crate::RawJson>,
                /// The W3C trace context of the request (the envelope's `trace`), boxed.
                trace: Option<Box<$crate::jsonrpc::TraceContext>>,
            },
        }

        impl $name {
            /// The method name on the wire.
            pub fn method(&self) -> &str {
                match self {
                    $($(#[cfg($cfg)])? Self::$variant { .. } => $wire,)*
                    Self::Unrecognized { method, .. } => method,
                }
            }

            /// The request id.
            pub fn id(&self) -> &$crate::RequestId {
                match self {
                    $($(#[cfg($cfg)])? Self::$variant { id, .. } => id,)*
                    Self::Unrecognized { id, .. } => id,
                }
            }

            /// The W3C trace context the request carries (the envelope's `trace`), with which
            /// codex joins its own spans to the caller's trace.
            pub fn trace(&self) -> Option<&$crate::jsonrpc::TraceContext> {
                match self {
                    $($(#[cfg($cfg)])? Self::$variant { trace, .. } => trace.as_deref(),)*
                    Self::Unrecognized { trace, .. } => trace.as_deref(),
                }
            }

            /// Sets the W3C trace context the request carries (`None`: no `trace` member).
            pub fn set_trace(&mut self, context: Option<$crate::jsonrpc::TraceContext>) {
                let context = context.map(Box::new);
                match self {
                    $($(#[cfg($cfg)])? Self::$variant { trace, .. } => *trace = context,)*
                    Self::Unrecognized { trace, .. } => *trace = context,
                }
            }

            /// Sets the envelope members a request may carry (`trace`) from the message's
            /// members other than `id`, `method` and `params`.
            pub(crate) fn set_envelope(&mut self, extra: &[(std::borrow::Cow<'_, str>, &serde_json::value::RawValue)]) -> Result<(), $crate::jsonrpc::ParamsError> {
                self.set_trace($crate::codec::member(extra, $crate::jsonrpc::TraceContext::MEMBER)?);
                Ok(())
            }

            /// Decodes a request from its id, method and raw `params` (absent and `null` are the
            /// same); the envelope members are left unset (see `set_envelope`).
            pub(crate) fn from_parts(id: $crate::RequestId, method: &str, params: Option<&serde_json::value::RawValue>) -> Result<Self, $crate::jsonrpc::ParamsError> {
                $crate::codec::decode_raw(params, |params| Self::decode_params(id.clone(), method, params))
            }

            /// Decodes the `params` of a request of `method` straight from `params` (pass a `null` when the message has none); the envelope members are left unset (see `set_envelope`).
            pub(crate) fn decode_params(id: $crate::RequestId, method: &str, params: &mut $crate::codec::Reader<'_>) -> $crate::codec::Result<Self> {
                Ok(match method {
                    $(
                        $(#[cfg($cfg)])?
                        $wire => {
                            $crate::wire_methods::params::none!(params $($kind)?);
                            Self::$variant { id, $(params: $crate::wire_methods::params::$kind::decode(params)?,)? trace: None }
                        }
                    )*
                    _ => Self::Unrecognized { id, method: method.to_owned(), params: $crate::codec::Decode::decode(params)?, trace: None },
                })
            }

            /// Calls `visitor` with the marker type of `method`, or its `unrecognized` for a
            /// method this version of the crate does not know.
            pub fn visit_method<V: $crate::RequestVisitor>(method: &str, visitor: V) -> V::Output {
                match method {
                    $($(#[cfg($cfg)])? $wire => visitor.visit::<$module::$variant>(),)*
                    _ => visitor.unrecognized(),
                }
            }
        }

        $crate::wire_methods::message_impls!(
            $name,
            |self, serializer| $crate::codec::MessageWriter::new(serializer, Some(self.id()), self.method(), |map: &mut S::SerializeMap| {
                match self.trace() {
                    Some(trace) => serde::ser::SerializeMap::serialize_entry(map, $crate::jsonrpc::TraceContext::MEMBER, trace),
                    None => Ok(()),
                }
            }),
            $([$($cfg)?] $variant [$($kind)?])*
        );

        $($response_doc)*
        #[derive(Debug, Clone, PartialEq, serde::Serialize)]
        #[serde(untagged)]
        pub enum $response {
            $(
                #[doc = concat!(" The result of `", $wire, "` ([`", stringify!($module), "::", stringify!($variant), "`](crate::", stringify!($module), "::", stringify!($variant), ")).")]
                $(#[cfg($cfg)])?
                $variant(Box<$result>),
            )*
            /// The result of a method this version of the crate does not know, kept as it came.
            Unrecognized($crate::RawJson),
        }

        impl $response {
            /// Decodes the `result` of a response to a request of `method` (a client keeps
            /// `id -> method` for the requests it sent).
            pub fn decode(method: &str, result: &serde_json::value::RawValue) -> Result<Self, $crate::jsonrpc::ParamsError> {
                $crate::codec::decode_raw(Some(result), |result| Self::decode_result(method, result))
            }

            /// Decodes the `result` of a response to a request of `method` straight from
            /// `result`.
            pub(crate) fn decode_result(method: &str, result: &mut $crate::codec::Reader<'_>) -> $crate::codec::Result<Self> {
                // Boxed as `params::required::decode` boxes params.
                Ok(match method {
                    $($(#[cfg($cfg)])? $wire => Self::$variant($crate::wire_methods::params::boxed(result)?),)*
                    _ => Self::Unrecognized($crate::codec::Decode::decode(result)?),
                })
            }

            /// The typed result of a request of `R`: `Some` when this is the result of a method
            /// whose response type is `R::Response` (as [`Self::decode`] typed it by
            /// the request's method), without decoding it again; `None` otherwise (another
            /// method, or `Unrecognized`).
            pub fn into_result<R: $crate::Request>(self) -> Option<R::Response>
            where
                R::Response: 'static,
            {
                self.into_any()?.downcast::<R::Response>().ok().map(|result| *result)
            }

            /// The typed result, of whatever type: the `match` over every method, compiled once
            /// and not for each `R` of [`Self::into_result`].
            fn into_any(self) -> Option<Box<dyn std::any::Any>> {
                match self {
                    $($(#[cfg($cfg)])? Self::$variant(result) => Some(result as Box<dyn std::any::Any>),)*
                    Self::Unrecognized(_) => None,
                }
            }
        }

        #[cfg(feature = "inspect")]
        impl $crate::inspect::Inspect for $response {
            fn inspect<'a>(&'a self, path: &mut Vec<$crate::inspect::Step<'a>>, inspector: &mut dyn $crate::inspect::Inspector) {
                let known: Option<(&'static str, &'static str, &'a dyn $crate::inspect::Inspect)> = match self {
                    $($(#[cfg($cfg)])? Self::$variant(result) => Some((stringify!($variant), $wire, result)),)*
                    Self::Unrecognized(_) => None,
                };
                match known {
                    Some((rust, wire, result)) => $crate::inspect::variant(path, inspector, stringify!($response), rust, Some(wire), result),
                    None => inspector.unrecognized(path, stringify!($response)),
                }
            }
        }
    };
    (
        @ExperimentalApi $name:ident {
            $(
                $(#[doc = $method_doc:literal])*
                $(#[cfg($cfg:meta)])?
                $variant:ident = $wire:literal ($($kind:ident $params:ty $(, $shared:ident)?)?) -> $result:ty,
            )*
        }
    ) => {
        #[cfg(feature = "experimental")]
        impl $crate::ExperimentalApi for $name {
            // An experimental method's params are not looked at.
            #[allow(unused_variables)]
            fn experimental_reason(&self) -> Option<$crate::ExperimentalReason> {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant { $(params: $crate::wire_methods::params::$kind::bind!(params),)? .. } => {
                            $crate::wire_methods::params::reason!([$($cfg)?] $wire $($kind params)?)
                        }
                    )*
                    Self::Unrecognized { .. } => None,
                }
            }
        }

        $(
            $crate::wire_methods::params::experimental_api!([$($cfg)?] $wire $(: $params $(, $shared)?)?);
        )*
    };
}

/// The notifications of one direction, from one table. See the module docs.
macro_rules! wire_notifications {
    (
        $(#[doc = $doc:literal])*
        pub enum $name:ident;
        $(#[doc = $module_doc:literal])*
        pub mod $module:ident;
        envelope $envelope:tt
        methods {
            $(
                $(#[doc = $method_doc:literal])*
                $(#[cfg($cfg:meta)])?
                $variant:ident = $wire:literal ($($kind:ident $params:ty)?)
                    $(thread($($thread:tt)+))? $(turn($($turn:tt)+))? $(item($($item:tt)+))?,
            )*
        }
    ) => {
        // Each row gets its own copy of the envelope, so that the variants can declare it.
        $crate::wire_methods::wire_notifications!(
            @expand [$(#[doc = $doc])*] [$(#[doc = $module_doc])*] $name $module $envelope {
                $(
                    $(#[doc = $method_doc])*
                    $(#[cfg($cfg)])?
                    $variant = $wire ($($kind $params)?) $envelope
                        [$($($thread)+)?] [$($($turn)+)?] [$($($item)+)?],
                )*
            }
        );
    };
    (
        @expand [$($doc:tt)*] [$($module_doc:tt)*] $name:ident $module:ident {
            $($(#[doc = $env_doc:literal])* $env:ident: $env_ty:ty = $env_wire:literal,)*
        } {
            $(
                $(#[doc = $method_doc:literal])*
                $(#[cfg($cfg:meta)])?
                $variant:ident = $wire:literal ($($kind:ident $params:ty)?) { $($(#[doc = $row_env_doc:literal])* $row_env:ident: $row_env_ty:ty = $row_env_wire:literal,)* }
                    [$($thread:tt)*] [$($turn:tt)*] [$($item:tt)*],
            )*
        }
    ) => {
        $($module_doc)*
        pub mod $module {
            $(
                #[doc = concat!(" `", $wire, "`")]
                #[doc = ""]
                $(#[doc = $method_doc])*
                $(#[cfg($cfg)])?
                #[derive(Debug)]
                pub enum $variant {}

                $(#[cfg($cfg)])?
                $crate::wire_methods::since_until!($variant = $wire);
            )*
        }

        $(
            $(#[cfg($cfg)])?
            impl $crate::Notification for $module::$variant {
                const METHOD: &'static str = $wire;
                type Params = $crate::wire_methods::params::marker_params!($($kind $params)?);
            }
        )*

        $($doc)*
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $(
                #[doc = concat!(" `", $wire, "`: [`", stringify!($module), "::", stringify!($variant), "`](crate::", stringify!($module), "::", stringify!($variant), ")")]
                #[doc = ""]
                $(#[doc = $method_doc])*
                $(#[cfg($cfg)])?
                $variant {
                    $(params: $crate::wire_methods::params::$kind::field!($params),)?
                    $($(#[doc = $row_env_doc])* $row_env: Option<$row_env_ty>,)*
                },
            )*
            /// A method this version of the crate does not know, kept as it came.
            Unrecognized {
                method: String,
                /// `params` as it came (`None` when absent or `null`).
                params: Option<$crate::RawJson>,
                $($(#[doc = $env_doc])* $env: Option<$env_ty>,)*
            },
        }

        impl $name {
            /// The method name on the wire.
            pub fn method(&self) -> &str {
                match self {
                    $($(#[cfg($cfg)])? Self::$variant { .. } => $wire,)*
                    Self::Unrecognized { method, .. } => method,
                }
            }

            /// Decodes a notification from its method and raw `params` (absent and `null` are the
            /// same); the envelope members are left unset (see `set_envelope`).
            pub(crate) fn from_parts(
                method: &str,
                params: Option<&serde_json::value::RawValue>,
            ) -> Result<Self, $crate::jsonrpc::ParamsError> {
                $crate::codec::decode_raw(params, |params| Self::decode_params(method, params))
            }

            /// Decodes the `params` of a notification of `method` straight from `params` (pass a `null` when the message has none); the envelope members are left unset (see `set_envelope`).
            pub(crate) fn decode_params(method: &str, params: &mut $crate::codec::Reader<'_>) -> $crate::codec::Result<Self> {
                Ok(match method {
                    $(
                        $(#[cfg($cfg)])?
                        $wire => {
                            $crate::wire_methods::params::ignored!(params $($kind)?);
                            Self::$variant { $(params: $crate::wire_methods::params::$kind::decode(params)?,)? $($row_env: None,)* }
                        }
                    )*
                    _ => Self::Unrecognized { method: method.to_owned(), params: $crate::codec::Decode::decode(params)?, $($env: None,)* },
                })
            }

            /// Sets the envelope members every notification may carry from the message's
            /// members other than `method` and `params`.
            pub(crate) fn set_envelope(&mut self, extra: &[(std::borrow::Cow<'_, str>, &serde_json::value::RawValue)]) -> Result<(), $crate::jsonrpc::ParamsError> {
                let _ = extra;
                let ($($env,)*) = self.envelope_mut();
                $(*$env = $crate::codec::member(extra, $env_wire)?;)*
                Ok(())
            }

            /// The envelope members of this notification, to set.
            fn envelope_mut(&mut self) -> ($(&mut Option<$env_ty>,)*) {
                match self {
                    $($(#[cfg($cfg)])? Self::$variant { $($row_env,)* .. } => ($($row_env,)*),)*
                    Self::Unrecognized { $($env,)* .. } => ($($env,)*),
                }
            }

            /// Calls `visitor` with the marker type of `method`, or its `unrecognized` for a
            /// method this version of the crate does not know.
            pub fn visit_method<V: $crate::NotificationVisitor>(method: &str, visitor: V) -> V::Output {
                match method {
                    $($(#[cfg($cfg)])? $wire => visitor.visit::<$module::$variant>(),)*
                    _ => visitor.unrecognized(),
                }
            }

            /// The thread this notification is about: `params.threadId`, for the methods whose
            /// params have it. `None` for the others and for a method this crate does not know
            /// (`Unrecognized`: read its params).
            pub fn thread_id(&self) -> Option<&str> {
                self.routes()[0]
            }

            /// The turn this notification is about: `params.turnId`, or `params.turn.id`, for
            /// the methods whose params have one. `None` for the others and for a method this
            /// crate does not know.
            pub fn turn_id(&self) -> Option<&str> {
                self.routes()[1]
            }

            /// The item this notification is about: `params.item.id` (item lifecycle
            /// notifications such as `item/started` and `item/completed`). `None` for the others
            /// and for a method this crate does not know.
            pub fn item_id(&self) -> Option<&str> {
                self.routes()[2]
            }

            /// The thread, turn and item routes of the row, in one match.
            #[allow(unused_variables)]
            fn routes(&self) -> [Option<&str>; 3] {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant { $(params: $crate::wire_methods::params::$kind::bind!(params),)? .. } => [
                            $crate::wire_methods::route!($($kind params)? [$($thread)*]),
                            $crate::wire_methods::route!($($kind params)? [$($turn)*]),
                            $crate::wire_methods::route!($($kind params)? [$($item)*]),
                        ],
                    )*
                    Self::Unrecognized { .. } => [None, None, None],
                }
            }

            /// The envelope members of this notification.
            fn envelope(&self) -> ($(&Option<$env_ty>,)*) {
                match self {
                    $($(#[cfg($cfg)])? Self::$variant { $($row_env,)* .. } => ($($row_env,)*),)*
                    Self::Unrecognized { $($env,)* .. } => ($($env,)*),
                }
            }
        }

        $crate::wire_methods::message_impls!(
            $name,
            |self, serializer| {
                let write_envelope = |map: &mut S::SerializeMap| {
                    let ($($env,)*) = self.envelope();
                    $(if let Some(value) = $env {
                        serde::ser::SerializeMap::serialize_entry(map, $env_wire, value)?;
                    })*
                    let _ = map;
                    Ok(())
                };
                $crate::codec::MessageWriter::new(serializer, None, self.method(), write_envelope)
            },
            $([$($cfg)?] $variant [$($kind)?])*
        );
    };
}

/// `Serialize` and the `Inspect` walk of a message enum, the same for requests and
/// notifications: each row's params written or walked by its kind, an unrecognized method's
/// params as they came. `|self, serializer| writer` makes the `MessageWriter` (the id, or the
/// envelope members; `S` is the serializer's type).
#[doc(hidden)]
macro_rules! message_impls {
    (
        $name:ident,
        |$this:ident, $serializer:ident| $writer:expr,
        $([$($cfg:meta)?] $variant:ident [$($kind:ident)?])*
    ) => {
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&$this, $serializer: S) -> Result<S::Ok, S::Error> {
                let message = $writer;
                match $this {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant { $(params: $crate::wire_methods::params::$kind::bind!(params),)? .. } => {
                            message.params($crate::wire_methods::params::written!($($kind params)?))
                        }
                    )*
                    Self::Unrecognized { params, .. } => message.params(params.as_ref()),
                }
            }
        }

        #[cfg(feature = "inspect")]
        impl $crate::inspect::Inspect for $name {
            fn inspect<'a>(&'a self, path: &mut Vec<$crate::inspect::Step<'a>>, inspector: &mut dyn $crate::inspect::Inspector) {
                let known: Option<(&'static str, Option<&'a dyn $crate::inspect::Inspect>)> = match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant { $(params: $crate::wire_methods::params::$kind::bind!(params),)? .. } => {
                            Some((stringify!($variant), $crate::wire_methods::params::walked!($($kind params)?)))
                        }
                    )*
                    Self::Unrecognized { .. } => None,
                };
                match known {
                    Some((rust, params)) => $crate::inspect::message(path, inspector, stringify!($name), rust, self.method(), params),
                    None => inspector.unrecognized(path, stringify!($name)),
                }
            }
        }
    };
}

pub(crate) use {message_impls, wire_notifications, wire_requests};

/// The body of a route accessor's arm: the row's path read from the params through
/// [`Route`], or `None` for a row without one.
macro_rules! route {
    ($($kind:ident $params:ident)? []) => {
        None
    };
    ($kind:ident $params:ident [$($path:tt)+]) => {
        $crate::wire_methods::params::$kind::route($params, |p| $crate::wire_methods::Route::route(&p.$($path)+))
    };
}

pub(crate) use route;

/// A marker type's `SINCE` and `UNTIL`: its method's row of the methods' table, read when the
/// crate compiles ([`crate::availability::since_of`]), so that the table states them once.
macro_rules! since_until {
    ($variant:ident = $wire:literal) => {
        impl $variant {
            /// The first codex release of the supported range that has this method
            /// ([`FLOOR`](crate::availability::FLOOR): every release of the range, and maybe
            /// older ones); [`crate::availability::method`] answers the same by wire name.
            pub const SINCE: &'static str = $crate::availability::since_of($wire);
            /// The last codex release that had this method, when a later one removed it.
            pub const UNTIL: Option<&'static str> = $crate::availability::until_of($wire);
        }
    };
}

pub(crate) use since_until;

/// What a route accessor reads at the end of its path: a string member of any presence, or
/// an `id()` that is already an `Option<&str>`.
pub trait Route<'a> {
    fn route(self) -> Option<&'a str>;
}

impl<'a> Route<'a> for &'a String {
    fn route(self) -> Option<&'a str> {
        Some(self)
    }
}

impl<'a> Route<'a> for &'a Option<String> {
    fn route(self) -> Option<&'a str> {
        self.as_deref()
    }
}

impl<'a> Route<'a> for &'a Option<Option<String>> {
    fn route(self) -> Option<&'a str> {
        self.as_ref().and_then(|v| v.as_deref())
    }
}

impl<'a> Route<'a> for &Option<&'a str> {
    fn route(self) -> Option<&'a str> {
        *self
    }
}

/// The kinds of params a method row states, each a module with the same items.
pub mod params {
    /// The Rust type of a marker's `Params`: `()` for a method without params.
    macro_rules! marker_params {
        () => { () };
        (required $params:ty) => { $params };
        (optional $params:ty) => { Option<$params> };
    }

    /// Reads `params` as none (absent, `null` or `{}`: [`codec::no_params`](crate::codec::no_params))
    /// for a method without params; nothing for the others, which decode their params into the
    /// variant.
    macro_rules! none {
        ($params:ident) => {
            $crate::codec::no_params($params)?
        };
        ($params:ident $kind:ident) => {};
    }

    /// Skips `params` of a notification without params, whatever they hold: codex reads only
    /// the method of such a notification (0.171.0 logs `initialized` with `{"x": 1}` or `5` as
    /// received, and refuses nothing). The re-encoding is without `params`, so the drift check
    /// reports any but `null` and `{}` as a member the types lack.
    /// Nothing for the others, which decode their params into the variant.
    macro_rules! ignored {
        ($params:ident) => {
            $params.skip_value()?
        };
        ($params:ident $kind:ident) => {};
    }

    /// The params a variant writes: `None` for a method without params.
    macro_rules! written {
        () => {
            None::<&()>
        };
        ($kind:ident $params:ident) => {
            $crate::wire_methods::params::$kind::written($params)
        };
    }

    /// The params a variant's walk visits: `None` for a method without params.
    macro_rules! walked {
        () => {
            None
        };
        ($kind:ident $params:ident) => {
            Some($params)
        };
    }

    /// A request's `experimental_reason`: its method for an experimental method (the whole
    /// method is experimental), else what its params use.
    macro_rules! reason {
        ([$cfg:meta] $wire:literal $($kind:ident $params:ident)?) => {
            Some($crate::ExperimentalReason::method_itself($wire))
        };
        ([] $wire:literal) => {
            None
        };
        ([] $wire:literal $kind:ident $params:ident) => {
            $crate::wire_methods::params::$kind::experimental_reason($wire, $params)
        };
    }

    /// `ExperimentalApi` for a params type of one method (not for one several methods share,
    /// marked `shared`, whose descriptor depends on the method).
    macro_rules! experimental_api {
        ([$($cfg:meta)?] $wire:literal) => {};
        ([$($cfg:meta)?] $wire:literal: $params:ty, shared) => {};
        ([$($cfg:meta)?] $wire:literal: $params:ty) => {
            #[cfg(feature = "experimental")]
            $(#[cfg($cfg)])?
            impl $crate::ExperimentalApi for $params {
                fn experimental_reason(&self) -> Option<$crate::ExperimentalReason> {
                    $crate::experimental::reason($wire, self)
                }
            }
        };
    }

    pub(crate) use {experimental_api, ignored, marker_params, none, reason, walked, written};

    /// Decodes a `T` into a box allocated before it, as params and results are held.
    ///
    /// Not `Box::new(value)`: its allocation may unwind while it holds the value, so each
    /// call compiles the value's drop code (and that of every type inside it) into the
    /// caller's codegen unit once more, for every params and result type of the method table.
    /// Here no `T` is held while allocating, and a failed decode only frees the empty box.
    #[inline]
    pub fn boxed<T: crate::codec::Decode>(reader: &mut crate::codec::Reader<'_>) -> crate::codec::Result<Box<T>> {
        let mut slot = Box::<T>::new_uninit();
        slot.write(T::decode(reader)?);
        // SAFETY: `slot` holds an initialised `T`, written above.
        Ok(unsafe { slot.assume_init() })
    }

    /// Params that must be present: the variant holds `params: Box<T>`.
    pub mod required {
        /// The type of the variant's `params`.
        macro_rules! field {
            ($params:ty) => { Box<$params> };
        }
        /// The pattern that binds the variant's `params`.
        macro_rules! bind {
            ($params:ident) => {
                $params
            };
        }
        pub(crate) use {bind, field};

        /// Decoded into its box: see [`super::boxed`].
        #[inline]
        pub fn decode<T: crate::codec::Decode>(params: &mut crate::codec::Reader<'_>) -> crate::codec::Result<Box<T>> {
            super::boxed(params)
        }

        #[inline]
        pub fn written<T: ?Sized>(params: &T) -> Option<&T> {
            Some(params)
        }

        #[inline]
        pub fn route<T>(params: &T, read: fn(&T) -> Option<&str>) -> Option<&str> {
            read(params)
        }

        #[cfg(feature = "experimental")]
        #[inline]
        pub fn experimental_reason<T: crate::experimental::Surface + ?Sized>(
            method: &'static str,
            params: &T,
        ) -> Option<crate::ExperimentalReason> {
            crate::experimental::reason(method, params)
        }
    }

    /// Params that may be absent: the variant holds `params: Option<Box<T>>`.
    pub mod optional {
        macro_rules! field {
            ($params:ty) => { Option<Box<$params>> };
        }
        pub(crate) use super::required::bind;
        pub(crate) use field;

        /// Params decoded into their box ([`super::boxed`]), for serde's `Option`.
        #[inline]
        pub fn decode<T: crate::codec::Decode>(
            params: &mut crate::codec::Reader<'_>,
        ) -> crate::codec::Result<Option<Box<T>>> {
            match params.null()? {
                true => Ok(None),
                false => super::boxed(params).map(Some),
            }
        }

        #[inline]
        pub fn written<T>(params: &Option<Box<T>>) -> Option<&T> {
            params.as_deref()
        }

        #[inline]
        pub fn route<T>(params: &Option<Box<T>>, read: fn(&T) -> Option<&str>) -> Option<&str> {
            params.as_deref().and_then(read)
        }

        #[cfg(feature = "experimental")]
        #[inline]
        pub fn experimental_reason<T: crate::experimental::Surface>(
            method: &'static str,
            params: &Option<Box<T>>,
        ) -> Option<crate::ExperimentalReason> {
            params.as_deref().and_then(|params| crate::experimental::reason(method, params))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::params;

    /// `boxed` (the one `unsafe` block of the crate) gives the decoded value, for a sized type
    /// and a zero-sized one, and an error; the fuzz target `decode` runs it under
    /// AddressSanitizer.
    #[test]
    fn boxed_holds_the_decoded_value_and_frees_an_empty_box() {
        use crate::codec::Reader;

        let value: Box<Vec<String>> = params::boxed(&mut Reader::new(r#"["a", "b"]"#)).unwrap();
        assert_eq!(*value, ["a", "b"]);
        let unit: Box<()> = params::boxed(&mut Reader::new("null")).unwrap();
        assert_eq!(*unit, ());
        let error = params::boxed::<Vec<String>>(&mut Reader::new(r#"["a", 7]"#)).unwrap_err();
        assert!(error.to_string().starts_with("invalid type: integer `7`"), "{error}");

        assert_eq!(params::optional::decode::<Vec<String>>(&mut Reader::new("null")).unwrap(), None);
        assert_eq!(
            params::optional::decode::<Vec<String>>(&mut Reader::new(r#"["a"]"#)).unwrap().as_deref(),
            Some(&vec!["a".to_owned()])
        );
    }
}
