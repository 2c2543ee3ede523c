//! Reading cookbooks: a directory laid out as `<root>/cookbooks/NAME/{metadata.rb, metadata.json,
//! attributes/*.rb|*.yml, recipes/*.rb|*.yml}` (a repo's, or a cache of files fetched from a Chef
//! server). Ruby files are parsed and evaluated statically ([`ruby`], [`eval`]); YAML files are netgw's
//! own declarative format. A cookbook may mix both.

pub mod metadata;
pub mod ruby;

pub use metadata::{Metadata, read_metadata};

use crate::rootdir::RootDir;
use crate::store::StoreError;
use crate::store::local::read_text_in;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum CookbookError {
    /// A construct outside the subset netgw evaluates, or a value it cannot use.
    #[error("{path}:{line}: {construct}: {why}")]
    Ruby {
        path: PathBuf,
        line: usize,
        construct: String,
        why: String,
    },

    #[error("{path}:{line}: syntax error: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },

    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The cookbooks beneath one root directory.
#[derive(Debug, Clone)]
pub struct Cookbooks {
    dir: Arc<RootDir>,
}

impl Cookbooks {
    /// Cookbooks beneath `root` (which holds `cookbooks/`).
    pub fn open(root: &Path) -> Result<Cookbooks, CookbookError> {
        let dir = RootDir::open(root).map_err(|source| CookbookError::Io {
            path: root.to_owned(),
            source,
        })?;
        Ok(Cookbooks { dir: Arc::new(dir) })
    }

    /// Share an already opened root (the local repo's).
    pub fn from_root(dir: Arc<RootDir>) -> Cookbooks {
        Cookbooks { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    #[allow(dead_code)]
    pub(crate) fn dir(&self) -> &RootDir {
        &self.dir
    }

    /// A cookbook's metadata; a cookbook without a metadata file (or without a directory) is named
    /// after itself, version 0.0.0, no dependencies.
    pub fn metadata(&self, cookbook: &str) -> Result<Metadata, CookbookError> {
        metadata_in(&self.dir, &Path::new("cookbooks").join(cookbook), cookbook)
    }

    /// Whether `cookbooks/NAME` exists.
    pub fn exists(&self, cookbook: &str) -> bool {
        self.dir.sub(&Path::new("cookbooks").join(cookbook)).is_ok()
    }
}

/// Metadata of the cookbook at `rel` beneath `root`.
pub(crate) fn metadata_in(
    root: &RootDir,
    rel: &Path,
    dir_name: &str,
) -> Result<Metadata, CookbookError> {
    let rb = rel.join("metadata.rb");
    if let Some(text) = read_text_in(root, &rb)? {
        return metadata::parse_metadata_rb(&root.path().join(&rb), &text, dir_name);
    }
    let json = rel.join("metadata.json");
    if let Some(text) = read_text_in(root, &json)? {
        return metadata::parse_metadata_json(&root.path().join(&json), &text, dir_name);
    }
    Ok(Metadata::unnamed(dir_name))
}
