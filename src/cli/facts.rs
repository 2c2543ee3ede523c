//! `netgw facts NODE`: a device's facts as a run gathers them, saved as the node's automatic
//! attributes (as `ohai` feeds a node's `automatic` on every chef-client run).

use super::*;

pub(super) fn facts_cmd(
    cli: &Cli,
    name: &str,
    source: &DeviceSource,
    format: Format,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let inv = load_inventory(cli, source)?;
    let names = select(&inv, &[name.to_owned()])?;
    let node = node_name(&names[0])?;
    let target = inv.target(&names[0]).map_err(|e| Failure {
        status: Status::NodeFailed,
        message: e.to_string(),
    })?;
    let rt = runtime()?;
    let facts = rt
        .block_on(crate::facts::device_facts(&target))
        .map_err(|message| Failure {
            status: Status::NodeFailed,
            message,
        })?;
    let run_id = crate::clock::new_run_id();
    let automatic = crate::engine::automatic_attributes(&facts, target.platform.as_str(), &run_id);
    let saved = rt.block_on(save_facts(cli, &node, &run_id, automatic.clone()))?;
    match format {
        Format::Json => writeln!(out, "{}", pretty(&Value::Object(automatic)))?,
        Format::Human => {
            for (k, val) in &automatic {
                writeln!(out, "{k}: {}", compact(val))?;
            }
            if let Some(at) = saved {
                writeln!(out, "(saved as {node}'s automatic attributes: {at})")?;
            }
        }
    }
    Ok(Status::Ok)
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
