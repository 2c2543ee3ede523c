//! The F5 side of the shared conformance suite (`crate::conformance`): the real parsers on recorded
//! iControl REST answers. Files are named after the endpoint with `/` -> `_` (as in
//! the public-sample collection (docs/fixture-sources.md), `f5`): `sys_version.json`, `sys_hardware.json`, `sys_global-settings.json`,
//! `shared_device-info.json`, `net_interface.json`, `net_vlan.json`, `net_trunk.json`,
//! `net_lldp-neighbors.json`, and `net_vlan_interfaces__NAME.json` for the interfaces subcollection of
//! VLAN NAME. Other files are ignored.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{facts, link, vlan};

fn json(files: &BTreeMap<String, String>, name: &str) -> Result<Option<Value>, String> {
    files
        .get(name)
        .map(|t| serde_json::from_str(t).map_err(|e| format!("{name}: {e}")))
        .transpose()
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, String> {
    serde_json::to_value(v).map_err(|e| e.to_string())
}

/// VLANs from `net_vlan.json`, with members from `net_vlan_interfaces__NAME.json` where given.
fn vlans(files: &BTreeMap<String, String>) -> Result<Option<Vec<vlan::F5Vlan>>, String> {
    let Some(v) = json(files, "net_vlan.json")? else {
        return Ok(None);
    };
    let mut vl = vlan::parse_vlans(&v);
    for v in vl.iter_mut() {
        if let Some(m) = json(files, &format!("net_vlan_interfaces__{}.json", v.name))? {
            v.members = Some(vlan::parse_vlan_interfaces(&m));
        }
    }
    Ok(Some(vl))
}

pub fn run(getter: &str, files: &BTreeMap<String, String>) -> Result<Value, String> {
    match getter {
        "facts" => {
            let version = json(files, "sys_version.json")?;
            let hardware = json(files, "sys_hardware.json")?;
            let global = json(files, "sys_global-settings.json")?;
            let device_info = json(files, "shared_device-info.json")?;
            let interfaces = json(files, "net_interface.json")?;
            let vlans = json(files, "net_vlan.json")?;
            let lldp = json(files, "net_lldp-neighbors.json")?;
            if [
                &version,
                &hardware,
                &global,
                &device_info,
                &interfaces,
                &vlans,
                &lldp,
            ]
            .iter()
            .all(|v| v.is_none())
            {
                return Err(
                    "no f5 facts input (sys_version.json, shared_device-info.json, ...)".into(),
                );
            }
            to_value(&facts::build_facts(&facts::FactsInputs {
                sys_version: version.as_ref(),
                sys_hardware: hardware.as_ref(),
                global_settings: global.as_ref(),
                device_info: device_info.as_ref(),
                interfaces: interfaces.as_ref(),
                vlans: vlans.as_ref(),
                lldp_neighbors: lldp.as_ref(),
            }))
        }
        "vlans" => match vlans(files)? {
            Some(v) => to_value(&vlan::to_model(&v)),
            None => Err("no f5 vlans input (net_vlan.json)".into()),
        },
        "links" => {
            let Some(i) = json(files, "net_interface.json")? else {
                return Err("no f5 links input (net_interface.json)".into());
            };
            let mut links = link::parse_interfaces(&i);
            if let Some(t) = json(files, "net_trunk.json")? {
                links.extend(link::parse_trunks(&t));
            }
            let vl = vlans(files)?.unwrap_or_default();
            to_value(&link::to_model(&links, &vl))
        }
        other => Err(format!("f5 has no conformance getter {other:?}")),
    }
}
