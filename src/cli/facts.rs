//! `netgw facts NODE`: a device's facts as a run gathers them, saved as the node's automatic
//! attributes (as `ohai` feeds a node's `automatic` on every chef-client run).

use super::*;

pub(super) fn facts_cmd(
    cli: &Cli,
    selection: &[String],
    source: &DeviceSource,
    format: Format,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let inv = load_inventory(cli, source)?;
    let names = select(&inv, selection)?;
    let rt = runtime()?;
    if let [one] = names.as_slice() {
        let (automatic, saved) = host_facts(cli, &inv, &rt, one)?;
        write_facts(out, format, one, &automatic, saved.as_deref(), false)?;
        return Ok(Status::Ok);
    }
    // Several hosts, one after another: a device that does not answer is reported and the others
    // are still asked; JSON is one object keyed by host (`{"error": ...}` for a failed one).
    let mut status = Status::Ok;
    let mut all = serde_json::Map::new();
    for name in &names {
        match host_facts(cli, &inv, &rt, name) {
            Ok((automatic, saved)) => match format {
                Format::Json => {
                    all.insert(name.clone(), Value::Object(automatic));
                }
                Format::Human => {
                    write_facts(out, format, name, &automatic, saved.as_deref(), true)?
                }
            },
            Err(e) if e.status == Status::NodeFailed => {
                status = Status::NodeFailed;
                match format {
                    Format::Json => {
                        all.insert(name.clone(), json!({ "error": e.message }));
                    }
                    Format::Human => writeln!(out, "{name}: FAILED: {}", e.message)?,
                }
            }
            Err(e) => return Err(e),
        }
    }
    if format == Format::Json {
        writeln!(out, "{}", pretty(&Value::Object(all)))?;
    }
    Ok(status)
}

/// One host's facts, gathered and saved: the automatic attributes, and where they were saved.
fn host_facts(
    cli: &Cli,
    inv: &Inventory,
    rt: &tokio::runtime::Runtime,
    name: &str,
) -> Result<(netgw_models::node::Attrs, Option<String>), Failure> {
    let node = node_name(name)?;
    let failed = |message: String| Failure {
        status: Status::NodeFailed,
        message,
    };
    let target = inv.target(name).map_err(|e| failed(e.to_string()))?;
    let facts = rt
        .block_on(crate::facts::device_facts(&target))
        .map_err(|e| failed(e.to_string()))?;
    let run_id = crate::clock::new_run_id();
    let automatic = crate::engine::automatic_attributes(&facts, target.platform.as_str(), &run_id);
    let saved = rt.block_on(save_facts(cli, &node, &run_id, automatic.clone()))?;
    Ok((automatic, saved))
}

fn write_facts(
    out: &mut dyn Write,
    format: Format,
    node: &str,
    automatic: &netgw_models::node::Attrs,
    saved: Option<&str>,
    several: bool,
) -> Result<(), Failure> {
    if format == Format::Json {
        writeln!(out, "{}", pretty(&Value::Object(automatic.clone())))?;
        return Ok(());
    }
    let indent = if several {
        writeln!(out, "{node}:")?;
        "  "
    } else {
        ""
    };
    for (k, val) in automatic {
        writeln!(out, "{indent}{k}: {}", compact(val))?;
    }
    if let Some(at) = saved {
        writeln!(
            out,
            "{indent}(saved as {node}'s automatic attributes: {at})"
        )?;
    }
    Ok(())
}

/// Save `automatic` as the node's automatic attributes, keeping the rest of its current state, under
/// the node's run lock (a converge of the node saves its own facts meanwhile). Where it was saved;
/// `None`, with a warning saying why, when there is no repo to save for.
async fn save_facts(
    cli: &Cli,
    node: &NodeName,
    run_id: &str,
    automatic: netgw_models::node::Attrs,
) -> Result<Option<String>, Failure> {
    let repo = match open_repo(cli) {
        Ok(r) => r,
        Err(e) if cli.server.is_none() => {
            tracing::warn!("facts not saved: {}", e.message);
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let store: Arc<dyn crate::store::NodeStore> = match chef_store(cli)? {
        Some(server) => Arc::new(server),
        None => Arc::new(repo.clone()),
    };
    let settings = crate::coordination::Settings {
        state_dir: cli.state_dir.clone(),
        ..Default::default()
    };
    let failed = |message: String| Failure {
        status: Status::NodeFailed,
        message,
    };
    crate::state::check_state(&settings.state_root(), repo.root(), None)
        .map_err(|e| failed(e.to_string()))?;
    let coordination = crate::coordination::open(&settings, repo.root());
    let _lock = coordination
        .lock(node, run_id, std::time::Duration::from_secs(30), None)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let desired = store
        .load_desired(node)
        .await?
        .unwrap_or_else(|| netgw_models::DesiredState::new(node.clone()));
    let mut current = store
        .load_current(node)
        .await?
        .unwrap_or_else(|| netgw_models::CurrentState::new(node.clone()));
    current.automatic = automatic;
    store.save_current(&desired, &current).await?;
    Ok(Some(match cli.server {
        Some(_) => store.describe(node),
        None => repo.current_path(node).display().to_string(),
    }))
}
