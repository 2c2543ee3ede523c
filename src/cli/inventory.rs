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
    match format {
        Format::Json => writeln!(out, "{}", pretty(&Value::Array(resolved)))?,
        Format::Human => {
            for h in &resolved {
                write!(out, "{}", human_host(h))?;
            }
        }
    }
    Ok(Status::Ok)
}
