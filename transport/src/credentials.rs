//! Credential references: `${ENV_VAR}`, `file:PATH`, or a literal, resolved into a Secret.
//!
//! Inventories (docs/design.md §6) let a password be written as a reference instead of a literal, so secrets
//! can stay out of the inventory file. Errors name the reference (the variable or the path), never the
//! value; a literal never fails and is never printed.

use std::path::{Path, PathBuf};

use netgw_models::secret::Secret;

/// Why a credential reference could not be resolved. Never contains the secret itself.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    #[error("credential reference `${{{var}}}`: environment variable {var} is not set")]
    EnvMissing { var: String },
    #[error("credential reference `${{{var}}}`: environment variable {var} is not valid UTF-8")]
    EnvNotUnicode { var: String },
    #[error("credential reference `${{{var}}}`: {var} is not a valid environment variable name")]
    BadEnvName { var: String },
    #[error("credential reference `file:{}`: {source}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("credential reference `file:{}`: the file is not valid UTF-8", path.display())]
    FileNotUnicode { path: PathBuf },
}

/// A parsed credential reference. `Debug` never shows a literal's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialRef {
    /// `${NAME}`: the value of environment variable NAME.
    Env(String),
    /// `file:PATH`: the file's contents, trailing newlines removed.
    File(PathBuf),
    /// Anything else: the text itself.
    Literal(Secret),
}

impl CredentialRef {
    /// Classify a reference. Only a whole-string `${NAME}` is an environment reference; `file:` must be
    /// a prefix. Everything else (including `$HOME` or `a${B}c`) is a literal.
    pub fn parse(reference: &str) -> CredentialRef {
        if let Some(name) = reference
            .strip_prefix("${")
            .and_then(|rest| rest.strip_suffix('}'))
        {
            CredentialRef::Env(name.to_owned())
        } else if let Some(path) = reference.strip_prefix("file:") {
            CredentialRef::File(PathBuf::from(path))
        } else {
            CredentialRef::Literal(Secret::new(reference))
        }
    }

    /// Resolve without blocking: the file variant reads through tokio's blocking pool.
    pub async fn resolve_async(&self) -> Result<Secret, CredentialError> {
        match self {
            CredentialRef::File(path) => {
                let bytes =
                    tokio::fs::read(path)
                        .await
                        .map_err(|source| CredentialError::File {
                            path: path.clone(),
                            source,
                        })?;
                secret_from_file_bytes(path, bytes)
            }
            other => other.resolve(),
        }
    }

    /// Resolve synchronously (configuration loading, tests). In async code prefer [`Self::resolve_async`].
    pub fn resolve(&self) -> Result<Secret, CredentialError> {
        match self {
            CredentialRef::Env(var) => resolve_env(var),
            CredentialRef::File(path) => {
                let bytes = std::fs::read(path).map_err(|source| CredentialError::File {
                    path: path.clone(),
                    source,
                })?;
                secret_from_file_bytes(path, bytes)
            }
            CredentialRef::Literal(secret) => Ok(secret.clone()),
        }
    }
}

/// Resolve a reference string (`${ENV_VAR}`, `file:PATH` or a literal) synchronously.
pub fn resolve(reference: &str) -> Result<Secret, CredentialError> {
    CredentialRef::parse(reference).resolve()
}

/// Resolve a reference string without blocking the async runtime.
pub async fn resolve_async(reference: &str) -> Result<Secret, CredentialError> {
    CredentialRef::parse(reference).resolve_async().await
}

fn resolve_env(var: &str) -> Result<Secret, CredentialError> {
    // std::env::var panics on names with '=' or NUL; refuse them first.
    if var.is_empty() || var.contains(['=', '\0']) {
        return Err(CredentialError::BadEnvName {
            var: var.to_owned(),
        });
    }
    match std::env::var(var) {
        Ok(value) => Ok(Secret::new(value)),
        Err(std::env::VarError::NotPresent) => Err(CredentialError::EnvMissing {
            var: var.to_owned(),
        }),
        Err(std::env::VarError::NotUnicode(_)) => Err(CredentialError::EnvNotUnicode {
            var: var.to_owned(),
        }),
    }
}

fn secret_from_file_bytes(path: &Path, bytes: Vec<u8>) -> Result<Secret, CredentialError> {
    let text = String::from_utf8(bytes).map_err(|_| CredentialError::FileNotUnicode {
        path: path.to_owned(),
    })?;
    // `echo secret > file` leaves a newline (or CRLF); a password never ends in one.
    Ok(Secret::new(text.trim_end_matches(['\n', '\r'])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_is_returned_and_never_printed() {
        let r = CredentialRef::parse("hunter2");
        assert!(!format!("{r:?}").contains("hunter2"));
        assert_eq!(resolve("hunter2").unwrap().expose(), "hunter2");
        // Not whole-string references: literals.
        assert_eq!(resolve("$HOME").unwrap().expose(), "$HOME");
        assert_eq!(resolve("a${B}c").unwrap().expose(), "a${B}c");
    }

    #[test]
    fn env_reference() {
        // set_var is unsafe in edition 2024 (and the crate forbids unsafe): read PATH, which is always
        // set, and a name nobody sets.
        let var = "NETGW_CRED_TEST_UNSET_7F3A";
        let path = std::env::var("PATH").unwrap();
        assert_eq!(resolve("${PATH}").unwrap().expose(), path);
        let err = resolve(&format!("${{{var}}}")).unwrap_err();
        assert!(matches!(err, CredentialError::EnvMissing { .. }));
        assert!(err.to_string().contains(var), "{err}");
        assert!(matches!(
            resolve("${A=B}").unwrap_err(),
            CredentialError::BadEnvName { .. }
        ));
    }

    #[test]
    fn file_reference_trims_trailing_newlines_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pw");
        std::fs::write(&p, " s3cret \r\n\n").unwrap();
        let s = resolve(&format!("file:{}", p.display())).unwrap();
        assert_eq!(s.expose(), " s3cret ");

        let missing = dir.path().join("nope");
        let err = resolve(&format!("file:{}", missing.display())).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("nope"), "{msg}");
    }

    #[tokio::test]
    async fn async_file_reference() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pw");
        std::fs::write(&p, "abc\n").unwrap();
        let s = resolve_async(&format!("file:{}", p.display()))
            .await
            .unwrap();
        assert_eq!(s.expose(), "abc");
    }
}
