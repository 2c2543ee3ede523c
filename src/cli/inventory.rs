//! `netgw inventory`: the resolved hosts and where each value came from.

use super::*;

pub(super) fn inventory_cmd(
    cli: &Cli,
    hosts: &[String],
    source: &DeviceSource,
    format: Format,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let inv = load_inventory(cli, source)?;
    let names = select(&inv, hosts)?;
    let mut resolved = Vec::new();
    for n in &names {
        resolved.push(inv.resolved(n).map_err(|e| Failure::usage(e.to_string()))?);
    }
    let unusable = resolved.iter().any(|h| h["error"].is_string());
    match format {
        Format::Json => writeln!(out, "{}", pretty(&Value::Array(resolved)))?,
        Format::Human => {
            for h in &resolved {
                write!(out, "{}", human_host(h))?;
            }
        }
    }
    // A host a converge could not reach as written (an unset password variable, ...) fails the
    // command, so a CI check of the inventory sees it.
    Ok(if unusable {
        Status::NodeFailed
    } else {
        Status::Ok
    })
}
