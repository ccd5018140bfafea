//! The exception of the null policy: members typed `Option<Option<T>>`.
//!
//! The protocol crate documents one rule for comparing a message with its re-encoding: an
//! object member whose value is `null` equals an absent member, except where the type is
//! `Option<Option<T>>` (there `null` means "clear" and absent means "leave unchanged").
//!
//! The list of those members is generated with the crate (`NULL_MEANINGFUL_MEMBERS`).

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// `Option<Option<T>>` members: wire name -> the structs that have such a member.
pub struct DoubleOptions {
    by_member: HashMap<String, HashSet<String>>,
}

impl DoubleOptions {
    /// The members of the protocol crate this crate was built with.
    pub fn get() -> &'static DoubleOptions {
        static CELL: OnceLock<DoubleOptions> = OnceLock::new();
        CELL.get_or_init(|| DoubleOptions::from_pairs(codex_app_protocol::NULL_MEANINGFUL_MEMBERS))
    }

    /// From `(type, wire member)` pairs.
    pub fn from_pairs(pairs: &[(&str, &str)]) -> DoubleOptions {
        let mut by_member: HashMap<String, HashSet<String>> = HashMap::new();
        for (strukt, member) in pairs {
            by_member.entry((*member).to_owned()).or_default().insert((*strukt).to_owned());
        }
        DoubleOptions { by_member }
    }

    /// Whether some struct has an `Option<Option<T>>` member with this wire name (a cheap
    /// first test before the struct is known).
    pub fn has_member(&self, member: &str) -> bool {
        self.by_member.contains_key(member)
    }

    /// Whether `strukt.member` is `Option<Option<T>>`.
    pub fn contains(&self, strukt: &str, member: &str) -> bool {
        self.by_member.get(member).is_some_and(|s| s.contains(strukt))
    }

    pub fn len(&self) -> usize {
        self.by_member.values().map(HashSet::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_generated_crate() {
        let d = DoubleOptions::get();
        assert!(d.contains("ThreadMetadataGitInfoUpdateParams", "branch"), "the generated crate documents `branch` as Option<Option<String>>");
        assert!(d.contains("ThreadMetadataGitInfoUpdateParams", "originUrl"));
        assert!(!d.contains("ThreadMetadataGitInfoUpdateParams", "origin_url"));
        assert!(!d.contains("Thread", "branch"));
        assert!(d.len() >= 5, "{}", d.len());
        assert!(d.has_member("branch") && !d.has_member("model"));
    }
}
