//! Junos side of the shared conformance suite ([`crate::conformance`]): the driver's own parsers on
//! recorded replies. File names say which RPC a file answers:
//!
//! | file | RPC |
//! |---|---|
//! | `get-software-information.xml` | `<get-software-information/>` |
//! | `get-chassis-inventory.xml` | `<get-chassis-inventory/>` |
//! | `get-interface-information.xml` | `<get-interface-information/>` (terse or detailed) |
//! | `get-lldp-neighbors-information.xml` | `<get-lldp-neighbors-information/>` |
//! | `get-vlan-information.xml`, `get-bridge-instance-information.xml` | operational VLAN table |
//! | `get-configuration.xml`, `get-config.xml` | the configuration (Junos RPC or NETCONF get-config) |
//!
//! Other files in a case (`napalm_expected_result.json`, `facts.yml`) are the source's own expectations,
//! used by unit tests, and ignored here.

use super::config::{JunosConfig, parse_config};
use super::facts::{FactsInputs, build_facts};
use super::link::{parse_interface_names, parse_links};
use super::vlan::{parse_vlan_information, parse_vlans, vlans_from_information};
use crate::transport::netconf::XmlElement;
use crate::transport::netconf::reply::parse_document;
use serde_json::Value;
use std::collections::BTreeMap;

fn doc(files: &BTreeMap<String, String>, names: &[&str]) -> Result<Option<XmlElement>, String> {
    for n in names {
        if let Some(text) = files.get(*n) {
            return parse_document(text)
                .map(Some)
                .map_err(|e| format!("{n}: {e}"));
        }
    }
    Ok(None)
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<Value, String> {
    serde_json::to_value(v).map_err(|e| e.to_string())
}

/// Run one getter (`facts`, `vlans`, `links`) on the files of one case.
pub fn run(getter: &str, files: &BTreeMap<String, String>) -> Result<Value, String> {
    let config_doc = doc(files, &["get-configuration.xml", "get-config.xml"])?;
    let config: Option<JunosConfig> = config_doc.as_ref().map(parse_config);
    match getter {
        "facts" => {
            let software = doc(files, &["get-software-information.xml"])?;
            let chassis = doc(files, &["get-chassis-inventory.xml"])?;
            let interfaces = doc(files, &["get-interface-information.xml"])?;
            let lldp = doc(files, &["get-lldp-neighbors-information.xml"])?;
            let vlans = doc(
                files,
                &[
                    "get-vlan-information.xml",
                    "get-bridge-instance-information.xml",
                ],
            )?;
            let inputs = FactsInputs {
                software: software.as_ref(),
                chassis: chassis.as_ref(),
                interfaces: interfaces.as_ref(),
                lldp: lldp.as_ref(),
                vlans: vlans.as_ref(),
                config: config.as_ref(),
            };
            to_json(&build_facts(&inputs))
        }
        "vlans" => match (
            &config,
            doc(
                files,
                &[
                    "get-vlan-information.xml",
                    "get-bridge-instance-information.xml",
                ],
            )?,
        ) {
            (Some(cfg), _) => to_json(&parse_vlans(cfg)),
            (None, Some(oper)) => to_json(&vlans_from_information(&parse_vlan_information(&oper))),
            (None, None) => {
                Err("a vlans case needs get-configuration.xml or get-vlan-information.xml".into())
            }
        },
        "links" => {
            let cfg = config.ok_or("a links case needs get-configuration.xml")?;
            let names = doc(files, &["get-interface-information.xml"])?
                .map(|d| parse_interface_names(&d))
                .unwrap_or_default();
            to_json(&parse_links(&cfg, &names))
        }
        other => Err(format!(
            "junos has no getter {other:?} (facts, vlans, links)"
        )),
    }
}
