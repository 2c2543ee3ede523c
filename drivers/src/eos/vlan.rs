//! EOS VLANs: parse `show vlan` (JSON) and the `vlan` stanzas of `show running-config` (text), render
//! `vlan N` / `name X` / `no vlan N`, and check EOS's own limits.

use netgw_models::plan::{Action, VlanChange};
use netgw_models::resource::{Vlan, VlanId, VlanSet};
use serde_json::Value;

use super::RenderError;

/// EOS VLAN names are at most 32 characters (`name` truncates longer ones silently on some releases,
/// which would never converge).
pub const MAX_VLAN_NAME: usize = 32;

/// `show vlan` (JSON): `{"vlans": {"10": {"name": "web", "status": "active", ...}}}`, sorted by id.
/// Ids that are not 1..4094 are skipped (EOS never reports them).
pub fn parse_show_vlan(v: &Value) -> Vec<Vlan> {
    let mut out: Vec<Vlan> = v
        .get("vlans")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(id, body)| {
            let id = VlanId::parse(id).ok()?;
            let mut vlan = Vlan::new(id);
            vlan.name = body
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .filter(|n| !n.is_empty());
            Some(vlan)
        })
        .collect();
    out.sort_by_key(|v| v.id);
    out
}

/// Top-level sections of EOS running-config text: (header line, indented body lines). Banners
/// (`banner login` / `banner motd` ... `EOF`) are skipped whole: their text can hold anything, including
/// lines that look like `vlan 1`.
pub fn config_sections(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut in_banner = false;
    for raw in text.lines() {
        let line = raw.trim_end_matches(['\r', ' ']);
        if in_banner {
            if line.trim() == "EOF" {
                in_banner = false;
            }
            continue;
        }
        if line.trim().is_empty() || line.trim_start().starts_with('!') {
            continue;
        }
        if line.starts_with(' ') {
            if let Some((_, body)) = out.last_mut() {
                body.push(line.trim().to_owned());
            }
            continue;
        }
        if line.starts_with("banner ") {
            in_banner = true;
            continue;
        }
        out.push((line.to_owned(), Vec::new()));
    }
    out
}

/// VLANs from running-config text: `vlan 10` / `name web`, including grouped stanzas such as
/// `vlan 200-202,204` (one name for all of them). `vlan internal allocation policy ...` is not a VLAN.
pub fn parse_running_config_vlans(text: &str) -> Vec<Vlan> {
    let mut out: Vec<Vlan> = Vec::new();
    for (header, body) in config_sections(text) {
        let Some(list) = header.strip_prefix("vlan ") else {
            continue;
        };
        let Ok(ids) = VlanSet::parse(list.trim()) else {
            continue;
        };
        let name = body
            .iter()
            .find_map(|l| l.strip_prefix("name ").map(|n| n.trim().to_owned()));
        for id in ids.ids() {
            out.retain(|v| v.id != id);
            let mut vlan = Vlan::new(id);
            vlan.name = name.clone();
            out.push(vlan);
        }
    }
    out.sort_by_key(|v| v.id);
    out
}

/// EOS limits on desired VLANs, beyond the models' common rules.
pub fn validate_vlan(v: &Vlan) -> Result<(), VlanUnfit> {
    if let Some(n) = &v.name
        && n.len() > MAX_VLAN_NAME
    {
        return Err(VlanUnfit::NameTooLong(n.len()));
    }
    if v.description.is_some() {
        return Err(VlanUnfit::Description);
    }
    Ok(())
}

/// A desired VLAN EOS cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VlanUnfit {
    #[error("EOS VLAN names are at most {MAX_VLAN_NAME} characters ({0} given)")]
    NameTooLong(usize),
    #[error("EOS VLANs have no description (use name)")]
    Description,
}

/// Lines for one VLAN change: `vlan N`, `name X`, `exit`; or `no vlan N`.
pub fn render_vlan_change(c: &VlanChange) -> Result<Vec<String>, RenderError> {
    let mut out = Vec::new();
    match c.action {
        Action::Delete => out.push(format!("no vlan {}", c.id)),
        Action::Create | Action::Update => {
            out.push(format!("vlan {}", c.id));
            if let Some(after) = &c.after
                && c.changes.iter().any(|p| p.property == "name")
            {
                match &after.name {
                    Some(n) => out.push(format!("name {n}")),
                    None => out.push("no name".into()),
                }
            }
            out.push("exit".into());
        }
    }
    super::check_lines(&out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use netgw_models::plan::PropertyChange;
    use serde_json::json;

    fn id(n: i64) -> VlanId {
        VlanId::new(n).unwrap()
    }

    #[test]
    fn show_vlan_matches_napalm_get_vlans() {
        // napalm test/eos/mocked_data/test_get_vlans/normal: show_vlan.json vs expected_result.json names.
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/conformance/eos/facts/napalm_get_vlans"
        );
        let raw: Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{dir}/show_vlan.json")).unwrap(),
        )
        .unwrap();
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{dir}/napalm_expected_result.json")).unwrap(),
        )
        .unwrap();
        let got = parse_show_vlan(&raw);
        let exp = expected.as_object().unwrap();
        assert_eq!(got.len(), exp.len());
        for v in &got {
            assert_eq!(
                Some(exp[&v.id.to_string()]["name"].as_str().unwrap()),
                v.name.as_deref(),
                "vlan {}",
                v.id
            );
        }
    }

    #[test]
    fn running_config_vlans_with_groups_and_banners() {
        let text = "vlan internal allocation policy ascending\n!\nvlan 1\n   name default\n   state active\n!\n\
                    vlan 10\n   name VLAN0010\n   trunk group tg1\n!\nvlan 200-202,204\n   name grouping\n!\n\
                    banner login\nvlan 1\nvlan 999\nEOF\n!\nvlan 300\n!\n";
        let got = parse_running_config_vlans(text);
        let ids: Vec<u16> = got.iter().map(|v| v.id.get()).collect();
        assert_eq!(ids, [1, 10, 200, 201, 202, 204, 300]);
        assert_eq!(got[0].name.as_deref(), Some("default"));
        assert_eq!(got[4].name.as_deref(), Some("grouping"));
        assert_eq!(got[6].name, None);
    }

    #[test]
    fn render_create_rename_delete() {
        let mut web = Vlan::new(id(10));
        web.name = Some("web".into());
        let name_change = |after: &str| PropertyChange {
            property: "name",
            before: json!(null),
            after: json!(after),
        };
        let c = VlanChange {
            id: id(10),
            action: Action::Create,
            before: None,
            after: Some(web.clone()),
            changes: vec![
                PropertyChange {
                    property: "state",
                    before: json!("absent"),
                    after: json!("present"),
                },
                name_change("web"),
            ],
        };
        assert_eq!(
            render_vlan_change(&c).unwrap(),
            ["vlan 10", "name web", "exit"]
        );
        let bare = VlanChange {
            changes: vec![c.changes[0].clone()],
            ..c.clone()
        };
        assert_eq!(render_vlan_change(&bare).unwrap(), ["vlan 10", "exit"]);
        let del = VlanChange {
            action: Action::Delete,
            before: Some(web.clone()),
            after: None,
            ..c.clone()
        };
        assert_eq!(render_vlan_change(&del).unwrap(), ["no vlan 10"]);
        let mut evil = web.clone();
        evil.name = Some("x\nno vlan 1".into());
        let bad = VlanChange {
            after: Some(evil),
            ..c.clone()
        };
        assert!(
            render_vlan_change(&bad).is_err(),
            "a newline never reaches the device"
        );
        let mut evil = web;
        evil.name = Some("a;reload".into());
        assert!(
            render_vlan_change(&VlanChange {
                after: Some(evil),
                ..c
            })
            .is_err()
        );
    }

    #[test]
    fn eos_vlan_limits() {
        let mut v = Vlan::new(id(10));
        v.name = Some("a".repeat(32));
        assert!(validate_vlan(&v).is_ok());
        v.name = Some("a".repeat(33));
        assert!(validate_vlan(&v).unwrap_err().to_string().contains("32"));
        v.name = None;
        v.description = Some("x".into());
        assert!(validate_vlan(&v).is_err());
    }
}
