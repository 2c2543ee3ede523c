//! netgw-models: pure data and logic, no I/O, no tokio.
//!
//! Chef's node object (RFC 45 desired/current split), run-lists and their expansion, attribute
//! precedence and deep merge, allowlists, and secrets that never print.

pub mod allowlist;
pub mod attributes;
pub mod error;
pub mod expand;
pub mod facts;
pub mod name;
pub mod node;
pub mod policy;
pub mod runlist;
pub mod secret;

pub use error::ModelError;
pub use name::NodeName;
pub use node::{Attrs, CurrentState, DesiredState, Environment, Node, Role};
pub use runlist::{RunList, RunListItem};
pub mod compile;
pub mod kinds;
pub mod plan;
pub mod plan_file;
pub use plan::{l3, lag};
pub mod resource;
pub mod topology;
pub mod yaml;
