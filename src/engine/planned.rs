//! Step 8 of a node run (observe and plan), with the plan file's two ends: a why-run with
//! `--plan-out` records each node's plan ([`NodePlan`]), and `converge --plan FILE` applies the
//! recorded plan instead of computing one: the device is read, and when a value the plan depends on
//! moved the node is refused naming it (`netgw_models::plan_file`).

use super::{EngineOptions, StepResult, Steps, drv, record_plan};
use crate::error::EngineError;
use crate::report::ResourceStatus;
use netgw_drivers::driver::{Driver, DriverError};
use netgw_drivers::target::DeviceTarget;
use netgw_models::compile::Compiled;
use netgw_models::plan::Plan;
use netgw_models::plan::l3::L3Interface;
use netgw_models::plan::lag::Lag;
use netgw_models::plan_file::{
    FORMAT, FORMAT_VERSION, NodePlan, PlanFile, Snapshot, moved, plan_compiled,
};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Everything the planner reads of the device: VLANs and links, and aggregates and routed
/// interfaces where `compiled` declares some.
pub(crate) async fn observe_all(
    driver: &mut dyn Driver,
    compiled: &Compiled,
) -> Result<Snapshot, DriverError> {
    let observed = driver.observe().await?;
    let mut s = Snapshot {
        vlans: observed.vlans,
        links: observed.links,
        ..Snapshot::default()
    };
    if !(compiled.lags.is_empty() && compiled.l3.is_empty()) {
        let more = driver.observe_lag_l3().await?;
        s.lags = more.lags;
        s.l3 = more.l3;
    }
    Ok(s)
}

/// `sha256:HEX` of the observed resources as JSON.
pub fn digest(s: &Snapshot) -> String {
    let bytes = serde_json::to_vec(s).unwrap_or_default();
    format!(
        "sha256:{}",
        data_encoding::HEXLOWER.encode(&Sha256::digest(&bytes)[..])
    )
}

/// The device's address as a plan records it: `host`, or `host:port` when the inventory sets one.
pub fn address(target: &DeviceTarget) -> String {
    match target.port {
        Some(p) => format!("{}:{p}", target.host),
        None => target.host.clone(),
    }
}

/// The aggregates and routed interfaces the planner read (where the node declares some).
pub(crate) type ReadLagL3 = Option<(Vec<Lag>, Vec<L3Interface>)>;

/// Step 8: the node's plan, computed from the device (recorded in the report with `--plan-out`),
/// or with a plan file the one it recorded for this node. A plan that cannot be applied whole fails
/// the node before anything is staged. Also what it read of aggregates and routed interfaces, for
/// the node's facts.
/// `origin` says where a resource was declared (` (set in FILE at PATH)`), for the error of one that
/// cannot be planned.
pub(crate) async fn plan_step(
    target: &DeviceTarget,
    compiled: Compiled,
    driver: &mut dyn Driver,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
    origin: &(dyn Fn(&str) -> String + Send + Sync),
) -> StepResult<(Compiled, Plan, ReadLagL3)> {
    if let Some(file) = &opts.plan {
        let Some(node) = file.nodes.get(&target.name) else {
            return Err(EngineError::Config(format!(
                "{} is not in the plan; nothing was changed",
                target.name
            )));
        };
        let the_plan = recorded(target, &compiled, node, driver, steps).await?;
        steps.mark("plan");
        return Ok((node.desired.clone(), the_plan, None));
    }
    let observed = observe_all(driver, &compiled).await.map_err(drv)?;
    let read = (!(compiled.lags.is_empty() && compiled.l3.is_empty()))
        .then(|| (observed.lags.clone(), observed.l3.clone()));
    let the_plan = plan_compiled(&compiled, &observed, &driver.plan_rules());
    steps.mark("plan");
    let failures: Vec<String> = the_plan
        .failures()
        .map(|f| {
            let resource = f.resource.to_string();
            let error = f.error.as_deref().unwrap_or_default();
            format!("{resource}: {error}{}", origin(&resource))
        })
        .collect();
    if !failures.is_empty() {
        record_plan(
            steps.report,
            &compiled,
            &the_plan,
            ResourceStatus::Skipped,
            0.0,
        );
        return Err(EngineError::Config(format!(
            "cannot plan {}; nothing was changed",
            failures.join("; ")
        )));
    }
    if opts.plan_out && opts.why_run && !opts.compare_only {
        let digest = digest(&observed);
        let addr = address(target);
        steps.report.plan = Some(NodePlan::new(
            (target.platform.as_str(), &addr),
            &compiled,
            &the_plan,
            observed,
            digest,
        ));
    }
    Ok((compiled, the_plan, read))
}

/// The plan `node` recorded, once the device is shown to hold every value it depends on; refused,
/// its resources are reported skipped.
async fn recorded(
    target: &DeviceTarget,
    compiled: &Compiled,
    node: &NodePlan,
    driver: &mut dyn Driver,
    steps: &mut Steps<'_>,
) -> StepResult<Plan> {
    let the_plan = node.rebuild(&driver.plan_rules()).map_err(|e| {
        EngineError::Config(format!(
            "the plan for {} cannot be applied: {e}; nothing was changed",
            target.name
        ))
    })?;
    let now = observe_all(driver, &node.desired).await.map_err(drv)?;
    let moved = moved(&node.observed.depends_on, &node.desired, &now);
    if !moved.is_empty() {
        record_plan(
            steps.report,
            &node.desired,
            &the_plan,
            ResourceStatus::Skipped,
            0.0,
        );
        let what: Vec<String> = moved.iter().map(ToString::to_string).collect();
        return Err(EngineError::Config(format!(
            "refused: the device changed since the plan was made: {}; nothing was changed (plan again)",
            what.join("; ")
        )));
    }
    let now_digest = digest(&now);
    if now_digest != node.observed.digest {
        steps.report.warnings.push(format!(
            "the device's observed state differs from the plan's ({} then, {now_digest} now) only in \
             resources the plan does not depend on; the plan was applied",
            node.observed.digest
        ));
    }
    if serde_json::to_value(compiled).ok() != serde_json::to_value(&node.desired).ok() {
        steps.report.warnings.push(format!(
            "the repo's desired state for {} is no longer the one the plan was made for; the plan \
             was applied as reviewed (converge again, or plan again, for the repo's)",
            target.name
        ));
    }
    Ok(the_plan)
}

/// A plan file that cannot be read, or not by this netgw.
#[derive(Debug, Error)]
#[error("plan file {}: {field}: {message}", path.display())]
pub struct PlanFileError {
    pub path: PathBuf,
    /// The field at fault (`format_version`, `nodes.sw1.observed.digest`), or `(file)`.
    pub field: String,
    pub message: String,
}

/// Read a plan file: its format and version first (a newer version is refused as such, not as
/// unknown fields), then the whole plan, an error naming the field at fault.
pub fn load(path: &Path) -> Result<PlanFile, PlanFileError> {
    let text = std::fs::read_to_string(path).map_err(|e| PlanFileError {
        path: path.to_owned(),
        field: "(file)".into(),
        message: e.to_string(),
    })?;
    parse(&text, path)
}

/// [`load`] of a plan already read (`path`: what errors call it).
pub fn parse(text: &str, path: &Path) -> Result<PlanFile, PlanFileError> {
    let err = |field: &str, message: String| PlanFileError {
        path: path.to_owned(),
        field: field.into(),
        message,
    };
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| err("(file)", format!("not JSON: {e}")))?;
    if value.get("format").and_then(|v| v.as_str()) != Some(FORMAT) {
        return Err(err(
            "format",
            format!("expected {FORMAT:?} (a file `converge --why-run --plan-out` wrote)"),
        ));
    }
    match value.get("format_version").and_then(|v| v.as_u64()) {
        None => {
            return Err(err(
                "format_version",
                "missing or not a whole number".into(),
            ));
        }
        Some(v) if v > u64::from(FORMAT_VERSION) => {
            return Err(err(
                "format_version",
                format!(
                    "{v} is newer than this netgw reads ({FORMAT_VERSION}); apply it with the netgw \
                     that wrote it, or plan again"
                ),
            ));
        }
        Some(_) => {}
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        err(&field, e.into_inner().to_string())
    })
}

/// Write a plan file (pretty JSON), through a temporary file beside it so a reader never sees half.
pub fn write(path: &Path, plan: &PlanFile) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(plan).map_err(std::io::Error::other)?;
    text.push('\n');
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// The nodes of `plan`, each checked against the inventory: a plan made for another inventory (a
/// node it lacks, or one now at another address or of another platform) is refused whole, the
/// error naming the field (`nodes.sw1.address`) and both values.
pub fn inventory_nodes(
    plan: &PlanFile,
    inv: &crate::inventory::Inventory,
) -> Result<Vec<String>, String> {
    let refuse = |field: String, why: String| {
        format!(
            "{field}: {why}; the plan was made for another inventory (plan again with this one); \
             nothing was changed"
        )
    };
    let mut names = Vec::new();
    for (name, node) in &plan.nodes {
        if !inv.hosts.contains_key(name) {
            let why = "the inventory has no such host".into();
            return Err(refuse(format!("nodes.{name}"), why));
        }
        let target = inv.target(name).map_err(|e| e.to_string())?;
        let (platform, address) = (target.platform.as_str(), address(&target));
        if node.platform != platform {
            let why = format!(
                "planned for {}, the inventory says {platform}",
                node.platform
            );
            return Err(refuse(format!("nodes.{name}.platform"), why));
        }
        if node.address != address {
            let why = format!("planned for {}, the inventory says {address}", node.address);
            return Err(refuse(format!("nodes.{name}.address"), why));
        }
        names.push(name.clone());
    }
    Ok(names)
}
