//! Progress of a run as it happens, for the trigger API's event stream, the data collector and
//! progress bars.

use super::{NodeStatus, ResourceReport};
use std::sync::Arc;

/// Progress of a run, for the trigger API's event stream and progress bars.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunEvent {
    NodeStarted {
        run_id: String,
        node: String,
    },
    Resource {
        run_id: String,
        node: String,
        resource: Box<ResourceReport>,
    },
    NodeFinished {
        run_id: String,
        node: String,
        status: NodeStatus,
        updated: usize,
        total: usize,
        error: Option<String>,
    },
}

/// Receives run events; must not block.
pub type EventSink = Arc<dyn Fn(RunEvent) + Send + Sync>;
