//! A node the store lacks, as a dry run sees it: `--why-run` and `drift` promise to change nothing, so
//! instead of creating the node (`POST /nodes`, `nodes/NAME.json`) they read it as the empty node a
//! converge would create. Every other read goes to the real store; writes are refused.

use super::{NodeStore, StoreError};
use async_trait::async_trait;
use netgw_models::{CurrentState, DesiredState, Environment, NodeName, Role};
use std::path::PathBuf;
use std::sync::Arc;

pub struct Unsaved {
    inner: Arc<dyn NodeStore>,
    node: DesiredState,
}

impl Unsaved {
    /// `inner` with `name` present as a new, empty node.
    pub fn new(inner: Arc<dyn NodeStore>, name: &NodeName) -> Self {
        Unsaved {
            inner,
            node: DesiredState::new(name.clone()),
        }
    }

    fn refused(&self, name: &NodeName) -> StoreError {
        StoreError::Repo {
            path: PathBuf::from(self.inner.describe(name)),
            reason: "a dry run never writes the store".into(),
        }
    }
}

#[async_trait]
impl NodeStore for Unsaved {
    fn describe(&self, name: &NodeName) -> String {
        self.inner.describe(name)
    }
    async fn load_desired(&self, name: &NodeName) -> Result<Option<DesiredState>, StoreError> {
        if *name == self.node.name {
            return Ok(Some(self.node.clone()));
        }
        self.inner.load_desired(name).await
    }
    async fn load_current(&self, name: &NodeName) -> Result<Option<CurrentState>, StoreError> {
        self.inner.load_current(name).await
    }
    async fn create_node(&self, desired: &DesiredState) -> Result<bool, StoreError> {
        Err(self.refused(&desired.name))
    }
    async fn load_role(&self, name: &str) -> Result<Option<Role>, StoreError> {
        self.inner.load_role(name).await
    }
    async fn load_environment(&self, name: &str) -> Result<Environment, StoreError> {
        self.inner.load_environment(name).await
    }
    async fn save_current(
        &self,
        _loaded: &DesiredState,
        current: &CurrentState,
    ) -> Result<(), StoreError> {
        Err(self.refused(&current.name))
    }
}
