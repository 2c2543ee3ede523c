//! NX-OS VLANs: `show vlan brief | json` (NX-API rows) and the text table (shared with IOS), and the
//! NX-OS limits. Rendering is IOS' (`vlan N` / `name X` / `no vlan N` are the same on NX-OS).

use netgw_models::resource::{Vlan, VlanId, VlanSet};
use serde_json::Value;

use super::facts::{rows, text};

/// Longest VLAN name NX-OS accepts.
pub const MAX_NAME_LEN: usize = 32;

/// VLAN 1 and the internal range 3968-4094 (reserved for internal use by default, `system vlan
/// reserve`): never removed or renamed.
pub fn reserved_vlans() -> VlanSet {
    let mut s = VlanSet::new();
    for id in std::iter::once(1).chain(3968..=4094) {
        if let Ok(v) = VlanId::new(id) {
            s.insert(v);
        }
    }
    s
}

/// `show vlan brief | json`: `TABLE_vlanbriefxbrief.ROW_vlanbriefxbrief[]` with `vlanshowbr-vlanid`
/// and `vlanshowbr-vlanname`. Rows with an unusable id are skipped.
pub fn parse_show_vlan_brief_json(v: &Value) -> Vec<Vlan> {
    rows(v, "TABLE_vlanbriefxbrief", "ROW_vlanbriefxbrief")
        .into_iter()
        .filter_map(|r| {
            // Some releases print `vlanid` byte-swapped (16777216 for VLAN 1, napalm issue 1490);
            // `vlanid-utf` is always the id.
            let id = [
                text(r, "vlanshowbr-vlanid-utf"),
                text(r, "vlanshowbr-vlanid"),
            ]
            .into_iter()
            .flatten()
            .find_map(|s| VlanId::parse(&s).ok())?;
            Some(Vlan {
                id,
                name: text(r, "vlanshowbr-vlanname"),
                description: None,
                state: Default::default(),
            })
        })
        .collect()
}

/// A desired VLAN NX-OS cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VlanUnfit {
    #[error(transparent)]
    Model(#[from] netgw_models::error::ModelError),
    #[error("VLAN name {0:?} is longer than {MAX_NAME_LEN} characters")]
    NameTooLong(String),
    #[error("VLAN {0} is reserved on NX-OS and cannot be renamed")]
    Reserved(u16),
    #[error("NX-OS VLANs have no description (use the name)")]
    Description,
}

/// NX-OS limits, checked before anything is sent.
pub fn validate_vlan(v: &Vlan) -> Result<(), VlanUnfit> {
    v.validate()?;
    if let Some(n) = &v.name {
        if n.len() > MAX_NAME_LEN {
            return Err(VlanUnfit::NameTooLong(n.clone()));
        }
        if reserved_vlans().contains(v.id) && !(v.id.get() == 1 && n == "default") {
            return Err(VlanUnfit::Reserved(v.id.get()));
        }
    }
    if v.description.is_some() {
        return Err(VlanUnfit::Description);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_rows_one_or_many() {
        let one = json!({"TABLE_vlanbriefxbrief": {"ROW_vlanbriefxbrief": {"vlanshowbr-vlanid": "1", "vlanshowbr-vlanname": "default"}}});
        assert_eq!(parse_show_vlan_brief_json(&one).len(), 1);
        let many = json!({"TABLE_vlanbriefxbrief": {"ROW_vlanbriefxbrief": [
            {"vlanshowbr-vlanid": "1", "vlanshowbr-vlanname": "default"},
            {"vlanshowbr-vlanid": 161, "vlanshowbr-vlanname": "Vlan161"},
            {"vlanshowbr-vlanid": "9999", "vlanshowbr-vlanname": "bad"}]}});
        let v = parse_show_vlan_brief_json(&many);
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].name.as_deref(), Some("Vlan161"));
        assert!(parse_show_vlan_brief_json(&json!({})).is_empty());
    }

    #[test]
    fn limits() {
        let v: Vlan = serde_json::from_value(json!({"id": 4000, "name": "x"})).unwrap();
        assert!(matches!(validate_vlan(&v), Err(VlanUnfit::Reserved(_))));
        let v: Vlan = serde_json::from_value(json!({"id": 100, "name": "web"})).unwrap();
        assert!(validate_vlan(&v).is_ok());
    }
}
