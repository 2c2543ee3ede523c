//! Stores of desired and current node state: the local repo (the embedded default) and, later, a Chef
//! server. Stores never write desired state unless a run dirtied it (RFC 45).

pub mod chef;
pub mod durable;
pub mod local;
pub mod size;
pub mod unsaved;
pub mod versioned;

use crate::kind::NodeErrorKind;
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

    /// A Chef server's answer or the way to it (boxed: it is large and rare).
    #[error(transparent)]
    Chef(Box<chef::ChefError>),

    /// Current state in the state directory that another user could have written.
    #[error(transparent)]
    Unsafe(#[from] crate::state::UnsafeState),
}

impl StoreError {
    /// Bad files and missing objects are the operator's input; the file system failing is not.
    pub fn kind(&self) -> NodeErrorKind {
        match self {
            StoreError::Parse { .. } | StoreError::Model { .. } | StoreError::NotFound { .. } => {
                NodeErrorKind::Config
            }
            StoreError::Io { .. } | StoreError::Repo { .. } | StoreError::Unsafe(_) => {
                NodeErrorKind::Store
            }
            StoreError::Chef(c) => c.kind(),
        }
    }

    /// True when the error is about one node's data rather than the store's configuration.
    pub fn is_not_found(&self) -> bool {
        matches!(self, StoreError::NotFound { .. })
    }
}

use async_trait::async_trait;
use netgw_models::{CurrentState, DesiredState, Environment, NodeName, Role};

/// Where desired state, roles and environments live, and where current state is saved.
#[async_trait]
pub trait NodeStore: Send + Sync + 'static {
    /// Where a node lives, for messages (`repo/nodes/sw1.json`, `https://chef/nodes/sw1`).
    fn describe(&self, name: &NodeName) -> String;
    /// The node's desired state; `Ok(None)` when the node does not exist.
    async fn load_desired(&self, name: &NodeName) -> Result<Option<DesiredState>, StoreError>;
    /// The current state the last run saved, if any.
    async fn load_current(&self, name: &NodeName) -> Result<Option<CurrentState>, StoreError>;
    /// Create a node (`POST /nodes`); false when it already existed (then it is left untouched).
    async fn create_node(&self, desired: &DesiredState) -> Result<bool, StoreError>;
    async fn load_role(&self, name: &str) -> Result<Option<Role>, StoreError>;
    /// An environment; `_default` always exists.
    async fn load_environment(&self, name: &str) -> Result<Environment, StoreError>;
    /// Save current state without reverting any desired-state change made since `loaded` was read
    /// (RFC 45; CHEF-4978).
    async fn save_current(
        &self,
        loaded: &DesiredState,
        current: &CurrentState,
    ) -> Result<(), StoreError>;
    /// The local repo behind this store, when it is one: a node is then resolved with one blocking
    /// task instead of one per file (`resolve::resolve_from`).
    fn as_local(&self) -> Option<&local::LocalRepo> {
        None
    }
    /// The local repo whose roles and environments this store serves: the store itself, or the
    /// repo a wrapper reads through (their Ruby DSL files are read above the store, in
    /// `resolve::repo_role`).
    fn roles_repo(&self) -> Option<&local::LocalRepo> {
        self.as_local()
    }
    /// Names of the nodes a Chef search query (`vendor:juniper`, `role:leaf AND chef_environment:prod`)
    /// finds; `Ok(None)` when the store cannot search (a local repo has no search index).
    async fn search_nodes(&self, query: &str) -> Result<Option<Vec<String>>, StoreError> {
        let _ = query;
        Ok(None)
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError::Repo {
            path: PathBuf::from("."),
            reason: format!("store task failed: {e}"),
        })?
}

#[async_trait]
impl NodeStore for local::LocalRepo {
    fn describe(&self, name: &NodeName) -> String {
        self.desired_path(name).display().to_string()
    }

    fn as_local(&self) -> Option<&local::LocalRepo> {
        Some(self)
    }

    async fn load_desired(&self, name: &NodeName) -> Result<Option<DesiredState>, StoreError> {
        let (r, n) = (self.clone(), name.clone());
        blocking(move || match r.load_desired(&n) {
            Ok(d) => Ok(Some(d)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        })
        .await
    }

    async fn load_current(&self, name: &NodeName) -> Result<Option<CurrentState>, StoreError> {
        let (r, n) = (self.clone(), name.clone());
        blocking(move || r.load_current(&n)).await
    }

    async fn create_node(&self, desired: &DesiredState) -> Result<bool, StoreError> {
        let (r, d) = (self.clone(), desired.clone());
        blocking(move || r.create_node(&d)).await
    }

    async fn load_role(&self, name: &str) -> Result<Option<Role>, StoreError> {
        let (r, n) = (self.clone(), name.to_owned());
        blocking(move || r.load_role(&n)).await
    }

    async fn load_environment(&self, name: &str) -> Result<Environment, StoreError> {
        let (r, n) = (self.clone(), name.to_owned());
        blocking(move || r.load_environment(&n)).await
    }

    async fn save_current(
        &self,
        _loaded: &DesiredState,
        current: &CurrentState,
    ) -> Result<(), StoreError> {
        // Current state has a file of its own: the desired file is never written here.
        // Serialised here, once, so only the bytes move to the writer thread.
        let body = local::current_body(current)?;
        let (root, rel) = self.current_target(&current.name);
        durable::write(root, rel, body).await
    }
}
