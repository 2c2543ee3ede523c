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
    // A word that is not UTF-8 cannot be printed back as typed: then the plain form.
    let argv: Option<Vec<String>> = std::env::args_os().map(|a| a.into_string().ok()).collect();
    let apply = argv
        .and_then(|argv| apply_command(&argv, path))
        .unwrap_or_else(|| format!("netgw converge --plan {}", path.display()));
    let mut note = format!(
        "Plan written to {} ({count} node(s), {changing} with changes); apply it with: {apply}\n",
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

/// What a why-run takes and `--plan` refuses: the why-run itself and the transaction's options.
const NOT_WITH_PLAN: [&str; 6] = [
    "why-run",
    "plan-out",
    "atomic",
    "phase-timeout",
    "check-links",
    "links-topology",
];

/// The command that applies a plan: the why-run's own command line without what `--plan` refuses
/// (the selection too: the plan names its nodes) and with `--plan FILE`, quoted for a POSIX shell,
/// so the repo, inventory and every other setting given are the same. A secret given on the command
/// line (an option whose environment value clap hides) is shown as its variable, `"$NETGW_..."`.
fn apply_command(argv: &[String], plan: &Path) -> Option<String> {
    use clap::CommandFactory;
    let cli = Cli::command();
    let converge = cli.find_subcommand("converge").cloned();
    let arg = |long: &str| {
        cli.get_arguments()
            .chain(converge.iter().flat_map(|c| c.get_arguments()))
            .find(|a| a.get_long() == Some(long))
            .cloned()
    };
    let quote = |w: &str| shlex::try_quote(w).ok().map(|q| q.into_owned());
    let mut out = vec!["netgw".to_owned()];
    let mut words = argv.iter().skip(1).map(String::as_str);
    let mut in_converge = false;
    while let Some(w) = words.next() {
        if let Some(long) = w.strip_prefix("--") {
            let (name, inline) = long.split_once('=').unzip();
            let name = name.unwrap_or(long);
            let a = arg(name);
            let value = match inline {
                Some(v) => Some(v),
                None if a.as_ref().is_some_and(|a| a.get_action().takes_values()) => words.next(),
                None => None,
            };
            if NOT_WITH_PLAN.contains(&name) {
                continue;
            }
            out.push(format!("--{name}"));
            let secret = a.as_ref().filter(|a| a.is_hide_env_values_set());
            match (value, secret.and_then(|a| a.get_env())) {
                (Some(_), Some(env)) => out.push(format!("\"${}\"", env.to_string_lossy())),
                (Some(v), None) => out.push(quote(v)?),
                (None, _) => {}
            }
        } else if w == "converge" && !in_converge {
            in_converge = true;
            out.extend([
                "converge".to_owned(),
                "--plan".to_owned(),
                quote(&plan.to_string_lossy())?,
            ]);
        } else if !in_converge || w.starts_with('-') {
            out.push(quote(w)?);
        }
    }
    Some(out.join(" "))
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
                &args("/usr/bin/netgw --repo r5 converge sw1 --why-run --plan-out x.json --inventory inv.yml --concurrency 5 --state-dir s"),
                p
            )
            .unwrap(),
            "netgw --repo r5 converge --plan '/tmp/my plans/sw1.plan.json' --inventory inv.yml --concurrency 5 --state-dir s"
        );
        // The transaction's options go with --atomic; a secret is shown as its variable.
        assert_eq!(
            apply_command(
                &args("netgw converge --why-run --plan-out=x.json acc* --topology lab.clab.yml --atomic --phase-timeout 600 --check-links --database postgres://u:pw@h/db --data-collector-token=s3cret"),
                Path::new("x.json")
            )
            .unwrap(),
            "netgw converge --plan x.json --topology lab.clab.yml --database \"$NETGW_DATABASE_URL\" --data-collector-token \"$NETGW_DATA_COLLECTOR_TOKEN\""
        );
        // What is printed is a command line clap takes.
        use clap::Parser;
        for line in [
            "netgw converge --why-run --plan-out p.json --atomic --phase-timeout 60 --inventory i.yml",
            "netgw --repo r converge a b --why-run --plan-out p.json --inventory i.yml --serial 2",
        ] {
            let cmd = apply_command(&args(line), Path::new("p.json")).unwrap();
            let words = shlex::split(&cmd).unwrap();
            assert!(Cli::try_parse_from(&words).is_ok(), "{cmd}");
        }
    }
}
