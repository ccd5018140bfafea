//! JSON paths as the drift report prints them: `params.thread.turns[0].items[2].status`.
//!
//! Members are joined with `.`, array elements are `[i]`; a member name that is not a plain
//! word (letters, digits, `_`, `$`, `-`) is written as `["..."]` with JSON escapes. Every
//! source of paths (the round trip, the `Unrecognized` walk) builds them with
//! [`push_key`] and [`push_index`], the protocol crate's ([`codex_app_protocol::roundtrip`],
//! whose differences carry such paths), so equal locations give equal strings.

pub use codex_app_protocol::roundtrip::{push_index, push_key};

/// Where the member at `path` lives and its name: `("params.thread", "id")`. `None` for a
/// path that does not end in a plain member.
pub fn split_last(path: &str) -> Option<(&str, &str)> {
    if path.ends_with(']') {
        return None;
    }
    match path.rfind(['.', ']']) {
        Some(i) if path.as_bytes()[i] == b'.' => Some((&path[..i], &path[i + 1..])),
        Some(i) => Some((&path[..=i], &path[i + 1..])),
        None => Some(("", path)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_paths() {
        let mut p = String::new();
        push_key(&mut p, "params");
        push_key(&mut p, "turns");
        push_index(&mut p, 0);
        push_key(&mut p, "items");
        assert_eq!(p, "params.turns[0].items");
        let join = |path: &str, key: &str| {
            let mut out = path.to_owned();
            push_key(&mut out, key);
            out
        };
        assert_eq!(join("", "a b"), r#"["a b"]"#);
        assert_eq!(join("x", "01a2-b"), "x.01a2-b");
        assert_eq!(join("x", "a.b"), r#"x["a.b"]"#);
    }

    #[test]
    fn splits_paths() {
        assert_eq!(split_last("params.thread.id"), Some(("params.thread", "id")));
        assert_eq!(split_last("id"), Some(("", "id")));
        assert_eq!(split_last("a[0].b"), Some(("a[0]", "b")));
        assert_eq!(split_last("a[0]"), None);
    }
}
