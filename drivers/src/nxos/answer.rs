//! One `| json` answer decoded from its text. `show interface`, whose rows on a real NX-OS carry
//! dozens of counters and rates an interface (none of which a converge reads) and which a changing
//! converge reads twice, is decoded into the fields this driver's parsers read and nothing else;
//! every other answer whole.
//!
//! Why: a real Nexus 9000 prints 72 fields an Ethernet row (rates, counters, errors); for 48 ports,
//! 80 KB that took 956 µs to build as a tree and take 242 µs projected (docs/bench.md). The lab's rows
//! are short (17 fields), so the benchmark barely shows it. The EOS and F5 drivers do the same for
//! their large answers. The parsers still take a tree, the same shape with fewer keys, so they read
//! real captures and these answers alike; `tests` and the conformance cases hold the two to the same
//! result.

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor, value::MapAccessDeserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The tree of `cmd`'s JSON answer `text` (`cmd` without its `| json`).
pub fn decode(cmd: &str, text: &str) -> Result<Value, serde_json::Error> {
    match cmd {
        "show interface" => serde_json::to_value(serde_json::from_str::<ShowInterface>(text)?),
        _ => serde_json::from_str(text),
    }
}

/// Scalars stay values: a device that prints one in another type than expected degrades to an absent
/// field in the parser, as with the whole tree, rather than failing the answer.
type Scalar = Option<Value>;

/// `show interface`: what `facts::parse_show_interface_json` and `link::parse_show_interface_json`
/// read.
#[derive(Deserialize, Serialize)]
struct ShowInterface {
    #[serde(
        rename = "TABLE_interface",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    table: Option<Table>,
}

#[derive(Deserialize, Serialize)]
struct Table {
    #[serde(
        rename = "ROW_interface",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    rows: Option<Rows>,
}

/// NX-API prints one row as an object and several as a list; written back as a list (the parsers take
/// both).
#[derive(Serialize)]
struct Rows(Vec<Row>);

impl<'de> Deserialize<'de> for Rows {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct OneOrMany;
        impl<'de> Visitor<'de> for OneOrMany {
            type Value = Rows;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a row or a list of rows")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Rows, A::Error> {
                let mut rows = Vec::new();
                while let Some(r) = seq.next_element()? {
                    rows.push(r);
                }
                Ok(Rows(rows))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Rows, A::Error> {
                Ok(Rows(vec![Row::deserialize(MapAccessDeserializer::new(
                    map,
                ))?]))
            }
        }
        d.deserialize_any(OneOrMany)
    }
}

#[derive(Deserialize, Serialize)]
struct Row {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    interface: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    admin_state: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    svi_admin_state: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    state: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    svi_line_proto: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    state_rsn_desc: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    eth_mtu: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    svi_mtu: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    eth_bw: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    svi_bw: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    eth_hw_addr: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    svi_mac: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    desc: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    svi_desc: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    eth_mode: Scalar,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nxos::{facts, link};
    use serde_json::json;

    fn same(path: &str, text: &str) {
        let whole: Value = serde_json::from_str(text).unwrap();
        let p = decode("show interface", text).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(
            facts::parse_show_interface_json(&p),
            facts::parse_show_interface_json(&whole),
            "{path}"
        );
        assert_eq!(
            link::parse_show_interface_json(&p),
            link::parse_show_interface_json(&whole),
            "{path}"
        );
    }

    #[test]
    fn real_show_interface_reads_the_same_projected_as_whole() {
        // NAPALM's NX-API captures.
        let all = crate::conformance::captures("nxos", "show_interface.json");
        assert!(all.len() >= 3, "{} captures", all.len());
        for (path, text) in &all {
            same(path, text);
        }
        // One row is printed as an object; counters are left out.
        let one = json!({"TABLE_interface": {"ROW_interface": {"interface": "Vlan10",
            "svi_admin_state": "up", "svi_line_proto": "up", "svi_mtu": 1500, "svi_bw": 1000000,
            "svi_mac": "5254.0012.3456", "svi_desc": "servers", "svi_rx_bytes": 1234}}});
        same("one row", &one.to_string());
        let p = decode("show interface", &one.to_string()).unwrap();
        assert!(
            p.pointer("/TABLE_interface/ROW_interface/0/svi_rx_bytes")
                .is_none()
        );
    }

    #[test]
    fn other_answers_are_decoded_whole_and_bad_ones_fail() {
        let v = json!({"TABLE_vlanbriefxbrief": {"ROW_vlanbriefxbrief": {"vlanshowbr-vlanid": 1}}});
        assert_eq!(decode("show vlan brief", &v.to_string()).unwrap(), v);
        assert!(
            decode(
                "show interface",
                r#"{"TABLE_interface": {"ROW_interface": 3}}"#
            )
            .is_err()
        );
        assert!(decode("show interface", "{").is_err());
    }
}
