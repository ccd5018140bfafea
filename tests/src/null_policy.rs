//! The exception of the null policy: members typed `Option<Option<T>>`.
//!
//! The protocol crate documents one rule for comparing a message with its re-encoding: an
//! object member whose value is `null` equals an absent member, except where the type is
//! `Option<Option<T>>` (there `null` means "clear" and absent means "leave unchanged").
//!
//! Rust has no reflection, so the list of those members is read from the generated source
//! itself (`protocol/src/generated/types.rs`, embedded at compile time): every
//! `pub field: Option<Option<...>>` with its struct and wire name. Reading the declared type
//! (not the `deserialize_with` attribute) is deliberate: a member declared `Option<Option<T>>`
//! whose decoder lost the distinction is exactly what the check must catch.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

const GENERATED_TYPES: &str = include_str!("../../protocol/src/generated/types.rs");

/// `Option<Option<T>>` members: wire name -> the structs that have such a member.
pub struct DoubleOptions {
    by_member: HashMap<String, HashSet<String>>,
}

impl DoubleOptions {
    /// The members of the protocol crate this crate was built with.
    pub fn get() -> &'static DoubleOptions {
        static CELL: OnceLock<DoubleOptions> = OnceLock::new();
        CELL.get_or_init(|| DoubleOptions::parse(GENERATED_TYPES))
    }

    /// Reads `pub struct` blocks of generated Rust source.
    pub fn parse(source: &str) -> DoubleOptions {
        let mut by_member: HashMap<String, HashSet<String>> = HashMap::new();
        let mut item_attrs: Vec<&str> = Vec::new();
        let mut field_attrs: Vec<&str> = Vec::new();
        // (struct name, camelCase members)
        let mut current: Option<(&str, bool)> = None;
        for line in source.lines() {
            if current.is_none() {
                if let Some(rest) = line.strip_prefix("pub struct ") {
                    let name_end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
                    let camel = item_attrs.iter().any(|a| a.contains("rename_all = \"camelCase\""));
                    if rest[name_end..].trim_start().starts_with('{') {
                        current = Some((&rest[..name_end], camel));
                    }
                    item_attrs.clear();
                    field_attrs.clear();
                } else if line.starts_with("#[") {
                    item_attrs.push(line);
                } else if !line.starts_with("///") && !line.trim().is_empty() {
                    item_attrs.clear();
                }
                continue;
            }
            let Some((name, camel)) = current else { continue };
            if line.starts_with('}') {
                current = None;
                continue;
            }
            let trimmed = line.trim_start();
            let Some(field) = trimmed.strip_prefix("pub ") else {
                if !trimmed.starts_with("///") {
                    field_attrs.push(trimmed);
                }
                continue;
            };
            let Some((rust_name, ty)) = field.split_once(':') else {
                field_attrs.clear();
                continue;
            };
            if ty.trim_start().starts_with("Option<Option<") {
                let renamed = field_attrs.iter().find_map(|a| {
                    let start = a.find("rename = \"")? + "rename = \"".len();
                    let end = a[start..].find('"')?;
                    Some(a[start..start + end].to_owned())
                });
                let rust_name = rust_name.trim();
                let rust_name = rust_name.strip_prefix("r#").unwrap_or(rust_name);
                let wire = renamed.unwrap_or_else(|| if camel { camel_case(rust_name) } else { rust_name.to_owned() });
                by_member.entry(wire).or_default().insert(name.to_owned());
            }
            field_attrs.clear();
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

/// serde's `rename_all = "camelCase"` of a snake_case field name.
fn camel_case(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
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
    }

    #[test]
    fn parses_renames_and_plain_structs() {
        let src = r#"
#[derive(Debug)]
#[serde(rename_all = "camelCase")]
pub struct A {
    /// doc `pub x: Option<Option<u8>>`
    #[serde(
        default,
        deserialize_with = "codec::double_option",
    )]
    pub some_field: Option<Option<u8>>,
    #[serde(rename = "_meta")]
    pub meta: Option<Option<Value>>,
    pub plain: Option<u8>,
}
#[derive(Debug)]
pub struct B {
    pub snake_case: Option<Option<u8>>,
}
pub struct C {}
"#;
        let d = DoubleOptions::parse(src);
        assert!(d.contains("A", "someField"));
        assert!(d.contains("A", "_meta"));
        assert!(!d.contains("A", "plain"));
        assert!(d.contains("B", "snake_case"));
        assert_eq!(d.len(), 3);
        assert!(d.has_member("someField") && !d.has_member("plain"));
    }
}
