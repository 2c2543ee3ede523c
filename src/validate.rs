//! `netgw validate`: every problem a run would meet before it contacts a device, for the gate a team
//! puts before merging a change to the repo. It reads what a run reads (the inventory, each selected
//! node with its roles, environment and cookbooks, every role and environment file of the repo),
//! compiles every resource with the facts the last run saved, and lists each problem with its file,
//! the line where it can be found, and the path inside the file. Nothing is written; no device,
//! server or classifier is contacted.

use crate::inventory::{Inventory, InventoryError};
use crate::resolve::{self, ResolveError};
use crate::store::StoreError;
use crate::store::local::LocalRepo;
use netgw_models::NodeName;
use netgw_models::attributes::{Component, Source};
use netgw_models::compile::{CompileError, compile};
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One problem: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    pub severity: Severity,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The path inside the file (`default_attributes.netdev.vlans.5000`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub message: String,
}

#[derive(Debug, Default, Serialize)]
pub struct Validation {
    /// The nodes checked.
    pub nodes: Vec<String>,
    pub problems: Vec<Problem>,
}

impl Validation {
    pub fn errors(&self) -> usize {
        self.problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .count()
    }

    fn push(
        &mut self,
        severity: Severity,
        node: Option<&str>,
        file: Option<PathBuf>,
        message: String,
    ) {
        // A store error about one key of a file says `FILE: field `KEY``: its line is where the key
        // is written.
        let field = file.as_deref().and_then(|f| {
            let prefix = format!("{}: field `", f.display());
            let (_, rest) = message.split_once(prefix.as_str())?;
            rest.split_once('`').map(|(key, _)| key.to_owned())
        });
        let line = file.as_deref().and_then(|f| {
            line_in_message(&message, f).or_else(|| {
                let keys: Vec<String> = field.as_deref()?.split('.').map(str::to_owned).collect();
                line_of(f, &keys)
            })
        });
        self.problems.push(Problem {
            severity,
            node: node.map(str::to_owned),
            file,
            line,
            path: field,
            message,
        });
    }
}

/// The `netdev` keys the built-in recipes read; another key under `netdev` is likely a typo.
pub const NETDEV_KEYS: [&str; 8] = [
    "vlans",
    "links",
    "lags",
    "l3_interfaces",
    "vlan_policy",
    "link_policy",
    "lag_policy",
    "l3_interface_policy",
];

/// Check the repo's roles and environments, then each of `names` (with `inv`, how it is reached).
pub fn validate(repo: &LocalRepo, inv: Option<&Inventory>, names: &[String]) -> Validation {
    let mut v = Validation::default();
    repo_files(repo, &mut v);
    for name in names {
        v.nodes.push(name.clone());
        if let Some(inv) = inv {
            match inv.target(name) {
                Ok(t) => {
                    if let Err(why) = crate::inventory::driver_check(&t) {
                        v.push(Severity::Error, Some(name), Some(inv.source.clone()), why);
                    }
                }
                Err(InventoryError::NotDriven { .. }) => {}
                Err(e) => v.push(
                    Severity::Error,
                    Some(name),
                    Some(inv.source.clone()),
                    e.to_string(),
                ),
            }
        }
        node(repo, name, &mut v);
    }
    v.problems = unique(std::mem::take(&mut v.problems));
    v
}

/// Each problem once: a bad role file is found by the repo check and again by every node using it.
fn unique(problems: Vec<Problem>) -> Vec<Problem> {
    let mut seen = std::collections::HashSet::new();
    problems
        .into_iter()
        .filter(|p| {
            let message = match &p.node {
                Some(n) => p
                    .message
                    .strip_prefix(&format!("node {n}: "))
                    .unwrap_or(&p.message),
                None => &p.message,
            };
            seen.insert((p.file.clone(), message.to_owned()))
        })
        .collect()
}

/// Every role and environment file, used by a selected node or not: a typo there waits for the
/// next node that uses it.
fn repo_files(repo: &LocalRepo, v: &mut Validation) {
    match repo.role_names() {
        Ok(roles) => {
            for r in roles {
                if let Err(e) = resolve::repo_role(repo, &r) {
                    v.push(Severity::Error, None, resolve_file(&e), e.to_string());
                }
            }
        }
        Err(e) => v.push(Severity::Error, None, store_file(&e), e.to_string()),
    }
    for env in repo.environment_names().unwrap_or_default() {
        if let Err(e) = resolve::repo_environment(repo, &env) {
            v.push(Severity::Error, None, resolve_file(&e), e.to_string());
        }
    }
}

fn node(repo: &LocalRepo, name: &str, v: &mut Validation) {
    let node_name = match NodeName::new(name) {
        Ok(n) => n,
        Err(e) => return v.push(Severity::Error, Some(name), None, e.to_string()),
    };
    let view = match resolve::resolve(repo, &node_name) {
        Ok(view) => view,
        Err(e) if e.is_missing_node(&node_name) => {
            let file = repo.desired_path(&node_name);
            let hint = repo
                .nearest_node(name)
                .map(|n| format!("; did you mean node {n}?"))
                .unwrap_or_default();
            let msg = format!(
                "no node file {}: a converge creates it and the device gets no resources{hint}",
                file.display()
            );
            return v.push(Severity::Warning, Some(name), Some(file), msg);
        }
        Err(ResolveError::Store(StoreError::NotFound {
            kind: "environment",
            name: env,
            ..
        })) => return missing_environment(repo, &node_name, &env, v),
        Err(e) => {
            let file = resolve_file(&e).or_else(|| Some(repo.desired_path(&node_name)));
            return v.push(Severity::Error, Some(name), file, e.to_string());
        }
    };
    if view.desired.run_list.is_empty() && view.policy.is_none() {
        let msg = "the run-list is empty: a converge manages nothing on this device".to_owned();
        v.push(
            Severity::Warning,
            Some(name),
            Some(repo.desired_path(&node_name)),
            msg,
        );
    }
    let merged = view.attributes.merged();
    for e in &compile(&merged, &view.recipes).errors {
        v.problems.push(compile_problem(repo, &view, e));
    }
    unread_netdev_problems(repo, &view, &merged, v);
}

/// A node naming an environment the repo lacks: the error is the node file's `chef_environment`
/// (where a pull request's diff shows it), with the nearest environment the repo has.
fn missing_environment(repo: &LocalRepo, node: &NodeName, env: &str, v: &mut Validation) {
    let names = repo.environment_names().unwrap_or_default();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let hint = crate::inventory::nearest(env, &names)
        .map(|n| format!("; did you mean {n}?"))
        .unwrap_or_default();
    let file = repo.desired_path(node);
    let path = vec!["chef_environment".to_owned()];
    let missing = repo.root().join("environments").join(format!("{env}.json"));
    let missing = format!("{} nor .rb", missing.display());
    v.problems.push(Problem {
        severity: Severity::Error,
        node: Some(node.to_string()),
        line: line_of(&file, &path),
        path: Some(path.join(".")),
        message: format!("environment {env:?} not found (no {missing}){hint}"),
        file: Some(file),
    });
}

/// A compile error with the file that set the attribute it is about, and the path inside it.
fn compile_problem(repo: &LocalRepo, view: &resolve::NodeView, e: &CompileError) -> Problem {
    let message = format!("{} {}: {}", e.recipe, e.resource, e.message);
    let mut p = Problem {
        severity: Severity::Error,
        node: Some(view.name.to_string()),
        file: None,
        line: None,
        path: None,
        message,
    };
    if let Some(attr) = resource_attribute(&e.resource)
        && let Some((file, path)) = origin(repo, view, &attr)
    {
        p.line = line_of(&file, &path);
        p.path = Some(path.join("."));
        p.file = Some(file);
    }
    p
}

/// Where a built-in recipe's resource (`vlan[10]`, `link[Et1]`) was declared, for a run's report:
/// ` (set in FILE at PATH)`, or nothing when no repo file set it. Reads no file (a run calls it on
/// its async threads).
pub fn resource_note(repo: &LocalRepo, view: &resolve::NodeView, resource: &str) -> String {
    resource_attribute(resource)
        .map(|attr| attribute_note(repo, view, &attr))
        .unwrap_or_default()
}

/// Where the attribute at `attr` was set: ` (set in FILE at PATH)`, or nothing. Reads no file.
pub fn attribute_note(repo: &LocalRepo, view: &resolve::NodeView, attr: &[String]) -> String {
    origin(repo, view, attr)
        .map(|(file, path)| format!(" (set in {} at {})", file.display(), path.join(".")))
        .unwrap_or_default()
}

/// The attribute path a built-in recipe's resource was compiled from: `vlan[10]` is
/// `netdev.vlans.10`, `link[Et1]` `netdev.links.Et1`, `netdev.vlan_policy` itself.
fn resource_attribute(resource: &str) -> Option<Vec<String>> {
    let (kind, key) = resource.strip_suffix(']')?.split_once('[')?;
    let map = match kind {
        "vlan" => "vlans",
        "link" => "links",
        "lag" => "lags",
        "l3_interface" => "l3_interfaces",
        _ => return None,
    };
    Some(vec!["netdev".into(), map.into(), key.into()])
}

/// The file whose value won at `attr` (the highest-precedence layer that sets it), and the path of
/// that value inside the file.
fn origin(
    repo: &LocalRepo,
    view: &resolve::NodeView,
    attr: &[String],
) -> Option<(PathBuf, Vec<String>)> {
    let (layer, _) = view.attributes.contributing(attr).into_iter().next()?;
    let root = repo.root();
    let (file, prefix): (PathBuf, Option<String>) = match &layer.source {
        Source::Node => (
            repo.desired_path(&view.name),
            Some(layer.component.as_str().to_owned()),
        ),
        Source::Role { role } => (
            root.join("roles").join(format!("{role}.json")),
            Some(role_key(layer.component)),
        ),
        Source::Policy { policy, revision } => (
            root.join("policies")
                .join(format!("{policy}-{revision}.json")),
            Some(role_key(layer.component)),
        ),
        Source::Environment { environment } => (
            root.join("environments")
                .join(format!("{environment}.json")),
            Some(role_key(layer.component)),
        ),
        Source::AttributeFile { cookbook, file } => (
            root.join("cookbooks")
                .join(cookbook)
                .join("attributes")
                .join(file),
            None,
        ),
        _ => return None,
    };
    let path = prefix.into_iter().chain(attr.iter().cloned()).collect();
    Some((file, path))
}

fn role_key(c: Component) -> String {
    match c {
        Component::RoleOverride | Component::EnvOverride => "override_attributes".into(),
        _ => "default_attributes".into(),
    }
}

/// Keys under `netdev` no built-in recipe reads, each with why: `attribute netdev.vlan is read by no
/// built-in recipe; did you mean netdev.vlans?`. A repo recipe may read such a key, so it is a warning,
/// given by `validate` and by every run.
pub fn unread_netdev_keys(merged: &netgw_models::node::Attrs) -> Vec<(String, String)> {
    let Some(netdev) = merged.get("netdev").and_then(Value::as_object) else {
        return Vec::new();
    };
    netdev
        .keys()
        .filter(|k| !NETDEV_KEYS.contains(&k.as_str()))
        .map(|key| {
            let hint = crate::inventory::nearest(key, &NETDEV_KEYS)
                .map(|n| format!("; did you mean netdev.{n}?"))
                .unwrap_or_default();
            let why = format!("attribute netdev.{key} is read by no built-in recipe{hint}");
            (key.clone(), why)
        })
        .collect()
}

/// [`unread_netdev_keys`] as warnings naming the file, line and path that set each.
fn unread_netdev_problems(
    repo: &LocalRepo,
    view: &resolve::NodeView,
    merged: &netgw_models::node::Attrs,
    v: &mut Validation,
) {
    for (key, message) in unread_netdev_keys(merged) {
        let attr = vec!["netdev".to_owned(), key];
        let (file, path) = origin(repo, view, &attr).unzip();
        v.problems.push(Problem {
            severity: Severity::Warning,
            node: Some(view.name.to_string()),
            line: file
                .as_deref()
                .zip(path.as_deref())
                .and_then(|(f, p)| line_of(f, p)),
            path: path.map(|p| p.join(".")),
            file,
            message,
        });
    }
}

fn store_file(e: &StoreError) -> Option<PathBuf> {
    match e {
        StoreError::Repo { path, .. }
        | StoreError::Io { path, .. }
        | StoreError::Parse { path, .. }
        | StoreError::NotFound { path, .. }
        | StoreError::Model { path, .. } => Some(path.clone()),
        StoreError::Unsafe(u) => Some(u.path.clone()),
        StoreError::Chef(_) => None,
    }
}

fn resolve_file(e: &ResolveError) -> Option<PathBuf> {
    match e {
        ResolveError::Store(s) => store_file(s),
        ResolveError::RubyFile(c) => match &**c {
            crate::cookbook::CookbookError::Ruby { path, .. }
            | crate::cookbook::CookbookError::Syntax { path, .. } => Some(path.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// The line a message about `file` gives: `FILE:N:` (the Ruby evaluator's) or `at line N` (a
/// JSON or YAML parser's).
fn line_in_message(message: &str, file: &Path) -> Option<usize> {
    let text = message
        .split_once(&*file.to_string_lossy())
        .map_or(message, |(_, rest)| rest);
    if let Some(n) = text
        .strip_prefix(':')
        .and_then(|t| t.split(':').next())
        .and_then(|n| n.parse().ok())
    {
        return Some(n);
    }
    let at = text.find("line ")?;
    text[at + 5..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The line of a value in a JSON or YAML file: each key of `path` searched after the one before it
/// (a key written once per nesting level, as repo files are, is found exactly).
fn line_of(file: &Path, path: &[String]) -> Option<usize> {
    let text = std::fs::read_to_string(file).ok()?;
    let mut at = 0;
    for key in path {
        let quoted = format!("\"{key}\"");
        let found = [quoted.as_str(), &format!("{key}:"), &format!("'{key}'")]
            .iter()
            .filter_map(|k| text[at..].find(k))
            .min()?;
        at += found + 1;
    }
    Some(text[..at].matches('\n').count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(files: &[(&str, &str)]) -> (tempfile::TempDir, LocalRepo) {
        let dir = tempfile::tempdir().unwrap();
        for (rel, body) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        let repo = LocalRepo::open(dir.path()).unwrap();
        (dir, repo)
    }

    #[test]
    fn a_bad_value_is_traced_to_the_role_that_set_it() {
        let role = "{\n  \"name\": \"base\",\n  \"default_attributes\": {\n    \"netdev\": {\n      \"vlans\": {\n        \"5000\": {\"name\": \"big\"}\n      }\n    }\n  }\n}\n";
        let (_d, repo) = repo(&[
            ("roles/base.json", role),
            (
                "nodes/sw1.json",
                r#"{"name":"sw1","run_list":["role[base]","recipe[netdev::vlans]"]}"#,
            ),
        ]);
        let v = validate(&repo, None, &["sw1".into()]);
        assert_eq!(v.errors(), 1, "{v:?}");
        let p = &v.problems[0];
        assert!(
            p.file.as_ref().unwrap().ends_with("roles/base.json"),
            "{p:?}"
        );
        assert_eq!(
            p.path.as_deref(),
            Some("default_attributes.netdev.vlans.5000")
        );
        assert_eq!(p.line, Some(6));
        assert!(p.message.contains("vlan[5000]"), "{p:?}");
    }

    #[test]
    fn typos_in_files_and_netdev_keys_are_reported() {
        let (_d, repo) = repo(&[
            (
                "roles/core.json",
                r#"{"name":"core","defaults_attributes":{}}"#,
            ),
            (
                "environments/prod.json",
                r#"{"name":"prod","cookbook_version":{}}"#,
            ),
            (
                "nodes/sw1.json",
                r#"{"name":"sw1","run_list":["recipe[netdev::vlans]"],"normal":{"netdev":{"vlan":{}}}}"#,
            ),
            ("nodes/sw2.json", r#"{"name":"sw2","runlist":[]}"#),
        ]);
        let v = validate(&repo, None, &["sw1".into(), "sw2".into(), "sw3".into()]);
        let text: Vec<String> = v
            .problems
            .iter()
            .map(|p| format!("{:?} {:?} {}", p.severity, p.file, p.message))
            .collect();
        let has = |s: &str| text.iter().any(|t| t.contains(s));
        assert!(has("roles/core.json") && has("did you mean"), "{text:#?}");
        assert!(has("environments/prod.json"), "{text:#?}");
        assert!(
            has("netdev.vlan is read by no built-in recipe; did you mean netdev.vlans?"),
            "{text:#?}"
        );
        assert!(has("nodes/sw2.json"), "{text:#?}");
        assert!(has("no node file"), "{text:#?}");
        assert_eq!(v.errors(), 3, "{text:#?}");
    }
}
