//! The files containerlab generates, read as inventories: `topology-data.json` (`clab-LAB/`) and
//! `ansible-inventory.yml`. (Its `nornir-simple-inventory.yml` is a Nornir hosts file and needs nothing
//! special.) Nodes of kinds netgw has no driver for are left out with a warning.

use super::{Entry, InventoryError, file_err};
use netgw_drivers::driver::Platform;
use netgw_models::topology::platform_for_kind;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Hosts, groups (name -> member hosts), warnings.
pub(super) type Read = (
    BTreeMap<String, Entry>,
    BTreeMap<String, Entry>,
    Vec<String>,
);

/// `topology-data.json`: `{"name", "type": "clab", "nodes": {NAME: {kind, mgmt-ipv4-address, group,
/// labels, ...}}}`.
pub(super) fn topology_data(path: &Path, v: &Value) -> Result<Read, InventoryError> {
    let nodes = v
        .get("nodes")
        .and_then(Value::as_object)
        .ok_or_else(|| file_err(path, "field `nodes`: missing or not a map"))?;
    let mut hosts = BTreeMap::new();
    let mut groups: BTreeMap<String, Entry> = BTreeMap::new();
    let mut warnings = Vec::new();
    for (name, n) in nodes {
        let kind = n.get("kind").and_then(Value::as_str).unwrap_or("");
        let platform = platform_for_kind(kind);
        if !has_driver(platform) {
            warnings.push(format!(
                "{name}: kind {kind:?} is not supported by netgw (skipped)"
            ));
            continue;
        }
        let addr = n
            .get("mgmt-ipv4-address")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .or_else(|| {
                n.get("mgmt-ipv6-address")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
            })
            .or_else(|| n.get("longname").and_then(Value::as_str));
        let (user, pass) = super::default_credentials(kind);
        let mut e = Entry {
            hostname: addr.map(str::to_owned),
            platform: platform.map(str::to_owned),
            username: Some(user.into()),
            password: Some(pass.into()),
            ..Default::default()
        };
        if let Some(lab) = v.get("name").and_then(Value::as_str) {
            e.data
                .insert("containerlab".into(), serde_json::json!({"topology": lab}));
        }
        if let Some(g) = n
            .get("group")
            .and_then(Value::as_str)
            .filter(|g| !g.is_empty())
        {
            e.groups.push(g.to_owned());
            groups.entry(g.to_owned()).or_default();
        }
        e.data.insert("kind".into(), Value::String(kind.into()));
        hosts.insert(name.clone(), e);
    }
    Ok((hosts, groups, warnings))
}

/// The netgw platform an Ansible `ansible_network_os` names.
fn platform_for_network_os(os: &str) -> Option<&'static str> {
    let os = os.to_ascii_lowercase();
    let last = os.rsplit('.').next().unwrap_or(&os);
    Some(match last {
        "eos" => "eos",
        "junos" => "junos",
        "ios" | "iosxe" => "ios",
        "nxos" => "nxos",
        "bigip" | "f5" => "f5",
        _ => return None,
    })
}

/// `ansible-inventory.yml`: `all: {vars, children: {GROUP: {vars, hosts: {NAME: {ansible_host}}}}}`.
/// containerlab names one child group per kind (with `ansible_network_os`, `ansible_user`,
/// `ansible_password` in its vars) and adds the topology's own groups.
pub(super) fn ansible(path: &Path, v: &Value) -> Result<Read, InventoryError> {
    let all = v
        .get("all")
        .ok_or_else(|| file_err(path, "field `all`: missing"))?;
    let all_vars = all
        .get("vars")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let children = all
        .get("children")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut hosts: BTreeMap<String, Entry> = BTreeMap::new();
    let mut groups: BTreeMap<String, Entry> = BTreeMap::new();
    let mut warnings = Vec::new();
    let var = |vars: &serde_json::Map<String, Value>, k: &str| {
        vars.get(k).and_then(Value::as_str).map(str::to_owned)
    };
    for (gname, g) in &children {
        let gvars = g
            .get("vars")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let platform = var(&gvars, "ansible_network_os")
            .as_deref()
            .and_then(platform_for_network_os)
            .or_else(|| platform_for_kind(gname));
        let members = g
            .get("hosts")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (hname, h) in &members {
            let hvars = h.as_object().cloned().unwrap_or_default();
            let e = hosts.entry(hname.clone()).or_default();
            if e.hostname.is_none() {
                e.hostname = var(&hvars, "ansible_host");
            }
            if e.platform.is_none() {
                e.platform = platform.map(str::to_owned);
            }
            if e.username.is_none() {
                e.username = var(&hvars, "ansible_user")
                    .or_else(|| var(&gvars, "ansible_user"))
                    .or_else(|| var(&all_vars, "ansible_user"));
            }
            if e.password.is_none() {
                e.password = var(&hvars, "ansible_password")
                    .or_else(|| var(&gvars, "ansible_password"))
                    .or_else(|| var(&all_vars, "ansible_password"));
            }
            if platform.is_none() && !e.groups.contains(gname) {
                e.groups.push(gname.clone());
                groups.entry(gname.clone()).or_default();
            }
        }
    }
    let mut out = BTreeMap::new();
    for (name, e) in hosts {
        if !has_driver(e.platform.as_deref()) {
            warnings.push(format!(
                "{name}: platform {:?} is not supported by netgw (skipped)",
                e.platform.as_deref().unwrap_or("unknown")
            ));
            continue;
        }
        out.insert(name, e);
    }
    Ok((out, groups, warnings))
}

fn has_driver(platform: Option<&str>) -> bool {
    platform
        .and_then(Platform::parse)
        .is_some_and(netgw_drivers::registry::has_driver)
}
