//! External node classifier (docs/design.md §3 step 3): Puppet's ENC contract.
//!
//! The executable is run with the node name as its only argument (no shell, stdin closed, a timeout,
//! bounded output) and prints YAML (Puppet docs, "Writing external node classifiers"):
//!
//! ```yaml
//! ---
//! classes:                      # an array of class names, or a hash of class -> parameters
//!   netdev::vlans:
//!     vlans: {"100": {name: web}}
//!   ntp:
//! parameters:                   # node-level parameters
//!   site: par1
//! environment: production
//! ```
//!
//! Mapping to Chef terms, for this run only (nothing here is ever saved as desired state):
//! - each class becomes `recipe[CLASS]` appended to the run-list (Puppet's `a::b` is Chef's
//!   `cookbook::recipe`);
//! - `parameters` become normal attributes at the top level, and a class's parameters become normal
//!   attributes under its cookbook (`netdev::vlans {vlans: ...}` sets `node['netdev']['vlans']`, the
//!   Chef convention of cookbook-namespaced attributes). They form their own layer (`Source::Classifier`)
//!   above the node's own normal attributes;
//! - `environment` replaces the node's `chef_environment`.
//!
//! A non-zero exit or empty output means the classifier does not know the node: the node fails with
//! "could not find node NAME", as Puppet's server does.

use crate::resolve::{self, NodeView, ResolveError};
use crate::store::NodeStore;
use crate::store::local::LocalRepo;
use async_trait::async_trait;
use netgw_models::attributes::{AttributeSet, Component, Source, assign_merge};
use netgw_models::name::validate_environment_name;
use netgw_models::runlist::RunListItem;
use netgw_models::{Attrs, CurrentState, DesiredState, Environment, NodeName, Role};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use thiserror::Error;
use tokio::io::{AsyncRead, AsyncReadExt};

/// How long a classifier may run.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Most bytes of YAML read from a classifier.
pub const MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// Most bytes of a classifier's stderr kept for the error message.
const MAX_STDERR_BYTES: usize = 4096;

/// What a classifier said about one node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Classification {
    /// Classes in output order, each with its parameters (empty for the array form).
    pub classes: Vec<(String, Attrs)>,
    pub parameters: Attrs,
    pub environment: Option<String>,
}

#[derive(Debug, Error)]
pub enum ClassifyError {
    #[error("could not find node {node}: classifier {path} {reason}")]
    NotFound {
        node: String,
        path: PathBuf,
        reason: String,
    },

    #[error("classifier {path}: could not run it: {source}")]
    Spawn {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("classifier {path} for node {node}: no answer within {}s (killed)", .after.as_secs_f64())]
    Timeout {
        path: PathBuf,
        node: String,
        after: Duration,
    },

    #[error("classifier {path} for node {node}: printed more than {limit} bytes (killed)")]
    TooMuchOutput {
        path: PathBuf,
        node: String,
        limit: usize,
    },

    #[error("classifier {path} for node {node}: invalid YAML: {message}")]
    Parse {
        path: PathBuf,
        node: String,
        message: String,
    },

    #[error("classifier {path} for node {node}: {message}")]
    Invalid {
        path: PathBuf,
        node: String,
        message: String,
    },

    #[error(transparent)]
    Resolve(#[from] Box<ResolveError>),
}

impl ClassifyError {
    pub fn is_timeout(&self) -> bool {
        matches!(self, ClassifyError::Timeout { .. })
    }
}

/// Run the classifier for one node and parse its answer.
pub async fn classify(
    path: &Path,
    node: &str,
    timeout: Duration,
) -> Result<Classification, ClassifyError> {
    let mut attempt = 0;
    let mut child = loop {
        let spawned = tokio::process::Command::new(path)
            .arg(node)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn();
        match spawned {
            Ok(c) => break c,
            // ETXTBSY: the file was just written and another thread's fork still holds it open.
            Err(e) if e.raw_os_error() == Some(26) && attempt < 20 => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            Err(source) => {
                return Err(ClassifyError::Spawn {
                    path: path.to_owned(),
                    source,
                });
            }
        }
    };
    let (Some(mut stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(ClassifyError::Spawn {
            path: path.to_owned(),
            source: std::io::Error::other("no stdout/stderr pipe"),
        });
    };
    // stderr is drained to the end in its own task (only its start is kept), so the child never
    // blocks on it; the task is aborted when this function returns, whatever the outcome.
    let mut err_task = AbortOnDrop(tokio::spawn(async move {
        read_bounded(&mut stderr, MAX_STDERR_BYTES, true).await
    }));
    let io_err = |source: std::io::Error| ClassifyError::Spawn {
        path: path.to_owned(),
        source,
    };
    let run = async {
        let (out, overflow) = read_bounded(&mut stdout, MAX_OUTPUT_BYTES, false).await?;
        if overflow {
            return Ok(None);
        }
        let status = child.wait().await?;
        Ok::<_, std::io::Error>(Some((out, status)))
    };
    // On every early return the child is killed (kill_on_drop) and our pipe ends close, so anything
    // it started that still writes to them gets SIGPIPE.
    let (out, status) = match tokio::time::timeout(timeout, run).await {
        Err(_) => {
            return Err(ClassifyError::Timeout {
                path: path.to_owned(),
                node: node.to_owned(),
                after: timeout,
            });
        }
        Ok(Err(e)) => return Err(io_err(e)),
        Ok(Ok(None)) => {
            return Err(ClassifyError::TooMuchOutput {
                path: path.to_owned(),
                node: node.to_owned(),
                limit: MAX_OUTPUT_BYTES,
            });
        }
        Ok(Ok(Some(r))) => r,
    };
    // The child has exited; whatever it left running may hold stderr open: wait only briefly.
    let err = match tokio::time::timeout(Duration::from_millis(500), &mut err_task.0).await {
        Ok(Ok(Ok((e, _)))) => e,
        _ => Vec::new(),
    };
    let stderr_text = String::from_utf8_lossy(&err).trim().to_owned();
    if !status.success() {
        let mut reason = match status.code() {
            Some(c) => format!("exited with status {c}"),
            None => "was killed by a signal".to_owned(),
        };
        if !stderr_text.is_empty() {
            reason.push_str(&format!(": {stderr_text}"));
        }
        return Err(ClassifyError::NotFound {
            node: node.to_owned(),
            path: path.to_owned(),
            reason,
        });
    }
    let text = String::from_utf8(out).map_err(|_| ClassifyError::Parse {
        path: path.to_owned(),
        node: node.to_owned(),
        message: "output is not UTF-8".into(),
    })?;
    parse(&text).map_err(|e| match e {
        ParseProblem::Empty => ClassifyError::NotFound {
            node: node.to_owned(),
            path: path.to_owned(),
            reason: "printed nothing".into(),
        },
        ParseProblem::Yaml(message) => ClassifyError::Parse {
            path: path.to_owned(),
            node: node.to_owned(),
            message,
        },
        ParseProblem::Invalid(message) => ClassifyError::Invalid {
            path: path.to_owned(),
            node: node.to_owned(),
            message,
        },
    })
}

/// A task aborted when dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Keep at most `limit` bytes; the flag says there was more. With `drain`, read on to the end and
/// discard the rest; without, stop at the limit.
async fn read_bounded<R: AsyncRead + Unpin>(
    r: &mut R,
    limit: usize,
    drain: bool,
) -> std::io::Result<(Vec<u8>, bool)> {
    let mut out = Vec::new();
    let mut over = false;
    let mut buf = [0u8; 8192];
    loop {
        let n = r.read(&mut buf).await?;
        if n == 0 {
            return Ok((out, over));
        }
        if out.len() + n > limit {
            out.extend_from_slice(&buf[..limit - out.len()]);
            over = true;
            if !drain {
                return Ok((out, over));
            }
        } else {
            out.extend_from_slice(&buf[..n]);
        }
    }
}

/// Why a classifier's output was refused.
#[derive(Debug, PartialEq)]
pub enum ParseProblem {
    Empty,
    Yaml(String),
    Invalid(String),
}

/// Parse an ENC answer (pure).
pub fn parse(text: &str) -> Result<Classification, ParseProblem> {
    if text.trim().is_empty() {
        return Err(ParseProblem::Empty);
    }
    let doc = netgw_models::yaml::to_json(text).map_err(|e| ParseProblem::Yaml(e.to_string()))?;
    let doc = match doc {
        Value::Object(m) => m,
        // A document of only `---` (or `~`) says nothing: the node is unknown.
        Value::Null => return Err(ParseProblem::Empty),
        other => {
            return Err(ParseProblem::Invalid(format!(
                "the answer must be a mapping with classes/parameters/environment, found {}",
                kind(&other)
            )));
        }
    };
    let mut c = Classification::default();
    match doc.get("classes") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for i in items {
                match i {
                    Value::String(s) => c.classes.push((checked_class(s)?, Attrs::new())),
                    other => {
                        return Err(ParseProblem::Invalid(format!(
                            "classes: every item must be a class name, found {}",
                            kind(other)
                        )));
                    }
                }
            }
        }
        Some(Value::Object(m)) => {
            for (class, params) in m {
                let params = match params {
                    Value::Null => Attrs::new(),
                    Value::Object(p) => p.clone(),
                    other => {
                        return Err(ParseProblem::Invalid(format!(
                            "classes.{class}: parameters must be a mapping, found {}",
                            kind(other)
                        )));
                    }
                };
                c.classes.push((checked_class(class)?, params));
            }
        }
        Some(other) => {
            return Err(ParseProblem::Invalid(format!(
                "classes must be a list or a mapping, found {}",
                kind(other)
            )));
        }
    }
    match doc.get("parameters") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => c.parameters = m.clone(),
        Some(other) => {
            return Err(ParseProblem::Invalid(format!(
                "parameters must be a mapping, found {}",
                kind(other)
            )));
        }
    }
    match doc.get("environment") {
        None | Some(Value::Null) => {}
        Some(Value::String(e)) => {
            validate_environment_name(e)
                .map_err(|e| ParseProblem::Invalid(format!("environment: {e}")))?;
            c.environment = Some(e.clone());
        }
        Some(other) => {
            return Err(ParseProblem::Invalid(format!(
                "environment must be a string, found {}",
                kind(other)
            )));
        }
    }
    Ok(c)
}

fn checked_class(class: &str) -> Result<String, ParseProblem> {
    // Puppet allows a leading `::` (top scope); Chef names have none.
    let name = class.trim().trim_start_matches("::");
    RunListItem::recipe(&format!("recipe[{name}]"))
        .map_err(|e| ParseProblem::Invalid(format!("class {class:?}: {e}")))?;
    Ok(name.to_owned())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// The run-list and environment part of [`apply`].
pub fn apply_desired(c: &Classification, desired: &mut DesiredState) {
    for (class, _) in &c.classes {
        // Checked when parsed; a class that slipped through is skipped rather than panicking.
        if let Ok(item) = RunListItem::recipe(&format!("recipe[{class}]")) {
            desired.run_list.push(item);
        }
    }
    if let Some(env) = &c.environment {
        desired.chef_environment = env.clone();
    }
}

/// The node-level attributes a classification sets: `parameters` at the top level, each class's
/// parameters under its cookbook.
pub fn attributes(c: &Classification) -> Attrs {
    let mut acc = Value::Object(c.parameters.clone());
    for (class, params) in &c.classes {
        if params.is_empty() {
            continue;
        }
        let cookbook = class.split("::").next().unwrap_or(class);
        let mut wrapped = Attrs::new();
        wrapped.insert(cookbook.to_owned(), Value::Object(params.clone()));
        acc = assign_merge(acc, Value::Object(wrapped));
    }
    match acc {
        Value::Object(m) => m,
        _ => Attrs::new(),
    }
}

/// Apply a classification to this run's copy of the desired state and to the node's attribute layers
/// (a `Normal` layer from `Source::Classifier`). Pure: nothing is saved.
pub fn apply(c: &Classification, desired: &mut DesiredState, attrs: &mut AttributeSet) {
    apply_desired(c, desired);
    let a = attributes(c);
    if !a.is_empty() {
        attrs.push(Component::Normal, Source::Classifier, a);
    }
}

/// A store that answers `load_desired` with the classified desired state, so the run-list is expanded
/// with the classifier's classes and environment. Everything else goes to the real store.
struct Classified {
    inner: Arc<dyn NodeStore>,
    classification: Classification,
    /// The desired state as the store had it, before the classifier touched it.
    loaded: Mutex<Option<DesiredState>>,
}

#[async_trait]
impl NodeStore for Classified {
    fn describe(&self, name: &NodeName) -> String {
        self.inner.describe(name)
    }
    async fn load_desired(
        &self,
        name: &NodeName,
    ) -> Result<Option<DesiredState>, crate::store::StoreError> {
        let Some(mut d) = self.inner.load_desired(name).await? else {
            return Ok(None);
        };
        if let Ok(mut g) = self.loaded.lock() {
            *g = Some(d.clone());
        }
        apply_desired(&self.classification, &mut d);
        Ok(Some(d))
    }
    async fn load_current(
        &self,
        name: &NodeName,
    ) -> Result<Option<CurrentState>, crate::store::StoreError> {
        self.inner.load_current(name).await
    }
    async fn create_node(&self, desired: &DesiredState) -> Result<bool, crate::store::StoreError> {
        self.inner.create_node(desired).await
    }
    async fn load_role(&self, name: &str) -> Result<Option<Role>, crate::store::StoreError> {
        self.inner.load_role(name).await
    }
    fn roles_repo(&self) -> Option<&crate::store::local::LocalRepo> {
        self.inner.roles_repo()
    }
    async fn load_environment(&self, name: &str) -> Result<Environment, crate::store::StoreError> {
        self.inner.load_environment(name).await
    }
    async fn save_current(
        &self,
        loaded: &DesiredState,
        current: &CurrentState,
    ) -> Result<(), crate::store::StoreError> {
        self.inner.save_current(loaded, current).await
    }
    async fn search_nodes(
        &self,
        query: &str,
    ) -> Result<Option<Vec<String>>, crate::store::StoreError> {
        self.inner.search_nodes(query).await
    }
}

/// Classify a node and resolve it with the classification applied (docs/design.md §3 step 3 between steps
/// 2 and 5): the expansion sees the classes and environment, the attributes get the classifier layer,
/// and `view.desired` stays the desired state as loaded, so what the run saves never contains
/// classifier output.
pub async fn resolve_classified(
    store: Arc<dyn NodeStore>,
    cookbooks: &LocalRepo,
    sync: Option<&crate::cookbook::sync::CookbookSync>,
    name: &NodeName,
    classifier: &Path,
    timeout: Duration,
) -> Result<NodeView, ClassifyError> {
    let classification = classify(classifier, name.as_str(), timeout).await?;
    let overlay = Classified {
        inner: store,
        classification,
        loaded: Mutex::new(None),
    };
    let mut view = resolve::resolve_with(&overlay, cookbooks, sync, name)
        .await
        .map_err(Box::new)?;
    let a = attributes(&overlay.classification);
    if !a.is_empty() {
        view.attributes
            .push(Component::Normal, Source::Classifier, a);
    }
    if let Some(loaded) = overlay.loaded.lock().ok().and_then(|mut g| g.take()) {
        view.desired = loaded;
    }
    Ok(view)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Attrs {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn array_and_hash_classes() {
        let c =
            parse("---\nclasses:\n  - ntp\n  - netdev::vlans\nenvironment: production\n").unwrap();
        assert_eq!(
            c.classes,
            vec![
                ("ntp".into(), Attrs::new()),
                ("netdev::vlans".into(), Attrs::new())
            ]
        );
        assert_eq!(c.environment.as_deref(), Some("production"));

        let c = parse(
            "classes:\n  netdev::vlans:\n    vlans:\n      '100': {name: web}\n  ntp: ~\nparameters:\n  site: par1\n  netdev: {vlan_policy: merge}\n",
        )
        .unwrap();
        assert_eq!(c.classes.len(), 2);
        let a = attributes(&c);
        assert_eq!(
            Value::Object(a),
            json!({"site": "par1", "netdev": {"vlan_policy": "merge", "vlans": {"100": {"name": "web"}}}})
        );
    }

    #[test]
    fn bad_answers() {
        assert_eq!(parse(""), Err(ParseProblem::Empty));
        assert_eq!(parse("  \n"), Err(ParseProblem::Empty));
        assert_eq!(parse("---\n"), Err(ParseProblem::Empty));
        assert!(matches!(
            parse("classes: [a, b\n"),
            Err(ParseProblem::Yaml(_))
        ));
        assert!(matches!(parse("- a\n"), Err(ParseProblem::Invalid(_))));
        assert!(matches!(
            parse("classes: 3\n"),
            Err(ParseProblem::Invalid(_))
        ));
        assert!(matches!(
            parse("classes: ['bad class']\n"),
            Err(ParseProblem::Invalid(_))
        ));
        assert!(matches!(
            parse("environment: 'pr/od'\n"),
            Err(ParseProblem::Invalid(_))
        ));
        assert!(matches!(
            parse("parameters: [1]\n"),
            Err(ParseProblem::Invalid(_))
        ));
        assert!(matches!(
            parse("classes: {a: [1]}\n"),
            Err(ParseProblem::Invalid(_))
        ));
        assert_eq!(parse("classes: ['::ntp']\n").unwrap().classes[0].0, "ntp");
    }

    #[test]
    fn apply_is_for_this_run_only() {
        let mut d = DesiredState::new(NodeName::new("sw1").unwrap());
        d.run_list = netgw_models::runlist::RunList::parse(&["recipe[ntp]"]).unwrap();
        d.normal = obj(json!({"site": "ams1", "keep": true}));
        let mut attrs = AttributeSet::new();
        attrs.push(Component::Normal, Source::Node, d.normal.clone());
        let c =
            parse("classes: [ntp, 'netdev::vlans']\nparameters: {site: par1}\nenvironment: lab\n")
                .unwrap();
        apply(&c, &mut d, &mut attrs);
        let rl: Vec<String> = d.run_list.items().iter().map(|i| i.to_string()).collect();
        assert_eq!(
            rl,
            ["recipe[ntp]", "recipe[netdev::vlans]"],
            "appended, no duplicates"
        );
        assert_eq!(d.chef_environment, "lab");
        let merged = attrs.merged();
        assert_eq!(
            merged["site"], "par1",
            "classifier wins over the node's normal"
        );
        assert_eq!(merged["keep"], true);
        assert_eq!(d.normal["site"], "ams1", "desired normal untouched");
    }
}
