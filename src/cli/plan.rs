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
    let argv: Vec<String> = std::env::args().collect();
    let mut note = format!(
        "Plan written to {} ({count} node(s), {changing} with changes); apply it with: {}\n",
        path.display(),
        apply_command(&argv, path)
    );
    if !left_out.is_empty() {
        note.push_str(&format!(
            "Not in the plan (not planned): {}\n",
            left_out.join(", ")
        ));
    }
    Ok(note)
}

/// The command that applies a plan: the why-run's own command line with `--why-run`, `--plan-out`,
/// `--atomic` and the selection left out (the plan names its nodes) and `--plan FILE` put in,
/// quoted for a POSIX shell, so the repo, inventory and every other setting given are the same.
fn apply_command(argv: &[String], plan: &Path) -> String {
    use clap::CommandFactory;
    let cli = Cli::command();
    let converge = cli.find_subcommand("converge").cloned();
    let takes_value = |long: &str| {
        cli.get_arguments()
            .chain(converge.iter().flat_map(|c| c.get_arguments()))
            .find(|a| a.get_long() == Some(long))
            .is_some_and(|a| a.get_action().takes_values())
    };
    let plan = plan.display().to_string();
    let mut out: Vec<&str> = vec!["netgw"];
    let mut words = argv.iter().skip(1).map(String::as_str);
    let mut in_converge = false;
    while let Some(w) = words.next() {
        if let Some(long) = w.strip_prefix("--") {
            let (name, inline) = long.split_once('=').unzip();
            let name = name.unwrap_or(long);
            let value = if inline.is_none() && takes_value(name) {
                words.next()
            } else {
                None
            };
            if !matches!(name, "why-run" | "plan-out" | "atomic") {
                out.push(w);
                out.extend(value);
            }
        } else if w == "converge" && !in_converge {
            in_converge = true;
            out.extend(["converge", "--plan", plan.as_str()]);
        } else if !in_converge || w.starts_with('-') {
            out.push(w);
        }
    }
    shlex::try_join(out).unwrap_or_else(|_| format!("netgw converge --plan {plan}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn the_apply_command_is_the_why_runs_own_with_the_plan() {
        let p = Path::new("/tmp/my plans/sw1.plan.json");
        assert_eq!(
            apply_command(
                &args(
                    "/usr/bin/netgw --repo r5 converge sw1 --why-run --plan-out x.json --inventory inv.yml --concurrency 5"
                ),
                p
            ),
            "netgw --repo r5 converge --plan '/tmp/my plans/sw1.plan.json' --inventory inv.yml --concurrency 5"
        );
        assert_eq!(
            apply_command(
                &args(
                    "netgw converge --why-run --plan-out=x.json 'acc*' --topology lab.clab.yml --atomic"
                ),
                Path::new("x.json")
            ),
            "netgw converge --plan x.json --topology lab.clab.yml"
        );
    }
}
