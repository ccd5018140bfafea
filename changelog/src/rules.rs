//! The verdict of each kind of change for a client that sends and one that receives the changed
//! value: the table in the module docs of [`super`], as constants.

/// `(breaking, why)` for the sending and the receiving role.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rule {
    pub(super) sends: (bool, &'static str),
    pub(super) receives: (bool, &'static str),
    /// Not breaking on the wire, but code that uses the item must change ("Rust API only").
    pub(super) rust_api: bool,
}

pub(super) const BREAKS: bool = true;
pub(super) const OK: bool = false;

pub(super) const fn rule(sends: (bool, &'static str), receives: (bool, &'static str)) -> Rule {
    Rule { sends, receives, rust_api: false }
}

pub(super) const fn rust_api_rule(why: &'static str) -> Rule {
    Rule { sends: (OK, why), receives: (OK, why), rust_api: true }
}

pub(super) const METHOD_ADDED: Rule = rule((OK, ""), (OK, ""));
pub(super) const REQUEST_ADDED: Rule =
    rule((OK, ""), (OK, "the server may send it: answer it (with an error if unsupported)"));
pub(super) const NOTIFICATION_ADDED: Rule = rule((OK, ""), (OK, ""));
pub(super) const METHOD_REMOVED: Rule =
    rule((BREAKS, "the server no longer accepts it"), (BREAKS, "the server no longer sends it"));
pub(super) const TO_STABLE: Rule = rule((OK, "no experimental opt-in needed"), (OK, "no experimental opt-in needed"));
pub(super) const TO_EXPERIMENTAL: Rule = rule(
    (BREAKS, "needs the `experimentalApi` opt-in now"),
    (BREAKS, "only sent to clients with the `experimentalApi` opt-in now"),
);
pub(super) const TYPE_ADDED: Rule = rule((OK, ""), (OK, ""));
pub(super) const TYPE_REMOVED: Rule =
    rule((OK, "code that names it must change"), (OK, "code that names it must change"));
pub(super) const RENAMED: Rule = rule((OK, "same on the wire"), (OK, "same on the wire"));
pub(super) const TYPE_CHANGED: Rule =
    rule((BREAKS, "the server expects a different type"), (BREAKS, "the server sends a different type"));
pub(super) const FIELD_ADDED_REQUIRED: Rule = rule(
    (BREAKS, "the server requires it: set it"),
    (BREAKS, "an older codex does not send it: its messages no longer decode"),
);
pub(super) const FIELD_ADDED_REQUIRED_NULLABLE: Rule =
    rule((OK, "always written: `None` is sent as `null`"), (OK, "`None` when an older codex leaves it out"));
pub(super) const FIELD_ADDED_OPTIONAL: Rule = rule((OK, ""), (OK, ""));
pub(super) const FIELD_REMOVED: Rule =
    rule((BREAKS, "the server no longer reads it"), (BREAKS, "the server no longer sends it"));
pub(super) const FIELD_RENAMED: Rule =
    rule((BREAKS, "the server reads the new name"), (BREAKS, "the server sends the new name"));
pub(super) const BECAME_REQUIRED: Rule = rule(
    (BREAKS, "the server requires it now: set it"),
    (BREAKS, "an older codex may leave it out: its messages no longer decode"),
);
pub(super) const BECAME_OPTIONAL: Rule =
    rule((OK, "may be left out now"), (BREAKS, "may be absent now: handle `None`"));
pub(super) const BECAME_NULLABLE: Rule = rule((OK, "may be `null` now"), (BREAKS, "may be `null` now: handle `None`"));
/// `Option<T>` <-> `Option<Option<T>>`: the same on the wire, another Rust type.
pub(super) const NULL_DISTINCTION_CHANGED: Rule =
    rust_api_rule("same on the wire, but the field changes between `Option<T>` and `Option<Option<T>>`: code that reads or sets it must change");
pub(super) const PRESENCE_OTHER: Rule = rule((OK, ""), (OK, ""));
pub(super) const VALUE_ADDED: Rule = rule((OK, ""), (OK, "new case to handle (it decoded as `Unrecognized` before)"));
pub(super) const UNTAGGED_ARM_ADDED: Rule = rule((OK, ""), (OK, "new case to handle (it failed to decode before)"));
pub(super) const VALUE_RENAMED: Rule =
    rule((BREAKS, "the server expects the new spelling"), (BREAKS, "the server sends the new spelling"));
pub(super) const VALUE_REMOVED: Rule = rule(
    (BREAKS, "the server no longer accepts it"),
    (BREAKS, "the server no longer sends it: code that matches it must change"),
);
pub(super) const EXTRA_ADDED: Rule = rule((OK, ""), (OK, "undeclared members are kept now"));
