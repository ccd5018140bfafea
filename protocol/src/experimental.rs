//! The runtime side of the experimental gate.
//!
//! The server rejects experimental methods and members unless `initialize` sent
//! `capabilities.experimentalApi: true`, with error `-32600` and the message
//! `<descriptor> requires experimentalApi capability`. [`ExperimentalApi`] tells a client
//! before it sends: the descriptor of the first experimental surface a value uses, worded as
//! the server words it (`mock/experimentalMethod`, `thread/start.dynamicTools`).

/// Implemented for `ClientRequest` and every client request params type.
pub trait ExperimentalApi {
    /// The server's descriptor of the first experimental method or member this value uses
    /// (a member counts when it is present and not `null`), or `None` for a stable value.
    fn experimental_reason(&self) -> Option<&'static str>;
}

/// The message the server answers with when `reason` is used without the capability.
pub fn experimental_error_message(reason: &str) -> String {
    format!("{reason} requires experimentalApi capability")
}
