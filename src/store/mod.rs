//! Stores of desired and current node state: the local repo (the embedded default) and, later, a Chef
//! server. Stores never write desired state unless a run dirtied it (RFC 45).

pub mod local;

use std::path::PathBuf;
use thiserror::Error;

/// Errors of the store layer. Each names the file (or object) and, where it can, the field.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("repo {path}: {reason}")]
    Repo { path: PathBuf, reason: String },

    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },

    #[error("{kind} {name:?} not found (looked for {path})")]
    NotFound {
        kind: &'static str,
        name: String,
        path: PathBuf,
    },

    #[error("{path}: {source}")]
    Model {
        path: PathBuf,
        #[source]
        source: netgw_models::ModelError,
    },
}

impl StoreError {
    /// True when the error is about one node's data rather than the store's configuration.
    pub fn is_not_found(&self) -> bool {
        matches!(self, StoreError::NotFound { .. })
    }
}
