//! Credential references: `${ENV_VAR}`, `file:PATH`, or a literal, resolved into a Secret.
