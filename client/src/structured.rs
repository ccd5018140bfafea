//! Typed structured output and (with `experimental`) typed dynamic tools, from Rust types
//! that implement [`schemars::JsonSchema`] (the `schemars` feature).
//!
//! - [`Client::start_structured_turn`]: a turn whose `outputSchema` is the JSON Schema of
//!   `T`; [`StructuredTurn::result`] decodes the final assistant message into `T`, or fails
//!   with [`ClientError::Decode`] naming the type and the serde path.
//! - `Tools` (with `experimental`): dynamic tools declared from an argument type; their
//!   `item/tool/call` requests reach your function already decoded, and its return value
//!   becomes the tool's response. Wrap your handler with `Tools::handler`.

use std::marker::PhantomData;

use codex_app_protocol::path::JsonPath;
use codex_app_protocol::roundtrip::reencode;
use codex_app_protocol::*;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::client::Client;
use crate::error::{ClientError, DecodeReport};
use crate::events::Event;
use crate::turn::TurnHandle;

/// The JSON Schema of `T`, as sent in `outputSchema` or a tool's `inputSchema`.
pub fn schema_of<T: JsonSchema>() -> Value {
    schemars::schema_for!(T).to_value()
}

/// Decodes `text` (JSON) into `T`; the error names the type and the serde path.
pub fn decode_as<T: DeserializeOwned>(what: &str, text: &str) -> Result<T, ClientError> {
    let mut de = serde_json::Deserializer::from_str(text);
    T::deserialize(&mut de).and_then(|value| de.end().map(|()| value)).map_err(|e| {
        let path = JsonPath::of_error(text, &e);
        let message = format!("{what} does not fit `{}` at `{path}`: {e}", std::any::type_name::<T>());
        let mut report = DecodeReport::decoded(None, Some(path), message);
        report.line = codex_app_protocol::framing::excerpt(text, 300).into_owned();
        ClientError::Decode(report)
    })
}

// In a module behind `schemars`: the impl is labelled itself, as a module's `cfg` does not reach
// the inherent methods it adds to a type documented elsewhere.
#[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
impl Client {
    /// `turn/start` with `outputSchema` set to the JSON Schema of `T` (written into the params'
    /// JSON, so that the client builds against releases whose `turn/start` has no
    /// `outputSchema`; such a server ignores it).
    ///
    /// Cancel safe, as [`Client::start_turn`](crate::Client::start_turn).
    pub async fn start_structured_turn<T: JsonSchema + DeserializeOwned>(
        &self,
        params: TurnStartParams,
    ) -> Result<StructuredTurn<T>, ClientError> {
        let thread = params.thread_id.clone();
        let mut value =
            reencode(&params).map_err(|e| ClientError::Refused(format!("cannot encode `turn/start`: {e}")))?;
        value["outputSchema"] = schema_of::<T>();
        let turn = self.start_turn_with(thread, &value).await?;
        Ok(StructuredTurn { turn, last_message: None, _output: PhantomData })
    }
}

/// A turn whose final assistant message is a `T`; see [`Client::start_structured_turn`].
#[derive(Debug)]
pub struct StructuredTurn<T> {
    turn: TurnHandle,
    last_message: Option<String>,
    _output: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned> StructuredTurn<T> {
    /// The turn's handle (to read its stream, interrupt or steer it).
    pub fn handle(&mut self) -> &mut TurnHandle {
        &mut self.turn
    }

    /// Reads the turn to `turn/completed` and decodes its final assistant message into `T`.
    ///
    /// Cancel safe: dropping the future drops the turn's handle, which stops its routing at
    /// once (the turn goes on at the server).
    pub async fn result(mut self) -> Result<T, ClientError> {
        while self.turn.completed().is_none() {
            match self.turn.next().await {
                Some(Event::Notification(n)) => {
                    if let ServerNotification::ItemCompleted { params, .. } = &*n {
                        if let ThreadItem::AgentMessage(message) = &params.item {
                            self.last_message = Some(message.text.clone());
                        }
                    }
                }
                Some(_) => {}
                None => return Err(self.turn.client().closed().unwrap_or(ClientError::Closed)),
            }
        }
        // The completed turn as JSON: its shape differs between releases (a union of statuses
        // in 0.60.1), its `items` and their `agentMessage` text do not.
        let turn = reencode(self.turn.completed().expect("checked above")).unwrap_or_default();
        let from_items = turn.get("items").and_then(Value::as_array).and_then(|items| {
            items.iter().rev().find(|i| i["type"] == "agentMessage").and_then(|i| i["text"].as_str()).map(str::to_owned)
        });
        let text = self.last_message.take().or(from_items).ok_or_else(|| {
            let message = format!(
                "turn {} ended ({}) without an assistant message to decode as `{}`",
                self.turn.turn_id(),
                turn.get("status").unwrap_or(&Value::Null),
                std::any::type_name::<T>()
            );
            ClientError::Decode(DecodeReport::decoded(None, None, message))
        })?;
        decode_as::<T>("the final assistant message", &text)
    }
}

#[cfg(feature = "experimental")]
pub use tools::{ToolHandler, Tools};

#[cfg(feature = "experimental")]
mod tools {
    use std::collections::HashMap;
    use std::future::Future;
    use std::sync::Arc;

    use codex_app_protocol::roundtrip::reencode;
    use codex_app_protocol::ServerRequest;
    use schemars::JsonSchema;
    use serde::de::DeserializeOwned;
    use serde::Serialize;
    use serde_json::value::RawValue;
    use serde_json::{json, Value};

    use super::{decode_as, schema_of};
    use crate::error::ClientError;
    use crate::handler::{BoxFuture, HandlerResult, ServerRequestHandler};

    type ToolFn = Arc<dyn Fn(Value) -> BoxFuture<Result<String, String>> + Send + Sync>;

    /// The request that calls a dynamic tool.
    const TOOL_CALL: &str = "item/tool/call";

    struct Tool {
        /// The tool's entry of `dynamicTools`, as JSON.
        spec: Value,
        call: ToolFn,
    }

    /// Dynamic tools declared from Rust argument types (experimental API).
    ///
    /// The tool specs and the `item/tool/call` requests and answers are handled as JSON, in the
    /// shape codex has used since dynamic tools came (0.100.0): the client builds against any
    /// release, and [`specs`](Self::specs) decodes the specs into the spec type of the release
    /// this crate was generated from.
    ///
    /// ```no_run
    /// # async fn run(client_builder: codex_app_client::ClientBuilder, command: codex_app_client::CodexCommand) -> Result<(), codex_app_client::ClientError> {
    /// use codex_app_client::structured::Tools;
    /// use codex_app_client::protocol::*;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Weather { city: String }
    ///
    /// let tools = Tools::new().tool("lookup_weather", "Current weather for a city.", |args: Weather| async move {
    ///     Ok::<_, String>(format!("sunny in {}", args.city))
    /// });
    /// let specs = tools.specs()?;
    /// let client = client_builder.handler(tools.handler(codex_app_client::DefaultHandler)).spawn(&command).await?;
    /// let params = ThreadStartParams { dynamic_tools: Some(specs), ..Default::default() };
    /// client.request::<request::ThreadStart>(params).await?;
    /// # Ok(()) }
    /// ```
    #[derive(Default)]
    pub struct Tools {
        tools: HashMap<String, Tool>,
    }

    impl std::fmt::Debug for Tools {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_list().entries(self.tools.keys()).finish()
        }
    }

    impl Tools {
        /// No tools yet.
        pub fn new() -> Self {
            Self::default()
        }

        /// Declares the tool `name`, whose arguments are an `A` (its `inputSchema` is the
        /// JSON Schema of `A`). `call` gets the decoded arguments; what it returns (a string
        /// as it is, anything else as JSON) is the tool's output, `Err` a failed call.
        /// Arguments that do not fit `A` make a failed call whose text names the type and the
        /// serde path, so the model sees what was wrong.
        pub fn tool<A, F, Fut, O>(mut self, name: &str, description: &str, call: F) -> Self
        where
            A: JsonSchema + DeserializeOwned + Send + 'static,
            F: Fn(A) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = Result<O, String>> + Send + 'static,
            O: Serialize,
        {
            let call = Arc::new(call);
            let tool_name = name.to_owned();
            let erased: ToolFn = Arc::new(move |arguments: Value| {
                let call = call.clone();
                let tool_name = tool_name.clone();
                Box::pin(async move {
                    let text = arguments.to_string();
                    let args =
                        decode_as::<A>(&format!("the arguments of `{tool_name}`"), &text).map_err(|e| e.to_string())?;
                    let output = call(args).await?;
                    let value = reencode(&output).map_err(|e| format!("the tool's output does not encode: {e}"))?;
                    Ok(match value {
                        Value::String(s) => s,
                        other => other.to_string(),
                    })
                })
            });
            // `type` tags the spec union of recent releases; a release whose spec is a plain
            // struct skips it.
            let spec =
                json!({"type": "function", "name": name, "description": description, "inputSchema": schema_of::<A>()});
            self.tools.insert(name.to_owned(), Tool { spec, call: erased });
            self
        }

        /// The `dynamicTools` of `thread/start`, sorted by name, as the spec type `S` of the
        /// release this crate was generated from (`DynamicToolSpec`; inferred from where they
        /// go). Fails with [`ClientError::Decode`] when that type cannot hold a function tool.
        pub fn specs<S: DeserializeOwned>(&self) -> Result<Vec<S>, ClientError> {
            let mut names: Vec<&String> = self.tools.keys().collect();
            names.sort();
            names
                .into_iter()
                .map(|name| decode_as::<S>(&format!("the spec of tool `{name}`"), &self.tools[name].spec.to_string()))
                .collect()
        }

        /// A handler that answers `item/tool/call` for these tools and passes everything else
        /// (and calls of other tools) to `inner`.
        pub fn handler<H: ServerRequestHandler>(self, inner: H) -> ToolHandler<H> {
            ToolHandler { tools: Arc::new(self), inner }
        }

        /// Runs the tool an `item/tool/call` request names, if it is one of these; the answer
        /// as JSON.
        async fn answer(&self, request: &ServerRequest) -> Option<HandlerResult<Box<RawValue>>> {
            if request.method() != TOOL_CALL {
                return None;
            }
            let mut message = reencode(request).ok()?;
            let params = message.get_mut("params")?;
            let tool = self.tools.get(params.get("tool")?.as_str()?)?;
            let (text, success) = match (tool.call)(params["arguments"].take()).await {
                Ok(output) => (output, true),
                Err(error) => (error, false),
            };
            let answer = json!({"contentItems": [{"type": "inputText", "text": text}], "success": success});
            Some(Ok(serde_json::value::to_raw_value(&answer).expect("JSON values encode")))
        }
    }

    /// A [`ServerRequestHandler`] with typed dynamic tools; see [`Tools::handler`].
    #[derive(Debug)]
    pub struct ToolHandler<H> {
        tools: Arc<Tools>,
        inner: H,
    }

    impl<H: ServerRequestHandler> ServerRequestHandler for ToolHandler<H> {
        /// `item/tool/call` of one of these tools is answered here; every other request (and
        /// calls of other tools) goes to the inner handler.
        async fn handle(&self, request: ServerRequest) -> HandlerResult<Box<RawValue>> {
            match self.tools.answer(&request).await {
                Some(answer) => answer,
                None => self.inner.handle(request).await,
            }
        }
    }
}
