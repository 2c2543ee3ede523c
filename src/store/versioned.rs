//! Versioned JSON documents of the state directory: intent journal entries, transaction records and
//! current-state files each carry the version of their format in a top-level `format` field.
//!
//! ```text
//!   read:  peek `format` ─▶ none     ─▶ version 1 (the files of netgw 0.3, which wrote none)
//!                         ├▶ older    ─▶ migrated in memory, step by step; rewritten by the next write
//!                         ├▶ current  ─▶ parsed as it is
//!                         └▶ newer    ─▶ refused (FormatError::Newer): never read as something else
//!   write: `format` first, then the document's own fields
//! ```
//! A newer netgw reads every older format; an older netgw refuses a newer one with an error naming the
//! file, the version found and the version it reads, rather than guessing at fields it does not know.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The version a document without a `format` field is: what netgw 0.3 wrote.
pub const UNVERSIONED: u32 = 1;

/// One kind of document: what it is called in messages, the version this build writes, and how an
/// older version becomes the next one.
#[derive(Debug, Clone, Copy)]
pub struct Format {
    pub what: &'static str,
    pub current: u32,
    /// `(from, document)`: turn version `from` into `from + 1` in place.
    pub migrate: fn(u32, &mut serde_json::Map<String, Value>) -> Result<(), String>,
}

/// Version 1 to 2 added the `format` field and nothing else.
pub fn only_the_field_added(
    from: u32,
    _: &mut serde_json::Map<String, Value>,
) -> Result<(), String> {
    match from {
        1 => Ok(()),
        _ => Err(format!("no migration from format {from}")),
    }
}

#[derive(Debug, Error)]
pub enum FormatError {
    #[error(
        "{path}: {what} format {found}, newer than this netgw reads (format {known}); a newer netgw wrote \
         it: upgrade netgw on this host to that release or later (do not edit or remove the file: it \
         may describe a change still unfinished on a device)"
    )]
    Newer {
        path: PathBuf,
        what: &'static str,
        found: u64,
        known: u32,
    },
    #[error("{path}: {what}: field `format` is {found}, not a version number (1, 2, ...)")]
    Invalid {
        path: PathBuf,
        what: &'static str,
        found: String,
    },
    #[error("{path}: {what} format {from} could not be migrated to format {to}: {reason}")]
    Migration {
        path: PathBuf,
        what: &'static str,
        from: u32,
        to: u32,
        reason: String,
    },
    #[error("{path}: {what} (format {version}): {reason}")]
    Parse {
        path: PathBuf,
        what: &'static str,
        version: u32,
        reason: String,
    },
}

/// Only the version: every other field is skipped unread.
#[derive(Deserialize)]
struct Peek {
    #[serde(default)]
    format: Option<Value>,
}

/// The format version of the document `text` at `path`.
pub fn version_of(path: &Path, text: &[u8], f: &Format) -> Result<u32, FormatError> {
    let parse = |reason: String| FormatError::Parse {
        path: path.to_owned(),
        what: f.what,
        version: UNVERSIONED,
        reason,
    };
    let peek: Peek = serde_json::from_slice(text).map_err(|e| parse(e.to_string()))?;
    let Some(v) = peek.format else {
        return Ok(UNVERSIONED);
    };
    let invalid = || FormatError::Invalid {
        path: path.to_owned(),
        what: f.what,
        found: v.to_string(),
    };
    let n = v.as_u64().filter(|n| *n >= 1).ok_or_else(invalid)?;
    if n > u64::from(f.current) {
        return Err(FormatError::Newer {
            path: path.to_owned(),
            what: f.what,
            found: n,
            known: f.current,
        });
    }
    u32::try_from(n).map_err(|_| invalid())
}

/// Read a document of format `f` from `text` (the file at `path`): migrated when older, refused when
/// newer than this build knows.
pub fn parse<T: DeserializeOwned>(path: &Path, text: &[u8], f: &Format) -> Result<T, FormatError> {
    let version = version_of(path, text, f)?;
    let parse = |version: u32, reason: String| FormatError::Parse {
        path: path.to_owned(),
        what: f.what,
        version,
        reason,
    };
    if version == f.current {
        return from_slice_named(text).map_err(|e| parse(version, e));
    }
    let mut doc: serde_json::Map<String, Value> =
        serde_json::from_slice(text).map_err(|e| parse(version, e.to_string()))?;
    for from in version..f.current {
        (f.migrate)(from, &mut doc).map_err(|reason| FormatError::Migration {
            path: path.to_owned(),
            what: f.what,
            from,
            to: f.current,
            reason,
        })?;
    }
    doc.insert("format".into(), Value::from(f.current));
    T::deserialize(Value::Object(doc)).map_err(|e| parse(version, e.to_string()))
}

/// Parse naming the field that was wrong (`vlans[2]`). The path is tracked only for a file that
/// fails to parse (tracking costs on every element; the second pass gives the same error with its
/// field).
fn from_slice_named<T: DeserializeOwned>(text: &[u8]) -> Result<T, String> {
    if let Ok(v) = serde_json::from_slice(text) {
        return Ok(v);
    }
    let de = &mut serde_json::Deserializer::from_slice(text);
    let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let field = e.path().to_string();
        if field == "." || field.is_empty() {
            e.into_inner().to_string()
        } else {
            format!("field `{field}`: {}", e.into_inner())
        }
    })?;
    // One document per file: text after it is an error, not ignored.
    de.end().map_err(|e| e.to_string())?;
    Ok(value)
}

/// `value` with its format version first, for writing.
#[derive(Serialize)]
pub struct Versioned<'a, T: Serialize> {
    format: u32,
    #[serde(flatten)]
    value: &'a T,
}

impl<'a, T: Serialize> Versioned<'a, T> {
    pub fn new(f: &Format, value: &'a T) -> Self {
        Versioned {
            format: f.current,
            value,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Doc {
        name: String,
        #[serde(default)]
        size: u32,
    }

    /// Format 3: formats 1 (no `format` field) and 2 had `len` where format 3 has `size`.
    fn renamed(from: u32, d: &mut serde_json::Map<String, Value>) -> Result<(), String> {
        match from {
            1 => Ok(()),
            2 => {
                let len = d.remove("len").ok_or("no `len`")?;
                d.insert("size".into(), len);
                Ok(())
            }
            _ => Err(format!("no migration from format {from}")),
        }
    }

    const F: Format = Format {
        what: "test document",
        current: 3,
        migrate: renamed,
    };

    #[test]
    fn older_formats_are_migrated_and_the_current_one_is_written() {
        let p = Path::new("/s/d.json");
        let want = Doc {
            name: "a".into(),
            size: 4,
        };
        assert_eq!(
            parse::<Doc>(p, br#"{"name":"a","len":4}"#, &F).unwrap(),
            want
        );
        assert_eq!(
            parse::<Doc>(p, br#"{"format":2,"name":"a","len":4}"#, &F).unwrap(),
            want
        );
        assert_eq!(
            parse::<Doc>(p, br#"{"format":3,"name":"a","size":4}"#, &F).unwrap(),
            want
        );
        let written = serde_json::to_string(&Versioned::new(&F, &want)).unwrap();
        assert_eq!(written, r#"{"format":3,"name":"a","size":4}"#);
        assert_eq!(parse::<Doc>(p, written.as_bytes(), &F).unwrap(), want);
        let e = parse::<Doc>(p, br#"{"format":2,"name":"a"}"#, &F)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/s/d.json") && e.contains("format 2 could not be migrated"),
            "{e}"
        );
    }

    #[test]
    fn a_newer_or_invalid_format_is_refused_naming_the_file_and_both_versions() {
        let p = Path::new("/s/d.json");
        let e = parse::<Doc>(p, br#"{"format":4,"name":"a","size":4}"#, &F).unwrap_err();
        assert!(matches!(
            e,
            FormatError::Newer {
                found: 4,
                known: 3,
                ..
            }
        ));
        let m = e.to_string();
        assert!(
            m.contains("/s/d.json")
                && m.contains("format 4")
                && m.contains("reads (format 3)")
                && m.contains("upgrade netgw"),
            "{m}"
        );
        for bad in [r#"{"format":0}"#, r#"{"format":"2"}"#, r#"{"format":1.5}"#] {
            let e = parse::<Doc>(p, bad.as_bytes(), &F).unwrap_err();
            assert!(matches!(e, FormatError::Invalid { .. }), "{bad}: {e}");
        }
        let e = parse::<Doc>(p, br#"{"format":3,"name":7}"#, &F)
            .unwrap_err()
            .to_string();
        assert!(e.contains("field `name`"), "{e}");
    }
}
