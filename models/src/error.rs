//! Errors of the models layer. Every variant names the input that was wrong and why.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ModelError {
    #[error("invalid node name {name:?}: {reason}")]
    InvalidNodeName { name: String, reason: &'static str },

    #[error("invalid {kind} name {name:?}: {reason}")]
    InvalidObjectName {
        kind: &'static str,
        name: String,
        reason: &'static str,
    },

    #[error("invalid run-list item {item:?}: {reason}")]
    InvalidRunListItem { item: String, reason: String },

    #[error("run list requires {cookbook} at versions {first} and {second}")]
    CookbookVersionConflict {
        cookbook: String,
        first: String,
        second: String,
    },

    #[error("invalid allowlist entry {entry:?}: {reason}")]
    InvalidAllowlist { entry: String, reason: &'static str },

    #[error("invalid attribute path {path:?}: {reason}")]
    InvalidAttributePath { path: String, reason: &'static str },

    #[error("in {context}: field {field:?}: {reason}")]
    InvalidField {
        context: String,
        field: String,
        reason: String,
    },
}
