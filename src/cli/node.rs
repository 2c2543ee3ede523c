//! `netgw node show` and `netgw expand`: a node's merged attributes and run-list expansion, without
//! touching its device.

use super::*;

/// A node as `converge` loads it before contacting its device: with `--server`, the node, its roles
/// and environment from the Chef server and (with `--cookbooks server`, its default there) the
/// cookbook versions the server resolves, synchronized through the same cache; else the local repo.
pub(super) fn load_view(
    cli: &Cli,
    repo: &LocalRepo,
    name: &NodeName,
) -> Result<resolve::NodeView, Failure> {
    let Some(server) = chef_store(cli)? else {
        return resolve::resolve(repo, name).map_err(|e| with_node_hint(repo, name, e.into()));
    };
    let sync = cookbook_sync(cli, Some(&server))?;
    let rt = runtime()?;
    let view = rt.block_on(resolve::resolve_with(&server, repo, sync.as_deref(), name))?;
    if let Some(sync) = &sync {
        rt.block_on(sync.finish());
    }
    Ok(view)
}

pub(super) fn node_show(
    cli: &Cli,
    repo: &LocalRepo,
    name: &str,
    attribute: Option<&str>,
    format: Format,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let name = node_name(name)?;
    let path = match attribute {
        Some(a) => {
            Some(parse_dotted_path(a).map_err(|e| Failure::usage(format!("--attribute: {e}")))?)
        }
        None => None,
    };
    let view = load_view(cli, repo, &name)?;
    if let Some(path) = path {
        let Some(r) = view.attributes.resolve(&path) else {
            return Err(Failure {
                status: Status::NodeFailed,
                message: format!("node {name}: attribute {} is not set", path.join(".")),
            });
        };
        match format {
            Format::Json => {
                let v = json!({"path": r.path, "value": r.value, "level": r.level, "source": r.source,
                               "contributors": r.contributors});
                writeln!(out, "{}", pretty(&v))?;
            }
            Format::Human => {
                writeln!(out, "{} = {}", r.path, compact(&r.value))?;
                writeln!(out, "  level:  {}", r.level)?;
                writeln!(out, "  source: {}", r.source)?;
                if r.contributors.len() > 1 {
                    writeln!(out, "  also set by (highest first):")?;
                    for c in &r.contributors[1..] {
                        writeln!(
                            out,
                            "    {} from {}: {}",
                            c.level,
                            c.source,
                            compact(&c.value)
                        )?;
                    }
                }
            }
        }
        return Ok(Status::Ok);
    }
    let merged = Value::Object(view.attributes.merged());
    match format {
        Format::Json => {
            let mut v = json!({
                "name": name.as_str(),
                "desired": view.desired,
                "current": view.current,
                "merged": merged,
            });
            if !view.cookbooks.is_empty() {
                v["cookbooks"] = json!(view.cookbooks);
            }
            writeln!(out, "{}", pretty(&v))?;
        }
        Format::Human => {
            writeln!(out, "Node:        {name}")?;
            writeln!(out, "Environment: {}", view.desired.chef_environment)?;
            writeln!(
                out,
                "Run list:    {}",
                join_items(view.desired.run_list.items().iter().map(|i| i.to_string()))
            )?;
            writeln!(
                out,
                "Tags:        {}",
                join_items(view.desired.tags().into_iter())
            )?;
            writeln!(
                out,
                "Roles:       {}",
                join_items(view.expansion.roles.iter().cloned())
            )?;
            writeln!(
                out,
                "Recipes:     {}",
                join_items(view.expansion.recipes.iter().map(|r| r.name.clone()))
            )?;
            match &view.current {
                Some(_) => writeln!(
                    out,
                    "Current:     saved ({})",
                    repo.current_read_path(&name).display()
                )?,
                None => writeln!(out, "Current:     none saved yet")?,
            }
            if !view.cookbooks.is_empty() {
                writeln!(
                    out,
                    "Cookbooks:   {} (from the Chef server)",
                    view.cookbooks.join(", ")
                )?;
            }
            writeln!(out, "Attributes (merged):")?;
            for line in pretty(&merged).lines() {
                writeln!(out, "  {line}")?;
            }
        }
    }
    Ok(Status::Ok)
}

/// `expand` with `--server`: the node, its roles and environment from the server, and the cookbook
/// versions the server resolves for the expanded run-list (as `converge` synchronizes them).
pub(super) fn expand_from_server(
    cli: &Cli,
    repo: &LocalRepo,
    name: &str,
    format: Format,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let name = node_name(name)?;
    let view = load_view(cli, repo, &name)?;
    let recipes = recipe_items(&view.expansion);
    match format {
        Format::Json => {
            let v = json!({
                "environment": view.expansion.environment,
                "run_list": view.desired.run_list,
                "recipes": recipes,
                "roles": view.expansion.roles,
                "missing_roles": view.expansion.missing_roles,
                "cookbooks": view.cookbooks,
            });
            writeln!(out, "{}", pretty(&v))?;
        }
        Format::Human => {
            writeln!(out, "Node:        {name}")?;
            writeln!(out, "Environment: {}", view.expansion.environment)?;
            writeln!(
                out,
                "Roles:       {}",
                join_items(view.expansion.roles.iter().cloned())
            )?;
            writeln!(out, "Recipes:     {}", join_items(recipes.into_iter()))?;
            writeln!(
                out,
                "Cookbooks:   {}",
                join_items(view.cookbooks.iter().cloned())
            )?;
        }
    }
    Ok(Status::Ok)
}

/// The expanded recipes as `expand` lists them (`NAME@VERSION` where the run-list pins one).
pub(super) fn recipe_items(expansion: &netgw_models::expand::Expansion) -> Vec<String> {
    expansion
        .recipes
        .iter()
        .map(|r| match &r.version {
            Some(v) => format!("{}@{v}", r.name),
            None => r.name.clone(),
        })
        .collect()
}

pub(super) fn expand_cmd(
    repo: &LocalRepo,
    name: &str,
    format: Format,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let name = node_name(name)?;
    let desired = repo
        .load_desired(&name)
        .map_err(|e| with_node_hint(repo, &name, e.into()))?;
    let (_env, expansion) = resolve::expand_node(repo, &desired)?;
    let status = if expansion.missing_roles.is_empty() {
        Status::Ok
    } else {
        Status::NodeFailed
    };
    match format {
        Format::Json => {
            let v = json!({
                "environment": expansion.environment,
                "run_list": desired.run_list,
                "recipes": recipe_items(&expansion),
                "roles": expansion.roles,
                "missing_roles": expansion.missing_roles,
                "attribute_layers": expansion.role_layers.iter().map(|l| json!({
                    "role": l.role,
                    "default_attributes": l.default_attributes,
                    "override_attributes": l.override_attributes,
                })).collect::<Vec<_>>(),
            });
            writeln!(out, "{}", pretty(&v))?;
        }
        Format::Human => {
            writeln!(out, "Node:        {name}")?;
            writeln!(out, "Environment: {}", expansion.environment)?;
            writeln!(
                out,
                "Run list:    {}",
                join_items(desired.run_list.items().iter().map(|i| i.to_string()))
            )?;
            writeln!(
                out,
                "Roles:       {}",
                join_items(expansion.roles.iter().cloned())
            )?;
            writeln!(out, "Recipes:")?;
            for r in &expansion.recipes {
                match &r.version {
                    Some(v) => writeln!(out, "  {}@{v}", r.name)?,
                    None => writeln!(out, "  {}", r.name)?,
                }
            }
            writeln!(
                out,
                "Attribute layers (applied in this order, later wins within a level):"
            )?;
            writeln!(
                out,
                "  env_default / env_override: environment {}",
                expansion.environment
            )?;
            for l in &expansion.role_layers {
                writeln!(
                    out,
                    "  role_default / role_override: role {} ({} / {} keys)",
                    l.role,
                    l.default_attributes.len(),
                    l.override_attributes.len()
                )?;
            }
        }
    }
    if status != Status::Ok {
        let names: Vec<String> = expansion
            .missing_roles
            .iter()
            .map(|m| format!("{} (included by '{}')", m.name, m.included_by))
            .collect();
        return Err(Failure {
            status,
            message: format!(
                "node {name}: {} missing role(s): {}",
                names.len(),
                names.join(", ")
            ),
        });
    }
    Ok(status)
}

/// A node the repo has no file for: the error names the nearest node it has.
fn with_node_hint(repo: &LocalRepo, name: &NodeName, mut f: Failure) -> Failure {
    if !repo.desired_path(name).exists()
        && let Some(n) = repo.nearest_node(name.as_str())
    {
        f.message.push_str(&format!("; did you mean node {n}?"));
    }
    f
}
