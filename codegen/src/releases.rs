//! The schema bundles of every codex release the range can reach, kept in the repository:
//! `vendor-schemas/releases/VERSION.json`, one file per release but the vendored one when it
//! is the newest.
//!
//! A file holds what its release's bundles differ by from those of the next newer release
//! (its `base`): the JSON values to set and the members to remove, by JSON pointer, down to the
//! member that changed (`/definitions/v2/ThreadListParams/properties/isPinned`; an array is set
//! whole). The chain's anchor is the newest release: the vendored set
//! (`vendor-schemas/{stable,experimental}/`, the bytes codex printed) when it is the newest,
//! else a file written whole (`"base": null`), so that vendoring an older release (a regen from
//! it) never takes the anchor away. A release is read back by applying the files from the
//! anchor down to it, so an upgrade adds one file (the release it replaces, against the new
//! one) and leaves the others as they are; [`write()`] gives the same files from the same
//! releases whatever was vendored before. A release whose binary does not run (some publish no
//! Linux binary) has a file that says why, and no bundles.
//!
//! What is read back is each bundle as a JSON value: the same value codex printed (the
//! generator reads values, never bytes; [`read`] checks each file's `sha256` of the value it
//! gives, as compact JSON). Codex prints a bundle as that value with sorted members, indented
//! by two spaces ([`printed`]), so a release of the archive can be vendored again as the bytes
//! codex printed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::history::{version_cmp, History};
use crate::ir::Ir;
use crate::vendor::sha256_hex;
use crate::{build_ir_with, SchemaSet, Settings};

/// Where the files are, relative to the workspace root.
pub const RELEASES_DIR: &str = "vendor-schemas/releases";

/// How deep a difference is looked for in nested objects (deeper than any bundle nests them; a
/// bound, so that a hostile file cannot recurse without end).
const DEPTH: usize = 16;

/// One release of the archive.
#[derive(Debug, Clone, PartialEq)]
pub enum Release {
    /// Its bundles, as they read back.
    Bundles(SchemaSet),
    /// Why it has none.
    Skipped(String),
}

/// What a bundle differs by from its base: values set and members removed, by pointer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Delta {
    pub set: BTreeMap<String, Value>,
    pub remove: Vec<String>,
}

/// The difference that turns `base` into `target`.
pub fn delta(base: &Value, target: &Value) -> Delta {
    fn walk(base: &Value, target: &Value, pointer: &mut String, depth: usize, out: &mut Delta) {
        match (base, target) {
            (Value::Object(b), Value::Object(t)) if depth < DEPTH => {
                for key in b.keys().filter(|k| !t.contains_key(*k)) {
                    out.remove.push(format!("{pointer}/{}", escape(key)));
                }
                for (key, value) in t {
                    let len = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&escape(key));
                    match b.get(key) {
                        Some(old) if old == value => {}
                        Some(old) => walk(old, value, pointer, depth + 1, out),
                        None => {
                            out.set.insert(pointer.clone(), value.clone());
                        }
                    }
                    pointer.truncate(len);
                }
            }
            _ if base == target => {}
            _ => {
                out.set.insert(pointer.clone(), target.clone());
            }
        }
    }
    let mut out = Delta::default();
    walk(base, target, &mut String::new(), 0, &mut out);
    out.remove.sort();
    out
}

/// `base` with `delta` applied. An error names a pointer whose parent is not an object.
pub fn apply(base: &Value, delta: &Delta) -> Result<Value, String> {
    let mut value = base.clone();
    apply_to(&mut value, delta.clone())?;
    Ok(value)
}

/// [`apply`] in place: `value` becomes the release made from it, the delta's values moved into
/// it (not copied, then dropped with the delta).
fn apply_to(value: &mut Value, delta: Delta) -> Result<(), String> {
    for pointer in &delta.remove {
        let (parent, key) = split(pointer)?;
        match value.pointer_mut(parent).and_then(Value::as_object_mut) {
            Some(map) => {
                map.remove(&key);
            }
            None => return Err(format!("`{pointer}`: nothing to remove there")),
        }
    }
    for (pointer, v) in delta.set {
        if pointer.is_empty() {
            *value = v;
            continue;
        }
        let (parent, key) = split(&pointer)?;
        let mut at = &mut *value;
        for segment in parent.split('/').skip(1) {
            let map = at.as_object_mut().ok_or_else(|| format!("`{pointer}`: `{segment}` is not in an object"))?;
            at = map.entry(unescape(segment)).or_insert_with(|| Value::Object(Map::new()));
        }
        at.as_object_mut().ok_or_else(|| format!("`{pointer}`: its parent is not an object"))?.insert(key, v);
    }
    Ok(())
}

fn split(pointer: &str) -> Result<(&str, String), String> {
    let (parent, key) = pointer.rsplit_once('/').ok_or_else(|| format!("`{pointer}` is not a JSON pointer"))?;
    Ok((parent, unescape(key)))
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// One file of the archive, as written.
#[derive(Debug, Clone, PartialEq)]
struct File {
    version: String,
    body: Body,
}

#[derive(Debug, Clone, PartialEq)]
enum Body {
    Skipped(String),
    Bundles {
        /// The next newer release with bundles; `None`: written whole (the anchor).
        base: Option<String>,
        stable: Delta,
        /// `None`: the release printed no experimental bundle.
        experimental: Option<Delta>,
        /// The sha256 of each bundle read back, as compact JSON.
        sha256: BTreeMap<String, String>,
    },
}

impl File {
    /// One line per pointer, sorted, so a review reads what changed between two releases.
    fn to_text(&self) -> String {
        fn line<T: serde::Serialize + ?Sized>(v: &T) -> String {
            serde_json::to_string(v).expect("JSON values serialize")
        }
        fn delta(out: &mut String, name: &str, d: &Delta, last: bool) {
            out.push_str(&format!("  {}: {{\n    \"remove\": {},\n    \"set\": {{", line(name), line(&d.remove)));
            // A value through its `Display` (compact), which serde_json compiles optimized.
            let entries: Vec<String> = d.set.iter().map(|(k, v)| format!("\n      {}: {v}", line(k))).collect();
            out.push_str(&entries.join(","));
            out.push_str(if d.set.is_empty() { "}\n  }" } else { "\n    }\n  }" });
            out.push_str(if last { "\n" } else { ",\n" });
        }
        let mut out = format!("{{\n  \"version\": {},\n", line(&self.version));
        match &self.body {
            Body::Skipped(why) => out.push_str(&format!("  \"skipped\": {}\n", line(why))),
            Body::Bundles { base, stable, experimental, sha256 } => {
                out.push_str(&format!("  \"base\": {},\n  \"sha256\": {},\n", line(base), line(sha256)));
                match experimental {
                    Some(e) => {
                        delta(&mut out, "stable", stable, false);
                        delta(&mut out, "experimental", e, true);
                    }
                    None => {
                        delta(&mut out, "stable", stable, false);
                        out.push_str("  \"experimental\": null\n");
                    }
                }
            }
        }
        out.push_str("}\n");
        out
    }

    fn from_text(text: &str) -> Result<File, String> {
        let value: Value = text.parse().map_err(|e: serde_json::Error| e.to_string())?;
        // Taken apart by value: the deltas' values are moved out, not copied.
        let Value::Object(mut file) = value else { return Err("no `version`".to_owned()) };
        let mut string = |key: &str| match file.remove(key) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        };
        let version = string("version").ok_or("no `version`")?;
        if let Some(why) = string("skipped") {
            return Ok(File { version, body: Body::Skipped(why) });
        }
        let delta = |v: Value| -> Result<Delta, String> {
            let Value::Object(mut v) = v else { return Err("a delta without `remove`".to_owned()) };
            let Some(Value::Array(remove)) = v.remove("remove") else {
                return Err("a delta without `remove`".to_owned());
            };
            let Some(Value::Object(set)) = v.remove("set") else { return Err("a delta without `set`".to_owned()) };
            Ok(Delta {
                remove: remove
                    .into_iter()
                    .map(|r| match r {
                        Value::String(pointer) => Ok(pointer),
                        _ => Err("a pointer is not a string"),
                    })
                    .collect::<Result<_, _>>()?,
                set: set.into_iter().collect(),
            })
        };
        let base = match file.remove("base") {
            Some(Value::Null) => None,
            Some(Value::String(base)) => Some(base),
            _ => return Err("neither `base` nor `skipped`".to_owned()),
        };
        let stable = delta(file.remove("stable").ok_or("no `stable`")?)?;
        let experimental = match file.remove("experimental") {
            None | Some(Value::Null) => None,
            Some(v) => Some(delta(v)?),
        };
        let sha256 = serde_json::from_value(file.remove("sha256").unwrap_or_default()).map_err(|e| e.to_string())?;
        Ok(File { version, body: Body::Bundles { base, stable, experimental, sha256 } })
    }
}

/// The paths of the archive's files (`*.json` in `dir`; none when `dir` does not exist).
fn json_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    };
    let mut out = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().and_then(|e| e.to_str()) == Some("json") {
            out.push(path);
        }
    }
    Ok(out)
}

fn stem(path: &Path) -> &str {
    path.file_stem().and_then(|s| s.to_str()).unwrap_or_default()
}

/// The archive's files, by version: `dir` and what each file holds.
fn read_files(dir: &Path) -> Result<BTreeMap<String, (PathBuf, File)>, String> {
    let mut out = BTreeMap::new();
    for path in json_files(dir)? {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file = File::from_text(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if stem(&path) != file.version {
            return Err(format!("{}: holds codex {}, not {}", path.display(), file.version, stem(&path)));
        }
        out.insert(file.version.clone(), (path, file));
    }
    Ok(out)
}

/// The versions the archive in `dir` holds, oldest first: the names of its files, which are not
/// read ([`read`] reports a file that does not hold the release it is named after).
pub fn versions(dir: &Path) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = json_files(dir)?.iter().map(|path| stem(path).to_owned()).collect();
    out.sort_by(|a, b| version_cmp(a, b));
    Ok(out)
}

/// Every release of the archive in `dir` from `from` on (oldest first), read back with
/// `vendored` (the vendored set, which anchors the chain when it is the newest release), but
/// the vendored release itself. Every problem is reported at once: a file that does not read,
/// a base that is not in the archive, a bundle whose `sha256` is not what the file says, a file
/// of the vendored release that holds other bundles than the vendored set.
pub fn read(dir: &Path, vendored: &SchemaSet, from: &str) -> Result<Vec<(String, Release)>, String> {
    let mut files = read_files(dir)?;
    let mut bundles: BTreeMap<String, (Value, Option<Value>)> = BTreeMap::new();
    bundles.insert(vendored.codex_version.clone(), values(vendored)?);
    // How many releases each base is the base of: the base of one release (every base, in an
    // archive this crate wrote) is moved into it rather than copied.
    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    for (_, file) in files.values() {
        if let Body::Bundles { base: Some(base), .. } = &file.body {
            *uses.entry(base.clone()).or_default() += 1;
        }
    }
    let mut problems = Vec::new();
    let mut out = Vec::new();
    // Newest first: each base is read back before the releases made from it.
    let mut order: Vec<String> = files.keys().cloned().collect();
    order.sort_by(|a, b| version_cmp(b, a));
    for version in order {
        if version_cmp(&version, from).is_lt() {
            // Older than asked for: nothing asked for is made from it.
            break;
        }
        // Taken out: its deltas are moved into the release they give.
        let (path, file) = files.remove(&version).expect("a version of the archive");
        let release = match file.body {
            Body::Skipped(why) => Release::Skipped(why),
            Body::Bundles { base, stable, experimental, sha256 } => {
                let (mut s, base_experimental) = match base {
                    None => (Value::Object(Map::new()), None),
                    Some(base) => match take_base(&mut bundles, &mut uses, &base) {
                        Some(pair) => pair,
                        None => {
                            problems.push(format!("{}: its base, codex {base}, is not in the archive", path.display()));
                            continue;
                        }
                    },
                };
                let read = (|| -> Result<Option<Value>, String> {
                    apply_to(&mut s, stable)?;
                    let Some(d) = experimental else { return Ok(None) };
                    let mut e = base_experimental.unwrap_or_else(|| Value::Object(Map::new()));
                    apply_to(&mut e, d)?;
                    Ok(Some(e))
                })();
                let e = match read {
                    Ok(e) => e,
                    Err(why) => {
                        problems.push(format!("{}: {why}", path.display()));
                        continue;
                    }
                };
                let set = SchemaSet {
                    stable: compact(&s),
                    experimental: e.as_ref().map(compact),
                    codex_version: version.clone(),
                };
                if sums(&set) != sha256 {
                    problems.push(format!(
                        "{}: the bundles it gives are not the ones it was written from (sha256)",
                        path.display()
                    ));
                    continue;
                }
                if version == vendored.codex_version {
                    if !same_bundles(&set, vendored) {
                        problems.push(format!(
                            "{}: holds other bundles for codex {version} than vendor-schemas/ does",
                            path.display()
                        ));
                    }
                    continue;
                }
                bundles.insert(version.clone(), (s, e));
                Release::Bundles(set)
            }
        };
        if version != vendored.codex_version {
            out.push((version, release));
        }
    }
    if !problems.is_empty() {
        return Err(format!("{RELEASES_DIR}: {} problem(s):\n  {}", problems.len(), problems.join("\n  ")));
    }
    out.sort_by(|a, b| version_cmp(&a.0, &b.0));
    Ok(out)
}

/// The bundles of `base` for the next release made from it: moved out of `bundles` when it is
/// the last one `uses` counts, else copied.
fn take_base(
    bundles: &mut BTreeMap<String, (Value, Option<Value>)>,
    uses: &mut BTreeMap<String, usize>,
    base: &str,
) -> Option<(Value, Option<Value>)> {
    match uses.get_mut(base) {
        Some(left) if *left > 1 => {
            *left -= 1;
            bundles.get(base).cloned()
        }
        _ => bundles.remove(base),
    }
}

/// A JSON value as compact text, which is what the archive's sums are of.
///
/// The archive's JSON is read with `Value`'s `FromStr` and written with its `Display`
/// (`{:#}` pretty), not `serde_json::from_str`/`to_string`: those are generic, so they would
/// be compiled in this crate, unoptimized in the dev profile that `cargo xtask regen` builds,
/// while `Value`'s own impls are compiled in serde_json, which that profile optimizes. Through
/// `format!`, not `ToString`: `format!` writes into its `String` from std's compiled code,
/// where `to_string` would have every write of the serializer go through a copy of `String`'s
/// `fmt::Write` compiled in this crate, unoptimized.
fn compact(value: &Value) -> String {
    format!("{value}")
}

fn sums(set: &SchemaSet) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    out.insert("stable".to_owned(), sha256_hex(set.stable.as_bytes()));
    if let Some(e) = &set.experimental {
        out.insert("experimental".to_owned(), sha256_hex(e.as_bytes()));
    }
    out
}

/// Whether two sets hold the same bundles as JSON values (whatever their text's layout).
pub fn same_bundles(a: &SchemaSet, b: &SchemaSet) -> bool {
    let values = |set: &SchemaSet| {
        let parse = |text: &str| text.parse::<Value>().ok();
        (parse(&set.stable), set.experimental.as_deref().map(parse))
    };
    (a.stable == b.stable && a.experimental == b.experimental) || {
        let (x, y) = (values(a), values(b));
        x.0.is_some() && x == y
    }
}

/// `set` as codex prints its bundles: the value of each with its members sorted, indented by
/// two spaces, without a final newline. What the archive reads back is vendored as this.
pub fn printed(set: &SchemaSet) -> Result<SchemaSet, String> {
    let print = |text: &str| -> Result<String, String> {
        let value: Value = text.parse().map_err(|e| format!("codex {}: {e}", set.codex_version))?;
        Ok(format!("{value:#}"))
    };
    Ok(SchemaSet {
        stable: print(&set.stable)?,
        experimental: set.experimental.as_deref().map(print).transpose()?,
        codex_version: set.codex_version.clone(),
    })
}

/// The files of an archive that holds `releases` (any order; each bundle as JSON text) and
/// `vendored`, the vendored set: path (relative to the workspace root) and text. The newest
/// release anchors the chain: the vendored set when it is the newest (it has no file), else
/// that release's file, written whole. Every other release, the vendored one included, is
/// written against the next newer one that has bundles. A release of `releases` with the
/// vendored release's version is the vendored set.
///
/// `dir` holds the archive as it is (if any): a file of it whose release has the same bundles
/// and the same base as before, that base's bundles the same too, gives its delta again as it
/// is, so only the files around a release that came, went or changed are worked out anew (what
/// a release's delta is depends on those bundles alone). Its bundles are known to be the same
/// when their text, as given, has the file's sums: `read` gives each release as the compact text
/// those sums are of.
pub fn write(
    dir: &Path,
    releases: &[(String, Release)],
    vendored: &SchemaSet,
) -> Result<Vec<(PathBuf, String)>, String> {
    // The archive as it is; one that does not read is written anew.
    let mut before = read_files(dir).unwrap_or_default();
    let mut sorted: Vec<(&String, &Release)> =
        releases.iter().filter(|(v, _)| *v != vendored.codex_version).map(|(v, r)| (v, r)).collect();
    let vendored_release = Release::Bundles(vendored.clone());
    sorted.push((&vendored.codex_version, &vendored_release));
    sorted.sort_by(|a, b| version_cmp(b.0, a.0));
    let newest_is_vendored =
        sorted.iter().find(|(_, r)| matches!(r, Release::Bundles(_))).map(|(v, _)| *v) == Some(&vendored.codex_version);
    // The base of the next release down (`None`: the anchor is yet to come).
    let mut base: Option<Base> = None;
    let mut out = Vec::new();
    for (version, release) in sorted {
        let body = match release {
            Release::Skipped(why) => Body::Skipped(why.clone()),
            Release::Bundles(set) => {
                let old = before.remove(version.as_str()).map(|(_, file)| file.body);
                let old_sums = match &old {
                    Some(Body::Bundles { sha256, .. }) => Some(sha256),
                    _ => None,
                };
                // The sums of the text as given when they are the file's (the text is the
                // compact one they are of: what `read` gives), else of the text read and made
                // compact.
                let (sha256, mut read) = match old_sums {
                    Some(old) if *old == sums(set) => (old.clone(), None),
                    _ => {
                        let (stable, experimental) = values(set)?;
                        let compacted = SchemaSet {
                            stable: compact(&stable),
                            experimental: experimental.as_ref().map(compact),
                            codex_version: version.clone(),
                        };
                        (sums(&compacted), Some((stable, experimental)))
                    }
                };
                let unchanged = old_sums == Some(&sha256);
                let base_version = base.as_ref().map(|b| b.version.clone());
                let keep = unchanged && base.as_ref().is_none_or(|b| b.unchanged);
                let body = match old {
                    Some(Body::Bundles { base: old_base, stable, experimental, .. })
                        if keep && old_base == base_version =>
                    {
                        Body::Bundles { base: old_base, stable, experimental, sha256 }
                    }
                    _ => {
                        let (stable, experimental) = match read.take() {
                            Some(read) => read,
                            None => values(set)?,
                        };
                        let empty = Value::Object(Map::new());
                        let (base_stable, base_experimental) = match &mut base {
                            Some(b) => b.values()?,
                            None => (&empty, None),
                        };
                        let body = Body::Bundles {
                            base: base_version,
                            stable: delta(base_stable, &stable),
                            experimental: experimental.as_ref().map(|e| delta(base_experimental.unwrap_or(&empty), e)),
                            sha256,
                        };
                        read = Some((stable, experimental));
                        body
                    }
                };
                base = Some(Base { version: version.clone(), set, read, unchanged });
                body
            }
        };
        if *version == vendored.codex_version && newest_is_vendored {
            continue; // the anchor, vendored as codex printed it
        }
        let file = File { version: version.clone(), body };
        out.push((Path::new(RELEASES_DIR).join(format!("{version}.json")), file.to_text()));
    }
    Ok(out)
}

/// The bundles of `set` as JSON values.
fn values(set: &SchemaSet) -> Result<(Value, Option<Value>), String> {
    let parse = |text: &str| text.parse::<Value>().map_err(|e| e.to_string());
    Ok((parse(&set.stable)?, set.experimental.as_deref().map(parse).transpose()?))
}

/// The release the next one down is written against, in [`write`].
struct Base<'a> {
    version: String,
    set: &'a SchemaSet,
    /// Its bundles as values, once read.
    read: Option<(Value, Option<Value>)>,
    /// Whether its bundles are the ones of its file in the archive as it was.
    unchanged: bool,
}

impl Base<'_> {
    fn values(&mut self) -> Result<(&Value, Option<&Value>), String> {
        if self.read.is_none() {
            self.read = Some(values(self.set)?);
        }
        let (stable, experimental) = self.read.as_ref().expect("read above");
        Ok((stable, experimental.as_ref()))
    }
}

/// The surface history of the range from `floor` to `newest` (the set the code is generated
/// from), from `releases` (what [`read`] gives, with any release not yet in the archive; those
/// outside the range are left out). Every release is lowered with `settings`, as many at a time
/// as the machine has cores; every problem of every release is reported at once.
pub fn history(
    releases: &[(String, Release)],
    newest: &SchemaSet,
    floor: &str,
    settings: &Settings,
) -> Result<History, String> {
    let mut releases: Vec<(String, Release)> = releases
        .iter()
        .filter(|(v, _)| version_cmp(v, floor).is_ge() && version_cmp(v, &newest.codex_version).is_lt())
        .cloned()
        .collect();
    releases.sort_by(|a, b| version_cmp(&a.0, &b.0));
    if version_cmp(floor, &newest.codex_version).is_lt() && !releases.iter().any(|(v, _)| v == floor) {
        return Err(format!(
            "the floor {floor} is not a release of {RELEASES_DIR}; \
             `cargo xtask history --from {floor}` adds the releases from it"
        ));
    }
    let sets: Vec<&SchemaSet> = releases
        .iter()
        .filter_map(|(_, r)| match r {
            Release::Bundles(set) => Some(set),
            Release::Skipped(_) => None,
        })
        .chain([newest])
        .collect();
    let mut irs = Vec::new();
    let mut problems = Vec::new();
    for (set, result) in sets.iter().zip(lower_all(&sets, settings)) {
        match result {
            Ok(ir) => irs.push((set.codex_version.clone(), ir)),
            Err(e) => problems.push(format!("codex {}: {e}", set.codex_version)),
        }
    }
    if !problems.is_empty() {
        return Err(format!("{} release(s) did not lower:\n  {}", problems.len(), problems.join("\n  ")));
    }
    let Some(((first, _), rest)) = irs.split_first() else { return Err("no release lowered".to_owned()) };
    let mut history = History::start(first);
    let mut prev = &irs[0].1;
    for (version, ir) in rest {
        history.extend(prev, ir, version);
        prev = ir;
    }
    for (version, release) in &releases {
        if let Release::Skipped(why) = release {
            history.skip(version, why);
        }
    }
    Ok(history)
}

/// Each set lowered, in order; a release that printed the same bundles as the one before it
/// (many patch releases do) is lowered once.
fn lower_all(all: &[&SchemaSet], settings: &Settings) -> Vec<Result<Ir, crate::Error>> {
    let same = |a: &SchemaSet, b: &SchemaSet| a.stable == b.stable && a.experimental == b.experimental;
    let mut sets: Vec<&SchemaSet> = Vec::new();
    let mut of: Vec<usize> = Vec::new();
    for set in all {
        if !sets.last().is_some_and(|last| same(last, set)) {
            sets.push(set);
        }
        of.push(sets.len() - 1);
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(sets.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Ir, crate::Error>>>> = Mutex::new(sets.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(set) = sets.get(i) else { return };
                let ir = build_ir_with(set, settings);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(ir);
            });
        }
    });
    let lowered: Vec<Result<Ir, crate::Error>> = results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every set is lowered by a thread of the scope"))
        .collect();
    of.into_iter().map(|i| lowered[i].clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_delta_applied_to_its_base_gives_the_target() {
        let base = json!({"definitions": {"A": {"type": "string"}, "v2": {"B": {"type": "object"}, "C": {"enum": ["x"]}}}, "title": "t"});
        let target = json!({"definitions": {"A": {"type": "integer"}, "v2": {"C": {"enum": ["x", "y"]}, "D/E": true}}, "oneOf": []});
        let d = delta(&base, &target);
        assert_eq!(d.remove, ["/definitions/v2/B", "/title"]);
        assert_eq!(
            d.set.keys().collect::<Vec<_>>(),
            ["/definitions/A/type", "/definitions/v2/C/enum", "/definitions/v2/D~1E", "/oneOf"]
        );
        assert_eq!(apply(&base, &d).unwrap(), target);
        assert_eq!(delta(&target, &target), Delta::default());
        assert!(apply(&json!({"a": 1}), &Delta { remove: vec!["/a/b".into()], set: BTreeMap::new() }).is_err());
    }

    #[test]
    fn an_archive_reads_back_what_was_written_and_says_what_is_wrong() {
        let set = |v: &str, s: Value, e: Option<Value>| SchemaSet {
            stable: s.to_string(),
            experimental: e.map(|e| e.to_string()),
            codex_version: v.into(),
        };
        let newest = set(
            "1.2.0",
            json!({"definitions": {"A": {}, "B": {}}}),
            Some(json!({"definitions": {"A": {}, "B": {}, "X": {}}})),
        );
        let releases = vec![
            (
                "1.0.0".to_owned(),
                Release::Bundles(set("1.0.0", json!({"definitions": {"A": {"type": "string"}}}), None)),
            ),
            ("1.1.0".to_owned(), Release::Skipped("no binary".into())),
            (
                "1.1.1".to_owned(),
                Release::Bundles(set(
                    "1.1.1",
                    json!({"definitions": {"A": {}}}),
                    Some(json!({"definitions": {"A": {}, "Y": {}}})),
                )),
            ),
        ];
        let dir = std::env::temp_dir().join(format!("codex-releases-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let files = write(&dir, &releases, &newest).unwrap();
        for (path, text) in &files {
            let path = dir.join(path.file_name().unwrap());
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let back = read(&dir, &newest, "1.0.0").unwrap();
        assert_eq!(back, releases);
        assert_eq!(read(&dir, &newest, "1.1.0").unwrap().len(), 2, "from a floor on");
        assert_eq!(versions(&dir).unwrap(), ["1.0.0", "1.1.0", "1.1.1"]);
        // A file edited by hand is named, as is one whose base is gone.
        let edited = dir.join("1.0.0.json");
        std::fs::write(&edited, std::fs::read_to_string(&edited).unwrap().replace("string", "integer")).unwrap();
        std::fs::remove_file(dir.join("1.1.1.json")).unwrap();
        let err = read(&dir, &newest, "1.0.0").unwrap_err();
        assert!(err.contains("1.0.0.json: its base, codex 1.1.1, is not in the archive"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The files `write` gives, in a folder of their own.
    fn written(dir: &Path, files: &[(PathBuf, String)]) -> BTreeMap<String, String> {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).unwrap();
        let mut out = BTreeMap::new();
        for (path, text) in files {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            std::fs::write(dir.join(&name), text).unwrap();
            out.insert(name, text.clone());
        }
        out
    }

    #[test]
    fn vendoring_an_older_release_keeps_the_newest_as_the_anchor_and_going_back_gives_the_same_files() {
        let set = |v: &str, s: Value| SchemaSet { stable: s.to_string(), experimental: None, codex_version: v.into() };
        let newest = set("1.2.0", json!({"definitions": {"A": {}, "B": {"type": "string"}}}));
        let middle = set("1.1.0", json!({"definitions": {"A": {}, "B": {"type": "integer"}}}));
        let oldest = set("1.0.0", json!({"definitions": {"A": {}}}));
        let all = vec![
            ("1.0.0".to_owned(), Release::Bundles(oldest.clone())),
            ("1.1.0".to_owned(), Release::Bundles(middle.clone())),
            ("1.2.0".to_owned(), Release::Bundles(newest.clone())),
        ];
        let dir = std::env::temp_dir().join(format!("codex-releases-anchor-{}", std::process::id()));
        let committed = written(&dir, &write(&dir, &all, &newest).unwrap());
        assert_eq!(
            committed.keys().collect::<Vec<_>>(),
            ["1.0.0.json", "1.1.0.json"],
            "the vendored newest has no file"
        );

        // The middle release vendored: the newest is written whole, the others as they were.
        let back = written(&dir, &write(&dir, &all, &middle).unwrap());
        assert_eq!(back.keys().collect::<Vec<_>>(), ["1.0.0.json", "1.1.0.json", "1.2.0.json"]);
        assert!(back["1.2.0.json"].contains("\"base\": null"), "{}", back["1.2.0.json"]);
        assert_eq!((&back["1.0.0.json"], &back["1.1.0.json"]), (&committed["1.0.0.json"], &committed["1.1.0.json"]));
        let read_back = read(&dir, &middle, "0.0.0").unwrap();
        let versions: Vec<&str> = read_back.iter().map(|(v, _)| v.as_str()).collect();
        assert_eq!(versions, ["1.0.0", "1.2.0"], "every release but the vendored one");
        assert!(read_back.iter().all(|(v, r)| match r {
            Release::Bundles(s) =>
                all.iter().any(|(w, r)| w == v && matches!(r, Release::Bundles(t) if same_bundles(s, t))),
            Release::Skipped(_) => false,
        }));
        // The vendored release with other bundles than its file is named.
        let patched = set("1.1.0", json!({"definitions": {"A": {}, "B": {"type": "boolean"}}}));
        let err = read(&dir, &patched, "0.0.0").unwrap_err();
        assert!(err.contains("1.1.0.json: holds other bundles for codex 1.1.0"), "{err}");

        // The newest vendored again: the files it was committed with.
        assert_eq!(written(&dir, &write(&dir, &all, &newest).unwrap()), committed);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_files_an_archive_keeps_are_the_ones_it_would_write_anew() {
        let set = |v: &str, s: Value, e: Option<Value>| SchemaSet {
            stable: format!("{s:#}"),
            experimental: e.map(|e| format!("{e:#}")),
            codex_version: v.into(),
        };
        let a = |n: i64| json!({"definitions": {"A": {"maxLength": n}, "B": {}}});
        let e = |n: i64| Some(json!({"definitions": {"X": {"minimum": n}}}));
        let releases =
            [set("1.0.0", a(1), None), set("1.1.0", a(2), e(2)), set("1.2.0", a(3), e(3)), set("1.3.0", a(4), e(4))];
        let all = |sets: &[SchemaSet]| -> Vec<(String, Release)> {
            let mut all: Vec<(String, Release)> =
                sets.iter().map(|s| (s.codex_version.clone(), Release::Bundles(s.clone()))).collect();
            all.push(("1.0.5".to_owned(), Release::Skipped("no binary".into())));
            all
        };
        let dir = std::env::temp_dir().join(format!("codex-releases-kept-{}", std::process::id()));
        let nowhere = dir.join("nowhere");
        // Over the archive each vendored release leaves, with the releases as `read` gives them
        // (compact) and as given (printed): the same files as over no archive.
        for (i, vendored) in releases.iter().enumerate() {
            for (j, next) in releases.iter().enumerate() {
                written(&dir, &write(&nowhere, &all(&releases), vendored).unwrap());
                let mut sets = releases.to_vec();
                if i % 2 == 0 {
                    for s in &mut sets {
                        *s = SchemaSet {
                            stable: compact(&s.stable.parse().unwrap()),
                            experimental: s.experimental.as_ref().map(|e| compact(&e.parse().unwrap())),
                            codex_version: s.codex_version.clone(),
                        };
                    }
                }
                let over = write(&dir, &all(&sets), next).unwrap();
                assert_eq!(over, write(&nowhere, &all(&releases), next).unwrap(), "{i} then {j}");
                // A release whose bundles changed (but the vendored one: that is `next`): its
                // file and the one written against it are worked out anew.
                if j == 2 {
                    continue;
                }
                let mut changed = sets.clone();
                changed[2].stable = compact(&json!({"definitions": {"A": {"maxLength": 3}}}));
                let over = write(&dir, &all(&changed), next).unwrap();
                assert_eq!(over, write(&nowhere, &all(&changed), next).unwrap(), "{i} then {j}, changed");
                assert_ne!(over, write(&nowhere, &all(&sets), next).unwrap());
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_release_read_back_prints_as_codex_printed_it() {
        let text = "{\n  \"a\": [\n    1,\n    \"\\u001b é\"\n  ],\n  \"b\": {}\n}";
        let set = SchemaSet {
            stable: compact(&serde_json::from_str(text).unwrap()),
            experimental: None,
            codex_version: "1.0.0".into(),
        };
        assert_eq!(printed(&set).unwrap().stable, text);
    }
}
