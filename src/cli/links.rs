//! `netgw links`: the topology's declared links against what each device's LLDP says.

use super::*;

pub(super) fn links_cmd(
    cli: &Cli,
    source: &DeviceSource,
    selection: &[String],
    concurrency: usize,
    timeout: std::time::Duration,
    format: Format,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let Some(path) = &source.topology else {
        return Err(Failure::usage("links: --topology FILE is required"));
    };
    let topo =
        crate::inventory::Inventory::topology(path).map_err(|e| Failure::usage(e.to_string()))?;
    let inv = load_inventory(cli, source)?;
    let selected = select(&inv, selection)?;
    let driven: std::collections::BTreeSet<String> = topo
        .managed_nodes()
        .map(|n| n.name.clone())
        .filter(|n| selected.contains(n))
        .collect();
    let declared = crate::links::declared(&topo, &driven);
    let nodes: Vec<String> = driven.into_iter().collect();
    let (seen, errors, lags) =
        runtime()?.block_on(crate::links::gather(&inv, &nodes, concurrency, timeout));
    let mut report = crate::links::compare(&declared, &seen, errors);
    report.unbundled = crate::links::judge_aggregates(&seen, &lags);
    match format {
        Format::Json => writeln!(out, "{}", pretty(&json!(report)))?,
        Format::Human => write!(out, "{}", crate::links::human(&report))?,
    }
    Ok(if report.equal() {
        Status::Ok
    } else {
        Status::NodeFailed
    })
}
