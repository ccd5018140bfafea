//! The vendored schema set: `vendor-schemas/{stable,experimental}/<bundle>` plus
//! `manifest.json` naming the codex release that printed them and each file's sha256.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{SchemaSet, BUNDLE_FILE};

pub const MANIFEST_FILE: &str = "manifest.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// `codex --version` without the `codex-cli ` prefix.
    pub codex_version: String,
    /// Path relative to the vendor folder -> sha256 of its bytes.
    pub files: BTreeMap<String, String>,
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

impl Manifest {
    pub fn for_set(set: &SchemaSet) -> Manifest {
        let mut files = BTreeMap::new();
        files.insert(format!("stable/{BUNDLE_FILE}"), sha256_hex(set.stable.as_bytes()));
        if let Some(e) = &set.experimental {
            files.insert(format!("experimental/{BUNDLE_FILE}"), sha256_hex(e.as_bytes()));
        }
        Manifest { codex_version: set.codex_version.clone(), files }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a manifest serializes") + "\n"
    }
}

/// Reads the vendored set and checks its files against the manifest.
pub fn read_vendored(dir: &Path) -> Result<SchemaSet, String> {
    let manifest_path = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&manifest_path).map_err(|e| format!("{}: {e}", manifest_path.display()))?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", manifest_path.display()))?;
    let set = SchemaSet::read_dir(dir, &manifest.codex_version).map_err(|e| e.to_string())?;
    let actual = Manifest::for_set(&set);
    if actual != manifest {
        return Err(format!(
            "{} does not match the vendored files (they were edited by hand, or the manifest is stale); \
             run `cargo xtask regen` with the codex that printed them",
            manifest_path.display()
        ));
    }
    Ok(set)
}
