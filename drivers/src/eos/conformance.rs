//! The EOS side of the shared conformance suite (`crate::conformance`): run the real parsers on the
//! recorded outputs of one case. Files are named after the command they answer, as in NAPALM's mocked
//! data: `show_version.json`, `show_hostname.json`, `show_interfaces.json`,
//! `show_interfaces_switchport.json`, `show_vlan.json`, `show_lldp_neighbors__detail.json`,
//! `show_lldp_neighbors.json`, and running-config text as `*running_config*.text`. A JSON file may hold
//! one command's object (NAPALM) or the whole one-element `runCmds` result list (pyeapi). Other files
//! (e.g. NAPALM's own `napalm_expected_result.json`, kept for cross-checks) are ignored.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{facts, link, vlan};

fn json(files: &BTreeMap<String, String>, name: &str) -> Result<Option<Value>, String> {
    let Some(text) = files.get(name) else {
        return Ok(None);
    };
    let v: Value = serde_json::from_str(text).map_err(|e| format!("{name}: {e}"))?;
    Ok(Some(match v {
        Value::Array(mut a) if a.len() == 1 => a.remove(0),
        other => other,
    }))
}

fn running_config(files: &BTreeMap<String, String>) -> Option<&String> {
    files
        .iter()
        .find(|(n, _)| n.contains("running_config") && n.ends_with(".text"))
        .map(|(_, t)| t)
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, String> {
    serde_json::to_value(v).map_err(|e| e.to_string())
}

pub fn run(getter: &str, files: &BTreeMap<String, String>) -> Result<Value, String> {
    match getter {
        "facts" => {
            let version = json(files, "show_version.json")?;
            let hostname = json(files, "show_hostname.json")?;
            let interfaces = json(files, "show_interfaces.json")?;
            let vlans = json(files, "show_vlan.json")?;
            let detail = json(files, "show_lldp_neighbors__detail.json")?;
            let summary = json(files, "show_lldp_neighbors.json")?;
            if [&version, &hostname, &interfaces, &vlans, &detail, &summary]
                .iter()
                .all(|v| v.is_none())
            {
                return Err(
                    "no eos facts input (show_version.json, show_interfaces.json, ...)".into(),
                );
            }
            let inputs = facts::FactsInputs {
                show_version: version.as_ref(),
                show_hostname: hostname.as_ref(),
                show_interfaces: interfaces.as_ref(),
                show_vlan: vlans.as_ref(),
                show_lldp_neighbors_detail: detail.as_ref(),
                show_lldp_neighbors: summary.as_ref(),
            };
            to_value(&facts::build_facts(&inputs, None))
        }
        "vlans" => {
            if let Some(v) = json(files, "show_vlan.json")? {
                to_value(&vlan::parse_show_vlan(&v))
            } else if let Some(text) = running_config(files) {
                to_value(&vlan::parse_running_config_vlans(text))
            } else {
                Err("no eos vlans input (show_vlan.json or running_config.text)".into())
            }
        }
        "links" => {
            if let Some(i) = json(files, "show_interfaces.json")? {
                let mut links = link::parse_show_interfaces(&i);
                if let Some(s) = json(files, "show_interfaces_switchport.json")? {
                    link::apply_switchports(&mut links, &s);
                } else if let Some(text) = running_config(files) {
                    link::apply_running_config(&mut links, text);
                }
                to_value(&links)
            } else if let Some(text) = running_config(files) {
                to_value(&link::parse_running_config_links(text))
            } else {
                Err("no eos links input (show_interfaces.json or running_config.text)".into())
            }
        }
        other => Err(format!("eos has no conformance getter {other:?}")),
    }
}
