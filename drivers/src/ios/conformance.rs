//! The IOS side of the shared conformance suite (`crate::conformance`): the real parsers on the recorded
//! outputs of one case. Files are named after the command they answer, as in NAPALM's mocked data:
//! `show_version.txt`, `show_inventory.txt`, `show_interfaces.txt`, `show_vlan_brief.txt` (or
//! `show_vlan.txt`), `show_lldp_neighbors_detail.txt` (with `show_lldp_neighbors.txt`), `show_cdp_neighbors_detail.txt`,
//! `show_running_config.txt`, `show_interfaces_switchport.txt`. Other files (the source's own parsed
//! expectations, kept for cross-checks) are ignored.

use std::collections::BTreeMap;

use netgw_models::resource::Link;
use serde_json::Value;

use super::{facts, link, vlan};

fn file<'a>(files: &'a BTreeMap<String, String>, names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|n| files.get(*n)).map(String::as_str)
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, String> {
    serde_json::to_value(v).map_err(|e| e.to_string())
}

pub fn run(getter: &str, files: &BTreeMap<String, String>) -> Result<Value, String> {
    let vlan_text = file(files, &["show_vlan_brief.txt", "show_vlan.txt"]);
    let running = file(
        files,
        &[
            "show_running_config.txt",
            "show_running_config_interface.txt",
        ],
    );
    match getter {
        "facts" => {
            let inputs = facts::FactsInputs {
                show_version: file(files, &["show_version.txt"]),
                show_inventory: file(files, &["show_inventory.txt"]),
                show_interfaces: file(files, &["show_interfaces.txt"]),
                show_vlan_brief: vlan_text,
                show_lldp_neighbors_detail: file(files, &["show_lldp_neighbors_detail.txt"]),
                show_lldp_neighbors: file(files, &["show_lldp_neighbors.txt"]),
                show_cdp_neighbors_detail: file(files, &["show_cdp_neighbors_detail.txt"]),
                show_running_config: running,
            };
            if inputs.show_version.is_none()
                && inputs.show_interfaces.is_none()
                && inputs.show_lldp_neighbors_detail.is_none()
                && inputs.show_cdp_neighbors_detail.is_none()
                && inputs.show_inventory.is_none()
            {
                return Err(
                    "no ios facts input (show_version.txt, show_interfaces.txt, ...)".into(),
                );
            }
            to_value(&facts::build_facts(&inputs))
        }
        "vlans" => match vlan_text {
            Some(t) => to_value(&vlan::vlans_from_rows(&vlan::parse_show_vlan_brief(t))),
            None => Err("no ios vlans input (show_vlan_brief.txt)".into()),
        },
        "links" => {
            if let Some(t) = running {
                let links: Vec<Link> = link::parse_running_config_interfaces(t)
                    .iter()
                    .map(link::IfConfig::to_link)
                    .collect();
                to_value(&links)
            } else if let Some(sw) = file(files, &["show_interfaces_switchport.txt"]) {
                let links: Vec<Link> = link::parse_show_interfaces_switchport(sw)
                    .iter()
                    .map(|sp| {
                        let mut l = Link::new(sp.name.clone());
                        sp.apply_to(&mut l);
                        l
                    })
                    .collect();
                to_value(&links)
            } else {
                Err("no ios links input (show_running_config.txt or show_interfaces_switchport.txt)".into())
            }
        }
        other => Err(format!("ios has no conformance getter {other:?}")),
    }
}
