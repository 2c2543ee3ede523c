//! `netgw validate`: the repo and the selected nodes checked without contacting a device
//! (`crate::validate`), for people, as JSON, or as GitHub Actions annotations: workflow commands that
//! GitHub shows on the pull request's diff at the file and line, with no extra action or upload
//! (JUnit XML needs a third-party reporter to get there, and has no line).

use super::*;
use crate::validate::{Problem, Severity, Validation};

/// `netgw validate --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ValidateFormat {
    Human,
    Json,
    Github,
}

pub(super) fn validate_cmd(
    cli: &Cli,
    selection: &[String],
    source: &DeviceSource,
    format: ValidateFormat,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let repo = open_repo(cli)?;
    let v = if source.inventory.is_none() && source.topology.is_none() {
        let names = repo_selection(&repo, selection)?;
        crate::validate::validate(&repo, None, &names)
    } else {
        match load_inventory(cli, source) {
            Ok(inv) => {
                let names = select(&inv, selection)?;
                crate::validate::validate(&repo, Some(&inv), &names)
            }
            // A path that names nothing is a usage error, as for every command.
            Err(e) if names_nothing(source) => return Err(e),
            // The inventory is repo content too: a problem in the list, not a usage error.
            Err(e) => inventory_problem(source, e.message),
        }
    };
    match format {
        ValidateFormat::Json => writeln!(out, "{}", pretty(&json!(v)))?,
        ValidateFormat::Human => write!(out, "{}", human(&v))?,
        ValidateFormat::Github => write!(out, "{}", github(&v))?,
    }
    Ok(if v.errors() > 0 {
        Status::NodeFailed
    } else {
        Status::Ok
    })
}

/// Without an inventory, the selection picks among the repo's node files (names and globs; no groups).
fn repo_selection(repo: &LocalRepo, selection: &[String]) -> Result<Vec<String>, Failure> {
    let names = repo.node_names()?;
    let hosts: serde_json::Map<String, Value> =
        names.iter().map(|n| (n.to_string(), json!({}))).collect();
    let text = serde_json::to_string(&json!({ "hosts": hosts }))
        .map_err(|e| Failure::usage(format!("validate: {e}")))?;
    let nodes = repo.root().join("nodes");
    let inv = crate::inventory::Inventory::from_text(&nodes, &text)
        .map_err(|e| Failure::usage(e.to_string()))?;
    use crate::inventory::select::SelectError;
    crate::inventory::select::select(&inv, selection).map_err(|e| match e {
        SelectError::NoMatch {
            selection, term, ..
        } => Failure::usage(format!(
            "selection {selection:?}: term {term:?} matches no node file of {}{}",
            nodes.display(),
            repo.nearest_node(&term)
                .map(|n| format!("; did you mean node {n}?"))
                .unwrap_or_default()
        )),
        other => Failure::usage(other.to_string()),
    })
}

/// Whether `--inventory` or `--topology` names a file that does not exist (a Nautobot URL is not a file).
fn names_nothing(source: &DeviceSource) -> bool {
    source
        .inventory
        .as_ref()
        .or(source.topology.as_ref())
        .is_some_and(|p| !p.to_string_lossy().starts_with("nautobot+") && !p.exists())
}

fn inventory_problem(source: &DeviceSource, message: String) -> Validation {
    Validation {
        nodes: Vec::new(),
        problems: vec![Problem {
            severity: Severity::Error,
            node: None,
            file: source.inventory.clone().or_else(|| source.topology.clone()),
            line: None,
            path: None,
            message,
        }],
    }
}

fn location(p: &Problem) -> String {
    let mut s = p
        .file
        .as_ref()
        .map(|f| f.display().to_string())
        .unwrap_or_default();
    if let Some(l) = p.line {
        s.push_str(&format!(":{l}"));
    }
    if let Some(path) = &p.path {
        s.push_str(&format!(" ({path})"));
    }
    s
}

fn severity(p: &Problem) -> &'static str {
    match p.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn human(v: &Validation) -> String {
    let mut s = String::new();
    for p in &v.problems {
        // Most messages about a node already start with it.
        let node = match &p.node {
            Some(n) if !p.message.starts_with(&format!("node {n}:")) => format!("node {n}: "),
            _ => String::new(),
        };
        s.push_str(&format!(
            "{}: {}: {node}{}\n",
            location(p),
            severity(p),
            p.message
        ));
    }
    s + &verdict(v)
}

fn verdict(v: &Validation) -> String {
    let warnings = v.problems.len() - v.errors();
    format!(
        "{} node(s) checked: {} error(s), {warnings} warning(s)\n",
        v.nodes.len(),
        v.errors()
    )
}

/// GitHub's workflow commands (`::error file=F,line=L,title=T::MESSAGE`), escaped as its toolkit does.
fn github(v: &Validation) -> String {
    let data = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let property = |s: &str| data(s).replace(':', "%3A").replace(',', "%2C");
    let mut s = String::new();
    for p in &v.problems {
        let mut props = Vec::new();
        if let Some(f) = &p.file {
            props.push(format!("file={}", property(&f.display().to_string())));
        }
        if let Some(l) = p.line {
            props.push(format!("line={l}"));
        }
        let title = match &p.node {
            Some(n) => format!("netgw validate: node {n}"),
            None => "netgw validate".into(),
        };
        props.push(format!("title={}", property(&title)));
        let path = p
            .path
            .as_ref()
            .map(|x| format!(" ({x})"))
            .unwrap_or_default();
        let message = data(&format!("{}{path}", p.message));
        s.push_str(&format!(
            "::{} {}::{message}\n",
            severity(p),
            props.join(",")
        ));
    }
    s + &verdict(v)
}
