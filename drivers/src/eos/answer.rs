//! One command's JSON answer decoded from its text in a `runCmds` reply. The two large answers a
//! converge reads twice (`show interfaces`, `show interfaces switchport`) are decoded into the fields
//! this driver's parsers read and nothing else; every other answer whole.
//!
//! Why: a generic tree of `show interfaces` holds every counter of every port (about 40 values an
//! interface, two thirds of an EOS converge's reply bytes), none of which a converge reads, and
//! building it was about a tenth of an EOS converge's CPU. Skipping what is not read costs a scan of
//! the text, about five times less than the tree (docs/bench.md). The parsers still take a tree, the same
//! shape with fewer keys, so they read real captures and these answers alike; the conformance cases
//! and `facts::tests`' projection test hold the two to the same result.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// The tree of `cmd`'s JSON answer `raw`.
pub fn decode(cmd: &str, raw: &RawValue) -> Result<Value, serde_json::Error> {
    match cmd {
        "show interfaces" => project::<ShowInterfaces>(raw),
        "show interfaces switchport" => project::<ShowSwitchports>(raw),
        _ => serde_json::from_str(raw.get()),
    }
}

fn project<T: DeserializeOwned + IntoTree>(raw: &RawValue) -> Result<Value, serde_json::Error> {
    Ok(serde_json::from_str::<T>(raw.get())?.into_tree())
}

/// A projection's tree, its values moved into it: converting through `serde_json::to_value` copied
/// every key and value once more, a tenth of an EOS reply's decoding.
trait IntoTree {
    fn into_tree(self) -> Value;
}

/// An object of the fields that are present, under EOS' names.
fn object<const N: usize>(fields: [(&str, Option<Value>); N]) -> Value {
    Value::Object(
        fields
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_owned(), v?)))
            .collect(),
    )
}

/// `{NAME: tree}` under `key`, or `{}` when the answer had no `key`.
fn named<T: IntoTree>(key: &str, map: Option<BTreeMap<String, T>>) -> Value {
    let trees =
        map.map(|m| Value::Object(m.into_iter().map(|(k, v)| (k, v.into_tree())).collect()));
    object([(key, trees)])
}

impl IntoTree for ShowInterfaces {
    fn into_tree(self) -> Value {
        named("interfaces", self.interfaces)
    }
}

impl IntoTree for Interface {
    fn into_tree(self) -> Value {
        object([
            ("description", self.description),
            ("interfaceStatus", self.interface_status),
            ("lineProtocolStatus", self.line_protocol_status),
            ("mtu", self.mtu),
            ("bandwidth", self.bandwidth),
            ("physicalAddress", self.physical_address),
            ("forwardingModel", self.forwarding_model),
        ])
    }
}

impl IntoTree for ShowSwitchports {
    fn into_tree(self) -> Value {
        named("switchports", self.switchports)
    }
}

impl IntoTree for Switchport {
    fn into_tree(self) -> Value {
        let info = self.switchport_info.map(IntoTree::into_tree);
        object([("enabled", self.enabled), ("switchportInfo", info)])
    }
}

impl IntoTree for SwitchportInfo {
    fn into_tree(self) -> Value {
        object([
            ("mode", self.mode),
            ("accessVlanId", self.access_vlan_id),
            ("trunkAllowedVlans", self.trunk_allowed_vlans),
            ("trunkingNativeVlanId", self.trunking_native_vlan_id),
        ])
    }
}

/// Scalars stay values: a device that prints one in another type than expected degrades to an absent
/// field in the parser, as with the whole tree, rather than failing the reply.
type Scalar = Option<Value>;

/// `show interfaces`: what `link::parse_show_interfaces` and `facts::parse_interfaces_facts` read.
#[derive(Deserialize)]
struct ShowInterfaces {
    #[serde(default)]
    interfaces: Option<BTreeMap<String, Interface>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Interface {
    #[serde(default)]
    description: Scalar,
    #[serde(default)]
    interface_status: Scalar,
    #[serde(default)]
    line_protocol_status: Scalar,
    #[serde(default)]
    mtu: Scalar,
    #[serde(default)]
    bandwidth: Scalar,
    #[serde(default)]
    physical_address: Scalar,
    #[serde(default)]
    forwarding_model: Scalar,
}

/// `show interfaces switchport`: what `link::apply_switchports` reads.
#[derive(Deserialize)]
struct ShowSwitchports {
    #[serde(default)]
    switchports: Option<BTreeMap<String, Switchport>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Switchport {
    #[serde(default)]
    enabled: Scalar,
    #[serde(default)]
    switchport_info: Option<SwitchportInfo>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SwitchportInfo {
    #[serde(default)]
    mode: Scalar,
    #[serde(default)]
    access_vlan_id: Scalar,
    #[serde(default)]
    trunk_allowed_vlans: Scalar,
    #[serde(default)]
    trunking_native_vlan_id: Scalar,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eos::{facts, link};
    use serde_json::json;

    fn projected(cmd: &str, v: &Value) -> Value {
        decode(cmd, &RawValue::from_string(v.to_string()).unwrap()).unwrap()
    }

    #[test]
    fn real_show_interfaces_read_the_same_projected_as_whole() {
        // pyeapi records a result list.
        let all: Vec<(String, Value)> = crate::conformance::captures("eos", "show_interfaces.json")
            .into_iter()
            .map(|(path, text)| {
                let v: Value =
                    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
                let v = match v {
                    Value::Array(mut a) if a.len() == 1 => a.remove(0),
                    other => other,
                };
                (path, v)
            })
            .collect();
        assert!(all.len() >= 20, "{} captures", all.len());
        for (path, whole) in &all {
            let p = projected("show interfaces", whole);
            assert_eq!(
                facts::parse_interfaces_facts(&p),
                facts::parse_interfaces_facts(whole),
                "{path}"
            );
            assert_eq!(
                link::parse_show_interfaces(&p),
                link::parse_show_interfaces(whole),
                "{path}"
            );
            // What is left out is what nothing reads, such as the counters.
            for (name, i) in p["interfaces"].as_object().unwrap() {
                assert!(i.get("interfaceCounters").is_none(), "{path}: {name}");
            }
        }
    }

    #[test]
    fn switchports_read_the_same_projected_as_whole() {
        // EOS's shape, every field it prints for a port (fake-switches' Arista model prints the same).
        let whole = json!({"switchports": {
            "Ethernet1": {"enabled": true, "switchportInfo": {
                "accessVlanId": 1, "accessVlanName": "default", "dynamicAllowedVlans": {},
                "dynamicTrunkGroups": [], "macLearning": true, "mode": "trunk",
                "sourceportFilterMode": "enabled", "staticTrunkGroups": [], "tpid": "0x8100",
                "tpidStatus": true, "trunkAllowedVlans": "10,20-22", "trunkingNativeVlanId": 20,
                "trunkingNativeVlanName": "VLAN0020"}},
            "Ethernet2": {"enabled": true, "switchportInfo": {"mode": "access", "accessVlanId": 30,
                "trunkAllowedVlans": "ALL", "trunkingNativeVlanId": 1}},
            "Ethernet3": {"enabled": false, "switchportInfo": {}},
            "Ethernet4": {"enabled": true}
        }});
        let names = [
            "Ethernet1",
            "Ethernet2",
            "Ethernet3",
            "Ethernet4",
            "Ethernet5",
        ];
        let links = || -> Vec<_> {
            names
                .iter()
                .map(|n| netgw_models::resource::Link::new(*n))
                .collect()
        };
        let (mut a, mut b) = (links(), links());
        link::apply_switchports(&mut a, &whole);
        link::apply_switchports(&mut b, &projected("show interfaces switchport", &whole));
        assert_eq!(a, b);
        assert_eq!(a[0].native_vlan.map(|v| v.get()), Some(20));
    }

    #[test]
    fn other_answers_are_decoded_whole_and_bad_ones_fail() {
        let v = json!({"vlans": {"1": {"name": "default", "status": "active", "interfaces": {}}}});
        assert_eq!(projected("show vlan", &v), v);
        let bad = RawValue::from_string(r#"{"interfaces": {"Ethernet1": 3}}"#.into()).unwrap();
        assert!(decode("show interfaces", &bad).is_err());
    }
}
