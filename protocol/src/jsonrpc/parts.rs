//! The envelope with `params` and `result` kept raw ([`Parts`]), and the two-step decode of a
//! message from it ([`FromParts`]).

use super::*;

/// Where a notification belongs (its thread, turn and item), read from its raw params by the
/// members that route every notification the crate types: for a notification of a method this
/// version of the crate does not know (`ServerNotification::Unrecognized`), or one whose
/// params did not decode. A typed notification says the same through
/// `ServerNotification::thread_id`, `turn_id` and `item_id`.
///
/// ```
/// use codex_app_protocol::jsonrpc::RawRoute;
///
/// let route = RawRoute::of_params(r#"{"threadId":"t","turn":{"id":"u"},"later":1}"#);
/// assert_eq!((route.thread.as_deref(), route.turn.as_deref(), route.item), (Some("t"), Some("u"), None));
/// ```
#[derive(Debug, Default, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RawRoute {
    pub thread: Option<String>,
    pub turn: Option<String>,
    pub item: Option<String>,
}

impl RawRoute {
    /// The route of `params` (JSON text): for each of thread, turn and item, the first of its
    /// members that the params have as a string. A member of another type routes nothing, and
    /// neither does text that is not a JSON object.
    pub fn of_params(params: &str) -> RawRoute {
        let Ok(Value::Object(params)) = serde_json::from_str::<Value>(params) else { return RawRoute::default() };
        let params = Value::Object(params);
        let first = |paths: &[&[&str]]| {
            paths.iter().find_map(|path| {
                let at = path.iter().try_fold(&params, |value, member| value.get(member))?;
                at.as_str().map(str::to_owned)
            })
        };
        let paths = &crate::generated::access::ROUTES;
        RawRoute { thread: first(paths.thread), turn: first(paths.turn), item: first(paths.item) }
    }
}

/// The members of a notification's params that route it, per accessor: paths from the params
/// to a string, tried in order (written by the generator from its settings).
#[doc(hidden)]
pub struct RoutePaths {
    pub thread: &'static [&'static [&'static str]],
    pub turn: &'static [&'static [&'static str]],
    pub item: &'static [&'static [&'static str]],
}

/// The members of one message, with `params` and `result` still raw.
#[derive(Debug, Default)]
pub struct Parts<'a> {
    /// `None` when absent or `null` (`null_id` tells them apart).
    pub id: Option<RequestId>,
    /// `"id": null`: allowed on an error response (the server could not tell which request
    /// failed); a message with a method and a `null` id is no message.
    pub null_id: bool,
    pub method: Option<Cow<'a, str>>,
    pub params: Option<&'a RawValue>,
    pub result: Option<&'a RawValue>,
    pub error: Option<&'a RawValue>,
    /// Members other than `id`, `method`, `params`, `result`, `error` and `jsonrpc`.
    pub extra: Vec<(Cow<'a, str>, &'a RawValue)>,
}

impl<'a> Parts<'a> {
    /// Reads the envelope of one line.
    pub fn parse(line: &'a str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(line)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Parts<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PartsVisitor<'a>(std::marker::PhantomData<&'a ()>);

        impl<'de: 'a, 'a> Visitor<'de> for PartsVisitor<'a> {
            type Value = Parts<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC message object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parts<'a>, A::Error> {
                let mut parts = Parts::default();
                while let Some(Str(key)) = map.next_key::<Str<'de>>()? {
                    match key.as_ref() {
                        "id" => {
                            parts.id = map.next_value::<Option<RequestId>>()?;
                            parts.null_id = parts.id.is_none();
                        }
                        "method" => parts.method = Some(map.next_value::<Str<'de>>()?.0),
                        "params" => parts.params = Some(map.next_value()?),
                        "result" => parts.result = Some(map.next_value()?),
                        "error" => parts.error = Some(map.next_value()?),
                        "jsonrpc" => {
                            let version = map.next_value::<Str<'de>>()?.0;
                            if version != "2.0" {
                                return Err(de::Error::invalid_value(de::Unexpected::Str(&version), &"\"2.0\""));
                            }
                        }
                        _ => parts.extra.push((key, map.next_value()?)),
                    }
                }
                Ok(parts)
            }
        }

        deserializer.deserialize_map(PartsVisitor(std::marker::PhantomData))
    }
}

pub(super) fn request_id(p: &Parts<'_>) -> Result<RequestId, ParamsError> {
    p.id.clone().ok_or_else(|| ParamsError { path: JsonPath::root(), source: de::Error::missing_field("id") })
}

macro_rules! request_from_parts {
    ($($t:ty),*) => {$(
        impl FromParts for $t {
            /// The params only: the envelope members are set apart (`set_envelope`), so that
            /// their errors are not reported inside `params`.
            fn from_parts(p: &Parts<'_>) -> Result<Self, ParamsError> {
                <$t>::from_parts(request_id(p)?, p.method.as_deref().unwrap_or_default(), p.params)
            }

            fn decode_params(id: Option<RequestId>, method: &str, params: &mut codec::Reader<'_>) -> codec::Result<Self> {
                let id = id.ok_or_else(|| de::Error::missing_field("id"))?;
                <$t>::decode_params(id, method, params)
            }

            fn set_envelope(&mut self, extra: &[(Cow<'_, str>, &RawValue)]) -> Result<(), ParamsError> {
                <$t>::set_envelope(self, extra)
            }
        }
    )*};
}
request_from_parts!(ClientRequest, ServerRequest);

macro_rules! notification_from_parts {
    ($($t:ty),*) => {$(
        impl FromParts for $t {
            /// The params only: the envelope members are set apart (`set_envelope`), so that
            /// their errors are not reported inside `params`.
            fn from_parts(p: &Parts<'_>) -> Result<Self, ParamsError> {
                <$t>::from_parts(p.method.as_deref().unwrap_or_default(), p.params)
            }

            fn decode_params(_id: Option<RequestId>, method: &str, params: &mut codec::Reader<'_>) -> codec::Result<Self> {
                <$t>::decode_params(method, params)
            }

            fn set_envelope(&mut self, extra: &[(Cow<'_, str>, &RawValue)]) -> Result<(), ParamsError> {
                <$t>::set_envelope(self, extra)
            }
        }
    )*};
}
notification_from_parts!(ServerNotification, ClientNotification);
