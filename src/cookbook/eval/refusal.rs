//! Why the evaluator refuses a value or a call it reached. The caller places it in a
//! `CookbookError` (file, line, the expression); this says what about the value or the call.

/// A construct netgw does not evaluate the way Chef would, or that raises in Ruby.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("not a method netgw evaluates")]
    NotEvaluated,
    #[error("key not found (Ruby raises KeyError)")]
    KeyNotFound,
    #[error("dig into {0} (Ruby raises TypeError)")]
    DigInto(&'static str),
    #[error(
        "a Symbol key on a hash with the String key {0:?}: Chef's attributes read it, a plain Ruby hash does not, and netgw cannot tell which this is; index with the string"
    )]
    SymbolOnStringKey(String),
    #[error("an array is indexed by integers, not {0}")]
    ArrayIndex(&'static str),
    #[error("indexes {0}, which netgw does not index (on nil Chef raises NoMethodError)")]
    NotIndexable(&'static str),
    #[error("a hash key of type {0}")]
    HashKeyType(&'static str),
    #[error("a Range (Chef stores the Range object; write (a..b).to_a for its elements)")]
    Range,
    #[error(
        "the Integer hash key {0} (Chef keeps it apart from the String {0:?} and netgw's attributes are JSON: use a string key)"
    )]
    IntegerKey(String),
    #[error(
        "several version keys match the node's platform_version {version:?}: {keys:?} (Chef raises \"Multiple matches detected\")"
    )]
    SeveralVersions { version: String, keys: Vec<String> },
}
