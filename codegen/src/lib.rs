//! Turns the JSON Schema bundles printed by `codex app-server generate-json-schema` into the
//! Rust source of the `codex-app-protocol` crate.
//!
//! The pipeline, one module per stage:
//!
//! ```text
//! schema set (stable/ + experimental/)
//!   -> schema.rs   parse each bundle into a schema model (unknown keywords are errors)
//!   -> lower.rs    lower each bundle into the IR (ir.rs), naming through naming.rs
//!   -> merge.rs    mark what only the experimental bundle has
//!   -> decisions.rs  `Option<Option<T>>` members, from vendor-schemas/decisions.json
//!   -> pairing.rs  pair each request with its response type (naming convention, then decisions.json)
//!   -> emit/       tokens from the IR (quote); the client's server-request handler takes
//!                  its default answers from refusal.rs (one rule over the IR: nothing approved)
//!   -> format.rs   prettyplease, file header
//! ```
//!
//! Every stage takes its policies from one [`Settings`] (`settings.rs`: the catch-all variant,
//! the reserved names, the `V1` renaming, the envelope's definitions, the depth of untagged
//! unions' data, the routes of notifications, and the decisions of
//! `vendor-schemas/decisions.json`); [`Settings::codex`] is what regen uses.
//!
//! The protocol changelog, which compares the IRs of two schema sets (`cargo xtask diff`), is
//! the crate `codex-app-changelog` (`changelog/`).

pub mod decisions;
mod definition_names;
mod emit;
mod error;
mod format;
pub mod history;
pub mod ir;
mod lower;
mod merge;
pub mod naming;
pub mod pairing;
mod recursion;
pub mod refusal;
pub mod releases;
pub mod render;
pub mod schema;
pub mod schema_name;
pub mod settings;
#[doc(hidden)]
pub mod test_support;
pub mod vendor;

use std::path::{Path, PathBuf};

pub use emit::{GENERATED_DIR, GENERATED_DIRS, SHARED_SOURCES};
pub use error::{Error, Warning};
pub use settings::{Route, Settings};

/// The bundle file `generate-json-schema` writes, which contains every definition.
pub const BUNDLE_FILE: &str = "codex_app_server_protocol.schemas.json";

/// A `stable/` bundle and an optional `experimental/` one, as printed by one codex release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaSet {
    pub stable: String,
    pub experimental: Option<String>,
    /// `codex --version` of the release that printed them (`0.169.0`), when known.
    pub codex_version: String,
}

impl SchemaSet {
    /// Reads `DIR/stable/<bundle>` and, if present, `DIR/experimental/<bundle>`.
    pub fn read_dir(dir: &Path, codex_version: &str) -> std::io::Result<Self> {
        let experimental = dir.join("experimental");
        Self::read(&dir.join("stable"), experimental.exists().then_some(experimental.as_path()), codex_version)
    }

    /// Reads the bundle in each `generate-json-schema` output folder.
    pub fn read(stable: &Path, experimental: Option<&Path>, codex_version: &str) -> std::io::Result<Self> {
        let read = |dir: &Path| {
            let path = dir.join(BUNDLE_FILE);
            std::fs::read_to_string(&path)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
        };
        Ok(SchemaSet {
            stable: read(stable)?,
            experimental: experimental.map(read).transpose()?,
            codex_version: codex_version.to_owned(),
        })
    }
}

/// Schema set -> IR with experimental marks, the decisions of `vendor-schemas/decisions.json`
/// and response pairing, with [`Settings::codex`]. Decisions the file does not hold are one
/// error listing every one of them with its proposal ([`Error::missing_decisions`]).
pub fn build_ir(set: &SchemaSet) -> Result<ir::Ir, Error> {
    build_ir_with(set, &Settings::codex()?)
}

/// [`build_ir`] with other settings: other decisions ([`Settings::decisions`]), what happens
/// to a decision they do not hold ([`Settings::undecided`]), other policies.
pub fn build_ir_with(set: &SchemaSet, settings: &Settings) -> Result<ir::Ir, Error> {
    fn in_bundle(which: &'static str) -> impl Fn(Error) -> Error {
        move |mut e| {
            e.message = format!("{which} bundle: {}", e.message);
            e
        }
    }
    let stable = lower::lower(&schema::Bundle::from_json(&set.stable).map_err(in_bundle("stable"))?, settings)
        .map_err(in_bundle("stable"))?;
    let mut ir = match &set.experimental {
        None => stable,
        Some(text) => {
            let experimental =
                lower::lower(&schema::Bundle::from_json(text).map_err(in_bundle("experimental"))?, settings)
                    .map_err(in_bundle("experimental"))?;
            merge::merge(&stable, experimental)?
        }
    };
    // Both kinds of decision are gathered before stopping, so one run lists all of them.
    let null_distinct_from_absent = decisions::apply_null_decisions(&mut ir, &settings.decisions);
    let responses = pairing::pair(&mut ir, settings)?;
    if let Some(history) = &settings.history {
        history.apply(&mut ir, settings.floor.as_deref())?;
    }
    let missing = decisions::Missing { codex_version: set.codex_version.clone(), responses, null_distinct_from_absent };
    if settings.undecided == decisions::Undecided::Fail && !missing.is_empty() {
        return Err(Error::missing_decisions(missing));
    }
    Ok(ir)
}

/// One generated file, its path relative to the workspace root (`protocol/src/generated/types.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    pub path: PathBuf,
    pub contents: String,
}

/// Counts for the regen summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub types: usize,
    pub client_requests: usize,
    pub server_requests: usize,
    pub server_notifications: usize,
    pub client_notifications: usize,
    pub experimental_methods: usize,
    pub experimental_types: usize,
    pub experimental_members: usize,
    pub lines: usize,
    /// What the generator could not type faithfully and did instead (never a loss on the wire).
    pub warnings: Vec<Warning>,
}

/// Generates the protocol crate's `src/generated/` files from a schema set, with
/// [`Settings::codex`]. `command` is the command line that regenerates them, named in each
/// file's header.
pub fn generate(set: &SchemaSet, command: &str) -> Result<(Vec<GeneratedFile>, Summary), Error> {
    generate_with(set, command, &Settings::codex()?)
}

/// [`generate`] with other settings.
pub fn generate_with(
    set: &SchemaSet,
    command: &str,
    settings: &Settings,
) -> Result<(Vec<GeneratedFile>, Summary), Error> {
    generate_from_ir(&build_ir_with(set, settings)?, set, command, settings)
}

/// [`generate_with`] from an IR [`build_ir_with`] made of `set` (for a caller that reads the IR
/// too, so it is built once).
pub fn generate_from_ir(
    ir: &ir::Ir,
    set: &SchemaSet,
    command: &str,
    settings: &Settings,
) -> Result<(Vec<GeneratedFile>, Summary), Error> {
    let header = format::Header { command, codex_version: &set.codex_version, hashes: format::hashes(set) };
    let files = emit::emit(ir, &set.codex_version, settings)?
        .into_iter()
        .map(|(path, parts)| Ok(GeneratedFile { path: path.into(), contents: format::render(&header, path, parts)? }))
        .collect::<Result<Vec<_>, Error>>()?;
    let mut summary = summarize(ir);
    // The crate's code (what users build), not the tests' table.
    summary.lines =
        files.iter().filter(|f| f.path.starts_with(emit::GENERATED_DIR)).map(|f| f.contents.lines().count()).sum();
    Ok((files, summary))
}

fn summarize(ir: &ir::Ir) -> Summary {
    use ir::{Direction, TypeKind};
    let all_methods = || Direction::ALL.into_iter().flat_map(|d| ir.methods(d));
    let members = ir.types.values().map(|t| match &t.kind {
        TypeKind::Struct(s) => s.fields.iter().filter(|f| f.experimental).count(),
        TypeKind::StringEnum(e) => e.values.iter().filter(|v| v.experimental).count(),
        TypeKind::Tagged(u) => u.arms.iter().filter(|a| a.experimental).count(),
        TypeKind::External(u) => u.arms.iter().filter(|a| a.experimental).count(),
        TypeKind::Untagged(u) => u.arms.iter().filter(|a| a.experimental).count(),
        TypeKind::Alias(_) => 0,
    });
    Summary {
        types: ir.types.len(),
        client_requests: ir.client_requests.len(),
        server_requests: ir.server_requests.len(),
        server_notifications: ir.server_notifications.len(),
        client_notifications: ir.client_notifications.len(),
        experimental_methods: all_methods().filter(|m| m.experimental).count(),
        experimental_types: ir.types.values().filter(|t| t.experimental).count(),
        experimental_members: members.sum(),
        lines: 0,
        warnings: ir.warnings.clone(),
    }
}
