//! The one-pass decode of a line ([`Message::from_line`]): `params` and `result` decoded by
//! their types straight from the line, as the envelope's members come.

use super::*;

impl<Req: FromParts, Notif: FromParts, Res: FromResult> Message<Req, Notif, Res> {
    /// Decodes one line (without its newline). A response's `result` is kept raw
    /// ([`Response`]), or as `Unrecognized` in a [`TypedResponse`]: use
    /// [`from_line_with`](Self::from_line_with) to type it.
    pub fn from_line(line: &str) -> Result<Self, DecodeError> {
        Self::from_line_with(line, |_| None::<&str>)
    }

    /// Decodes one line (without its newline); `method_of` gives the method of the request a
    /// response answers (a client keeps `id -> method` for the requests it sent), so its
    /// `result` is decoded by that method's response type.
    pub fn from_line_with<M: AsRef<str>>(
        line: &str,
        method_of: impl Fn(&RequestId) -> Option<M>,
    ) -> Result<Self, DecodeError> {
        match Self::one_pass(line, &method_of) {
            Ok(message) => Ok(message),
            // Another member order, or an error: the two-step path gives the same message, or
            // the error with its path.
            Err(_) => {
                let parts = Parts::parse(line).map_err(|e| DecodeError::new(DecodeErrorKind::Envelope(e)))?;
                Self::from_envelope_with(parts, method_of)
            }
        }
    }

    /// The one-pass decode; an error means "take the two-step path".
    pub(super) fn one_pass<M: AsRef<str>>(
        line: &str,
        method_of: &impl Fn(&RequestId) -> Option<M>,
    ) -> codec::Result<Self> {
        let mut reader = codec::Reader::new(line);
        let message = Self::read_line(&mut reader, method_of)?;
        reader.end()?;
        Ok(message)
    }

    /// Decodes a message from envelope parts already read.
    pub fn from_envelope(parts: Parts<'_>) -> Result<Self, DecodeError> {
        Self::from_envelope_with(parts, |_| None::<&str>)
    }

    /// Decodes a message from envelope parts already read; `method_of` as in
    /// [`from_line_with`](Self::from_line_with).
    pub fn from_envelope_with<M: AsRef<str>>(
        parts: Parts<'_>,
        method_of: impl Fn(&RequestId) -> Option<M>,
    ) -> Result<Self, DecodeError> {
        let member = |member, error| {
            let mut e = DecodeError::new(DecodeErrorKind::Member { member, error });
            e.method = parts.method.as_deref().map(str::to_owned);
            e.id = parts.id.clone();
            e
        };
        let not = |why| {
            let mut e = DecodeError::new(DecodeErrorKind::NotAMessage(why));
            e.method = parts.method.as_deref().map(str::to_owned);
            e.id = parts.id.clone();
            e
        };
        match (&parts.method, &parts.result, &parts.error) {
            (Some(_), None, None) if parts.null_id => {
                Err(not("a request with a `null` id (a notification has no `id`)"))
            }
            (Some(_), None, None) if parts.id.is_some() => {
                let mut request = Req::from_parts(&parts).map_err(|e| member("params", e))?;
                request.set_envelope(&parts.extra).map_err(|e| member(ENVELOPE_MEMBER, e))?;
                Ok(Message::Request(request))
            }
            (Some(_), None, None) => {
                let mut notification = Notif::from_parts(&parts).map_err(|e| member("params", e))?;
                // An envelope member's error: its path starts with the member's name.
                notification.set_envelope(&parts.extra).map_err(|e| member(ENVELOPE_MEMBER, e))?;
                Ok(Message::Notification(notification))
            }
            (None, Some(result), None) => {
                let id = parts.id.clone().ok_or_else(|| not("a response without `id`"))?;
                let method = method_of(&id);
                let method = method.as_ref().map(AsRef::as_ref);
                codec::decode_raw(Some(result), |result| Res::decode_result(id.clone(), method, result))
                    .map(Message::Response)
                    .map_err(|e| {
                        let mut e = member("result", e);
                        e.method = method.map(str::to_owned);
                        e
                    })
            }
            (None, None, Some(error)) => {
                let error = codec::decode_raw(Some(error), ErrorObject::decode).map_err(|e| member("error", e))?;
                Ok(Message::Error(ErrorResponse { id: parts.id.clone(), error }))
            }
            (None, None, None) => Err(not("no `method`, `result` or `error`")),
            _ => Err(not("more than one of `method`, `result` and `error`")),
        }
    }

    /// Reads messages from an NDJSON stream; see [`MessageReader`].
    pub fn reader<R: BufRead>(input: R) -> MessageReader<R, Self> {
        MessageReader::new(input)
    }
}

/// What the one-pass decode has read of a message's body so far.
enum Body<Req, Notif, Res> {
    Request(Req),
    Notification(Notif),
    Response(Res),
    Error(ErrorObject),
}

/// The error that ends the one-pass decode: the caller takes the two-step path.
fn two_step() -> serde_json::Error {
    de::Error::custom("take the two-step path")
}

impl<Req: FromParts, Notif: FromParts, Res: FromResult> Message<Req, Notif, Res> {
    /// The one-pass decode of a line. Any member order it does not handle ends it with an
    /// error, and the caller takes the two-step path.
    fn read_line<'de, M: AsRef<str>>(
        reader: &mut codec::Reader<'de>,
        method_of: &impl Fn(&RequestId) -> Option<M>,
    ) -> codec::Result<Self> {
        let mut object = reader.begin_object("a JSON-RPC message object")?;
        // `id` is `Some(None)` for `"id": null`.
        let mut id: Option<Option<RequestId>> = None;
        let mut method: Option<Cow<'de, str>> = None;
        let mut body: Option<Body<Req, Notif, Res>> = None;
        let mut extra: Vec<(Cow<'de, str>, &'de RawValue)> = Vec::new();
        while let Some(key) = reader.next_key(&mut object)? {
            match key.as_ref() {
                // `params` and `result` take the id; one after them is another order.
                "id" if id.is_none() && matches!(body, None | Some(Body::Error(_))) => {
                    id = Some(Option::<RequestId>::decode(reader)?)
                }
                "method" if method.is_none() && body.is_none() => method = Some(reader.string_for("a string")?),
                "params" if body.is_none() => {
                    let Some(method) = method.as_deref() else { return Err(two_step()) };
                    body = Some(match id.take() {
                        Some(Some(id)) => Body::Request(Req::decode_params(Some(id), method, reader)?),
                        None => Body::Notification(Notif::decode_params(None, method, reader)?),
                        Some(None) => return Err(two_step()),
                    });
                }
                "result" if body.is_none() && method.is_none() => {
                    let Some(Some(id)) = id.take() else { return Err(two_step()) };
                    let request_method = method_of(&id);
                    let method = request_method.as_ref().map(AsRef::as_ref);
                    body = Some(Body::Response(Res::decode_result(id, method, reader)?));
                }
                "error" if body.is_none() && method.is_none() => body = Some(Body::Error(ErrorObject::decode(reader)?)),
                "jsonrpc" => {
                    if reader.string_for("a string")? != "2.0" {
                        return Err(two_step());
                    }
                }
                "id" | "method" | "params" | "result" | "error" => return Err(two_step()),
                _ => {
                    let raw = reader.raw_value()?;
                    extra.push((key, serde_json::from_str(raw)?));
                }
            }
        }
        let not_null = || codec::Reader::new("null");
        match (body, method) {
            (Some(Body::Request(mut request)), _) => {
                request.set_envelope(&extra).map_err(|_| two_step())?;
                Ok(Message::Request(request))
            }
            (Some(Body::Notification(mut notification)), _) => {
                notification.set_envelope(&extra).map_err(|_| two_step())?;
                Ok(Message::Notification(notification))
            }
            // A method without params: decoded from `null`, as if `"params": null`.
            (None, Some(method)) => match id {
                Some(Some(id)) => {
                    let mut request = Req::decode_params(Some(id), &method, &mut not_null()).map_err(|_| two_step())?;
                    request.set_envelope(&extra).map_err(|_| two_step())?;
                    Ok(Message::Request(request))
                }
                Some(None) => Err(two_step()),
                None => {
                    let mut notification =
                        Notif::decode_params(None, &method, &mut not_null()).map_err(|_| two_step())?;
                    notification.set_envelope(&extra).map_err(|_| two_step())?;
                    Ok(Message::Notification(notification))
                }
            },
            (Some(Body::Response(response)), None) => Ok(Message::Response(response)),
            (Some(Body::Error(error)), None) => Ok(Message::Error(ErrorResponse { id: id.flatten(), error })),
            _ => Err(two_step()),
        }
    }
}

/// A message from any serde deserializer, decoded exactly as [`Message::from_line`] decodes
/// its text: the value is read as JSON text first (exact with `serde_json::from_str`,
/// `from_slice` and `from_reader`; from a `Value`, numbers are as the `Value` holds them),
/// then decoded in one pass. An error carries the [`DecodeError`]'s method and serde path.
impl<'de, Req: FromParts, Notif: FromParts, Res: FromResult> Deserialize<'de> for Message<Req, Notif, Res> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        Message::from_line(raw.get()).map_err(de::Error::custom)
    }
}

/// `Deserialize` for a request or notification enum: the whole message object
/// (`{"id", "method", "params"}`), as [`Message::from_line`] reads it.
macro_rules! deserialize_message {
    ($($t:ident: $message:ty, $variant:ident, $what:literal;)*) => {$(
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                match <$message>::deserialize(deserializer)? {
                    Message::$variant(message) => Ok(message),
                    _ => Err(de::Error::custom(concat!("expected ", $what, " (a message with a `method`)"))),
                }
            }
        }
    )*};
}

deserialize_message! {
    ClientRequest: ClientMessage, Request, "a request";
    ClientNotification: ClientMessage, Notification, "a notification";
    ServerRequest: ServerMessage, Request, "a request";
    ServerNotification: ServerMessage, Notification, "a notification";
}
