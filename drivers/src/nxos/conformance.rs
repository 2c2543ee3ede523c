//! The NX-OS side of the shared conformance suite (`crate::conformance`). Files are named after the
//! command they answer as in NAPALM's mocked data: NX-API JSON as `show_version.json`,
//! `show_inventory.json`, `show_interface.json`, `show_vlan_brief.json`, `show_interface_switchport.json`
//! (or the SSH driver's `show_vlan_brief___json.txt`, `show_inventory___json.txt`), text as
//! `show_version.txt`, `show_hostname.txt`, `show_interface.txt`, `show_vlan.txt`,
//! `show_interface_switchport.txt`, `show_lldp_neighbors_detail.txt`. Other files are ignored.

use std::collections::BTreeMap;

use netgw_models::resource::Link;
use serde_json::Value;

use super::Reply;
use super::{facts, link, vlan};

fn reply(
    files: &BTreeMap<String, String>,
    json: &[&str],
    text: &[&str],
) -> Result<Option<Reply>, String> {
    for n in json {
        if let Some(t) = files.get(*n) {
            return serde_json::from_str(t)
                .map(|v| Some(Reply::Json(v)))
                .map_err(|e| format!("{n}: {e}"));
        }
    }
    Ok(text
        .iter()
        .find_map(|n| files.get(*n))
        .map(|t| Reply::Text(t.clone())))
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, String> {
    serde_json::to_value(v).map_err(|e| e.to_string())
}

pub fn run(getter: &str, files: &BTreeMap<String, String>) -> Result<Value, String> {
    let vlans = reply(
        files,
        &["show_vlan_brief.json", "show_vlan_brief___json.txt"],
        &["show_vlan_brief.txt", "show_vlan.txt"],
    )?;
    let interfaces = reply(files, &["show_interface.json"], &["show_interface.txt"])?;
    match getter {
        "facts" => {
            let version = reply(files, &["show_version.json"], &["show_version.txt"])?;
            let inventory = reply(
                files,
                &["show_inventory.json", "show_inventory___json.txt"],
                &["show_inventory.txt"],
            )?;
            let hostname = files
                .get("show_hostname.json")
                .or_else(|| files.get("show_hostname.txt"));
            let lldp = files.get("show_lldp_neighbors_detail.txt");
            if version.is_none() && interfaces.is_none() && lldp.is_none() && inventory.is_none() {
                return Err("no nxos facts input (show_version.*, show_interface.*, ...)".into());
            }
            let inputs = facts::FactsInputs {
                show_version: version.as_ref().map(Reply::as_answer),
                show_hostname: hostname.map(String::as_str),
                show_inventory: inventory.as_ref().map(Reply::as_answer),
                show_interface: interfaces.as_ref().map(Reply::as_answer),
                show_vlan_brief: vlans.as_ref().map(Reply::as_answer),
                show_lldp_neighbors_detail: lldp.map(String::as_str),
            };
            to_value(&facts::build_facts(&inputs))
        }
        "vlans" => match vlans {
            Some(Reply::Json(v)) => to_value(&vlan::parse_show_vlan_brief_json(&v)),
            Some(Reply::Text(t)) => to_value(&crate::ios::vlan::vlans_from_rows(
                &crate::ios::vlan::parse_show_vlan_brief(&t),
            )),
            None => Err("no nxos vlans input (show_vlan_brief.json or show_vlan.txt)".into()),
        },
        "links" => {
            let mut links: Vec<Link> = match &interfaces {
                Some(Reply::Json(v)) => link::parse_show_interface_json(v),
                Some(Reply::Text(t)) => link::links_from_interface_text(t),
                None => Vec::new(),
            };
            let sps = match reply(
                files,
                &["show_interface_switchport.json"],
                &["show_interface_switchport.txt"],
            )? {
                Some(Reply::Json(v)) => link::parse_show_interface_switchport_json(&v),
                Some(Reply::Text(t)) => crate::ios::link::parse_show_interfaces_switchport(&t),
                None => Vec::new(),
            };
            if links.is_empty() && sps.is_empty() {
                return Err(
                    "no nxos links input (show_interface.* or show_interface_switchport.*)".into(),
                );
            }
            if links.is_empty() {
                links = sps.iter().map(|s| Link::new(s.name.clone())).collect();
            }
            link::apply_switchports(&mut links, &sps);
            to_value(&links)
        }
        other => Err(format!("nxos has no conformance getter {other:?}")),
    }
}
