//! `converge --why-run --plan-out FILE` and `converge --plan FILE`: the plan file's two ends on the
//! command line (the node side is `crate::engine::planned`).

use super::*;
use crate::engine::planned;
use netgw_models::plan_file::PlanFile;
use std::path::Path;

/// `--plan FILE`, read whole before any device is contacted (exit 2 naming the file and the field).
pub(super) fn load_plan(path: &Path) -> Result<PlanFile, Failure> {
    planned::load(path).map_err(|e| Failure::usage(e.to_string()))
}

/// The nodes a plan covers, refused whole when it was made for another inventory.
pub(super) fn plan_nodes(
    plan: &PlanFile,
    path: &Path,
    inv: &Inventory,
) -> Result<Vec<String>, Failure> {
    planned::inventory_nodes(plan, inv)
        .map_err(|e| Failure::usage(format!("plan file {}: {e}", path.display())))
}

/// Write the plans the why-run recorded to `path`: what the human output says of it (where, and
/// which nodes are not in it: they failed to plan).
pub(super) fn write_plan(path: &Path, report: &report::RunReport) -> Result<String, Failure> {
    let nodes: std::collections::BTreeMap<String, _> = report
        .nodes
        .iter()
        .filter_map(|n| Some((n.name.clone(), n.plan.clone()?)))
        .collect();
    let left_out: Vec<&str> = report
        .nodes
        .iter()
        .filter(|n| n.plan.is_none())
        .map(|n| n.name.as_str())
        .collect();
    let changing = nodes.values().filter(|n| n.changes_anything()).count();
    let count = nodes.len();
    let file = PlanFile::new(&report.run_id, &report.started_at, nodes);
    planned::write(path, &file)
        .map_err(|e| Failure::usage(format!("writing the plan file {}: {e}", path.display())))?;
    let mut note = format!(
        "Plan written to {} ({count} node(s), {changing} with changes); apply it with `netgw converge --plan {}`\n",
        path.display(),
        path.display()
    );
    if !left_out.is_empty() {
        note.push_str(&format!(
            "Not in the plan (not planned): {}\n",
            left_out.join(", ")
        ));
    }
    Ok(note)
}
