//! Method marker traits, in the style of `lsp-types`: each method is an uninhabited type
//! (`request::ThreadStart`) that names its wire method, its params and (for requests) its
//! response type.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// A request method (client to server, or server to client).
pub trait Request {
    /// The method name on the wire (`thread/start`).
    const METHOD: &'static str;
    /// `()` when the method takes no params.
    type Params: Serialize + DeserializeOwned;
    type Response: Serialize + DeserializeOwned;
}

/// A notification method.
pub trait Notification {
    const METHOD: &'static str;
    /// `()` when the method takes no params.
    type Params: Serialize + DeserializeOwned;
}

/// Called with the marker type of a request method (see `ClientRequest::visit_method`).
pub trait RequestVisitor {
    type Output;
    fn visit<R: Request>(self) -> Self::Output;
    /// The method is not known to this version of the crate.
    fn unrecognized(self) -> Self::Output;
}

/// Called with the marker type of a notification method (see `ServerNotification::visit_method`).
pub trait NotificationVisitor {
    type Output;
    fn visit<N: Notification>(self) -> Self::Output;
    /// The method is not known to this version of the crate.
    fn unrecognized(self) -> Self::Output;
}
