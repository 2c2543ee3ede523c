//! `netgw facts NODE`: a device's facts as a run gathers them.

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
    let target = inv.target(&names[0]).map_err(|e| Failure {
        status: Status::NodeFailed,
        message: e.to_string(),
    })?;
    let facts = runtime()?
        .block_on(crate::facts::device_facts(&target))
        .map_err(|message| Failure {
            status: Status::NodeFailed,
            message,
        })?;
    let v = facts.to_automatic();
    match format {
        Format::Json => writeln!(out, "{}", pretty(&v))?,
        Format::Human => {
            if let Value::Object(m) = &v {
                for (k, val) in m {
                    writeln!(out, "{k}: {}", compact(val))?;
                }
            }
        }
    }
    Ok(Status::Ok)
}
