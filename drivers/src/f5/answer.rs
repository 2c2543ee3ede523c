//! One iControl REST answer decoded from its body. The interface listing (`GET
//! /mgmt/tm/net/interface`), read twice by a changing converge, is decoded into the fields this
//! driver's parsers read and nothing else; every other answer whole.
//!
//! Why: each interface of the listing carries about thirty settings (media, flow control, LLDP, sFlow,
//! STP...) none of which a converge reads; the listing is most of an F5 converge's answer bytes (5.8 KB
//! of the lab's 7.2 KB of reads), and building generic trees of the answers was about 6% of an F5
//! converge's CPU. The parsers still take a tree, the same shape with fewer keys, so they read real
//! captures and these answers alike; `tests` and the conformance cases hold the two to the same
//! result.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The tree of the answer of `op` (`GET /mgmt/tm/net/interface`, the path without its query).
pub fn decode(op: &str, body: &[u8]) -> Result<Value, serde_json::Error> {
    match op {
        "GET /mgmt/tm/net/interface" => {
            serde_json::to_value(serde_json::from_slice::<Interfaces>(body)?)
        }
        _ => serde_json::from_slice(body),
    }
}

/// Scalars stay values: a device that prints one in another type than expected degrades to an absent
/// field in the parser, as with the whole tree, rather than failing the answer.
type Scalar = Option<Value>;

/// `net/interface`: what `link::parse_interfaces` and `facts::parse_interface_facts` read.
#[derive(Deserialize, Serialize)]
struct Interfaces {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    items: Option<Vec<Interface>>,
}

#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct Interface {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    enabled: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    disabled: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mtu: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    media_active: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mac_address: Scalar,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    if_index: Scalar,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::f5::{facts, link};

    const OP: &str = "GET /mgmt/tm/net/interface";

    #[test]
    fn real_interface_listings_read_the_same_projected_as_whole() {
        // Real devices' answers and F5's MOCK.
        let all = crate::conformance::captures("f5", "net_interface.json");
        assert!(all.len() >= 5, "{} captures", all.len());
        for (path, body) in &all {
            let whole: Value = serde_json::from_str(body).unwrap();
            let p = decode(OP, body.as_bytes()).unwrap_or_else(|e| panic!("{path}: {e}"));
            assert_eq!(
                facts::parse_interface_facts(&p),
                facts::parse_interface_facts(&whole),
                "{path}"
            );
            assert_eq!(
                link::parse_interfaces(&p),
                link::parse_interfaces(&whole),
                "{path}"
            );
            // What is left out is what nothing reads, such as the media settings.
            for i in p["items"].as_array().into_iter().flatten() {
                assert!(
                    i.get("mediaMax").is_none() && i.get("kind").is_none(),
                    "{path}"
                );
            }
        }
    }

    #[test]
    fn other_answers_are_decoded_whole_and_bad_ones_fail() {
        let v = br#"{"items":[{"name":"external","tag":4094,"mtu":1500}]}"#;
        let whole: Value = serde_json::from_slice(v).unwrap();
        assert_eq!(decode("GET /mgmt/tm/net/vlan", v).unwrap(), whole);
        assert_eq!(
            decode("PATCH /mgmt/tm/net/interface/1.1", v).unwrap(),
            whole
        );
        assert!(decode(OP, br#"{"items":[3]}"#).is_err());
        assert!(decode(OP, b"{").is_err());
    }
}
