//! BIG-IP trunks (`/mgmt/tm/net/trunk`, link aggregation with LACP) and self IPs
//! (`/mgmt/tm/net/self`, addresses on VLANs), in iControl REST's shapes (f5-ansible's `bigip_trunk`
//! and `bigip_selfip`, genieparser's `get_net_self` sample, F5's API reference).
//!
//! A trunk is up while one of its members is up and bundled by the far end in a mode that bundles
//! with the trunk's (LACP `enabled` with `lacpMode` active or passive, one end active at least; or LACP
//! `disabled`, a static trunk, on both ends): `GET /mgmt/tm/net/trunk/stats` reports it. An interface
//! in a trunk is not a VLAN member itself (the trunk is), so joining a trunk while in a VLAN, adding a
//! trunk member to a VLAN, deleting a trunk a VLAN holds, or deleting a VLAN a self IP is on, is
//! refused, and so fails the whole transaction.

use super::f5::{VERSION, err};
use super::http::HttpReply;
use super::state::{DeviceState, Iface, Mode, SelfIp, Trunk, mac_for};
use serde_json::{Value, json};

fn text<'a>(body: &'a Value, k: &str) -> Option<&'a str> {
    body.get(k).and_then(Value::as_str)
}

/// `~Common~web`, `/Common/web` or `web` -> `web`.
fn local(s: &str) -> &str {
    s.rsplit(['~', '/']).next().unwrap_or(s)
}

fn trunk_members(st: &DeviceState, t: &Trunk) -> Vec<String> {
    st.interfaces
        .iter()
        .filter(|(n, f)| {
            !st.trunks.contains_key(n) && f.channel_group.as_ref().is_some_and(|(g, _)| *g == t.id)
        })
        .map(|(n, _)| n.clone())
        .collect()
}

fn trunk_json(st: &DeviceState, name: &str, t: &Trunk) -> Value {
    let members = trunk_members(st, t);
    let f = st.iface(name);
    let up = f.is_some_and(|f| f.oper_up);
    let mut v = json!({
        "kind": "tm:net:trunk:trunkstate", "name": name, "fullPath": name, "generation": 1,
        "selfLink": format!("https://localhost/mgmt/tm/net/trunk/{name}?ver={VERSION}"),
        "bandwidth": if up { 10_000 * members.len() } else { 0 }, "cfgMbrCount": members.len(),
        "distributionHash": "src-dst-ipport", "id": t.id,
        "lacp": if t.lacp { "enabled" } else { "disabled" }, "lacpMode": t.lacp_mode,
        "lacpTimeout": "long", "linkSelectPolicy": "auto",
        "macAddress": f.map(|f| f.mac.clone()).unwrap_or_default(), "media": "10000T-FD",
        "qinqEthertype": "0x8100", "stp": "enabled", "type": "normal",
        "workingMbrCount": if up { members.len() } else { 0 }
    });
    if let Some(m) = v.as_object_mut() {
        if let Some(f) = f.filter(|f| !f.description.is_empty()) {
            m.insert("description".into(), json!(f.description));
        }
        if !members.is_empty() {
            m.insert("interfaces".into(), json!(members));
        }
    }
    v
}

fn trunk_404(name: &str) -> HttpReply {
    err(
        404,
        &format!("01020036:3: The requested Trunk ({name}) was not found."),
    )
}

/// Whether the port is a member of some VLAN (VLAN 1 stands for none on BIG-IP).
fn in_a_vlan(f: &Iface) -> bool {
    match f.mode {
        Mode::Access => f.access_vlan != 1,
        Mode::Trunk => !f.trunk_allowed.is_empty() || f.native_vlan != 1,
        Mode::Routed => false,
    }
}

/// Put `members` into trunk `name` (the trunk's `interfaces` replace its member list).
fn set_trunk_members(st: &mut DeviceState, name: &str, members: &[Value]) -> Result<(), HttpReply> {
    let t = st
        .trunks
        .get(name)
        .cloned()
        .ok_or_else(|| trunk_404(name))?;
    let wanted: Vec<&str> = members.iter().filter_map(Value::as_str).collect();
    for m in &wanted {
        let f = st
            .iface(m)
            .filter(|_| !st.trunks.contains_key(*m))
            .ok_or_else(|| {
                err(
                    400,
                    &format!("01070523:3: The requested interface ({m}) was not found."),
                )
            })?;
        if f.channel_group.as_ref().is_some_and(|(g, _)| *g != t.id) {
            return Err(err(
                400,
                &format!(
                    "Interface {m} is a member of another trunk; remove it from that trunk first."
                ),
            ));
        }
        if f.channel_group.is_none() && in_a_vlan(f) {
            return Err(err(
                400,
                &format!(
                    "Interface {m} is a member of a VLAN and cannot join trunk {name}; remove it from the VLAN first."
                ),
            ));
        }
    }
    for (n, f) in st.interfaces.iter_mut() {
        let mine = f.channel_group.as_ref().is_some_and(|(g, _)| *g == t.id);
        if wanted.contains(&n.as_str()) {
            f.channel_group = Some((t.id, t.bundle_mode().to_owned()));
        } else if mine {
            f.channel_group = None;
        }
    }
    Ok(())
}

/// The trunk settings a `POST` or `PATCH` body carries.
fn set_trunk_settings(st: &mut DeviceState, name: &str, body: &Value) -> Result<(), HttpReply> {
    let t = st.trunks.get_mut(name).ok_or_else(|| trunk_404(name))?;
    match text(body, "lacp") {
        None => {}
        Some("enabled") => t.lacp = true,
        Some("disabled") => t.lacp = false,
        Some(o) => {
            return Err(err(
                400,
                &format!("invalid property value \"lacp\":\"{o}\""),
            ));
        }
    }
    match text(body, "lacpMode") {
        None => {}
        Some(m @ ("active" | "passive")) => t.lacp_mode = m.to_owned(),
        Some(o) => {
            return Err(err(
                400,
                &format!("invalid property value \"lacpMode\":\"{o}\""),
            ));
        }
    }
    let (id, mode) = (t.id, t.bundle_mode().to_owned());
    for (_, f) in st.interfaces.iter_mut() {
        if let Some((g, m)) = &mut f.channel_group
            && *g == id
        {
            *m = mode.clone();
        }
    }
    if let Some(d) = text(body, "description")
        && let Some(f) = st.iface_mut(name)
    {
        f.description = d.to_owned();
    }
    if let Some(m) = body.get("interfaces").and_then(Value::as_array) {
        set_trunk_members(st, name, m)?;
    }
    Ok(())
}

fn create_trunk(st: &mut DeviceState, body: &Value) -> Result<Value, HttpReply> {
    let name = text(body, "name")
        .filter(|n| !n.is_empty())
        .ok_or_else(|| err(400, "name is required"))?
        .to_owned();
    if st.trunks.contains_key(&name) || st.iface(&name).is_some() {
        return Err(err(
            409,
            &format!("01020066:3: The requested Trunk ({name}) already exists."),
        ));
    }
    let id = (0..)
        .find(|i| st.trunks.values().all(|t| t.id != *i))
        .unwrap_or(0);
    st.trunks.insert(
        name.clone(),
        Trunk {
            id,
            lacp: false,
            lacp_mode: "active".into(),
        },
    );
    let idx = 200_000 + id;
    st.interfaces
        .push((name.clone(), Iface::new(idx, mac_for(0, idx), 1500, false)));
    set_trunk_settings(st, &name, body)?;
    st.refresh_port_channels();
    let t = &st.trunks[&name];
    Ok(trunk_json(st, &name, t))
}

fn delete_trunk(st: &mut DeviceState, name: &str) -> Result<Value, HttpReply> {
    let f = st.iface(name).ok_or_else(|| trunk_404(name))?;
    if !st.trunks.contains_key(name) {
        return Err(trunk_404(name));
    }
    if in_a_vlan(f) {
        return Err(err(
            400,
            &format!(
                "Trunk {name} is a member of a VLAN and cannot be deleted; remove it from the VLAN first."
            ),
        ));
    }
    set_trunk_members(st, name, &[])?;
    st.trunks.remove(name);
    st.interfaces.retain(|(n, _)| n != name);
    Ok(json!({}))
}

/// `GET /mgmt/tm/net/trunk/stats`: per trunk its status (`up` or `down`) and working members.
fn trunk_stats(st: &DeviceState) -> Value {
    let mut entries = serde_json::Map::new();
    for (name, t) in &st.trunks {
        let up = st.iface(name).is_some_and(|f| f.oper_up);
        let members = trunk_members(st, t).len();
        entries.insert(
            format!("https://localhost/mgmt/tm/net/trunk/{name}/stats"),
            json!({"nestedStats": {"entries": {
                "id": {"value": t.id}, "tmName": {"description": name},
                "status": {"description": if up { "up" } else { "down" }},
                "operMbrCount": {"value": if up { members } else { 0 }},
                "bandwidth": {"value": if up { 10_000 * members } else { 0 }},
                "macAddress": {"description": st.iface(name).map(|f| f.mac.clone()).unwrap_or_default()}
            }}}),
        );
    }
    json!({"kind": "tm:net:trunk:trunkcollectionstats",
        "selfLink": format!("https://localhost/mgmt/tm/net/trunk/stats?ver={VERSION}"), "entries": entries})
}

fn self_json(name: &str, s: &SelfIp) -> Value {
    json!({
        "kind": "tm:net:self:selfstate", "name": name, "partition": "Common",
        "fullPath": format!("/Common/{name}"), "generation": 1,
        "selfLink": format!("https://localhost/mgmt/tm/net/self/~Common~{name}?ver={VERSION}"),
        "address": s.address, "addressSource": "from-user", "floating": "disabled",
        "inheritedTrafficGroup": "false", "trafficGroup": s.traffic_group,
        "trafficGroupReference": {"link": format!("https://localhost/mgmt/tm/cm/traffic-group/{}?ver={VERSION}", s.traffic_group.replace('/', "~"))},
        "unit": 0, "vlan": format!("/Common/{}", s.vlan),
        "vlanReference": {"link": format!("https://localhost/mgmt/tm/net/vlan/~Common~{}?ver={VERSION}", s.vlan)},
        "allowService": s.allow_service
    })
}

/// `A/L` with an address and a length that fits it.
fn valid_address(a: &str) -> bool {
    let Some((addr, len)) = a.split_once('/') else {
        return false;
    };
    let (Ok(ip), Ok(len)) = (addr.parse::<std::net::IpAddr>(), len.parse::<u8>()) else {
        return false;
    };
    len <= if ip.is_ipv4() { 32 } else { 128 }
}

fn create_self(st: &mut DeviceState, body: &Value) -> Result<Value, HttpReply> {
    let name = text(body, "name")
        .filter(|n| !n.is_empty())
        .ok_or_else(|| err(400, "name is required"))?
        .to_owned();
    let address = text(body, "address").unwrap_or("");
    if !valid_address(address) {
        return Err(err(
            400,
            &format!("01070734:3: Configuration error: invalid self IP address ({address})"),
        ));
    }
    let vlan = local(text(body, "vlan").unwrap_or("")).to_owned();
    if !st.vlans.iter().any(|(id, n)| *id != 1 && *n == vlan) {
        return Err(err(
            400,
            &format!("01020036:3: The requested VLAN (/Common/{vlan}) was not found."),
        ));
    }
    if st.self_ips.contains_key(&name) {
        return Err(err(
            409,
            &format!(
                "01020066:3: The requested Self IP (/Common/{name}) already exists in partition Common."
            ),
        ));
    }
    let ip = address.split_once('/').map(|(a, _)| a).unwrap_or(address);
    if st
        .self_ips
        .values()
        .any(|s| s.address.split_once('/').map(|(a, _)| a) == Some(ip))
    {
        return Err(err(
            409,
            &format!("01070734:3: Configuration error: the self IP address {ip} is in use"),
        ));
    }
    let s = SelfIp {
        address: address.to_owned(),
        vlan,
        traffic_group: text(body, "trafficGroup")
            .unwrap_or("/Common/traffic-group-local-only")
            .to_owned(),
        allow_service: text(body, "allowService").unwrap_or("none").to_owned(),
    };
    let v = self_json(&name, &s);
    st.self_ips.insert(name, s);
    Ok(v)
}

fn self_404(name: &str) -> HttpReply {
    err(
        404,
        &format!("01020036:3: The requested Self IP (/Common/{name}) was not found."),
    )
}

/// Refuse to delete a VLAN a self IP is on (BIG-IP keeps references whole).
pub(crate) fn vlan_in_use(st: &DeviceState, vlan: &str) -> Result<(), HttpReply> {
    match st.self_ips.iter().find(|(_, s)| s.vlan == vlan) {
        Some((n, _)) => Err(err(
            400,
            &format!("01070712:3: VLAN /Common/{vlan} is in use by self IP /Common/{n}"),
        )),
        None => Ok(()),
    }
}

/// Refuse a trunk member as a VLAN member (its trunk is the member).
pub(crate) fn vlan_member_allowed(st: &DeviceState, name: &str) -> Result<(), HttpReply> {
    match st.iface(name) {
        Some(f) if f.channel_group.is_some() && !st.trunks.contains_key(name) => Err(err(
            400,
            &format!(
                "Interface {name} is a trunk member and cannot be a VLAN member; add its trunk instead."
            ),
        )),
        _ => Ok(()),
    }
}

/// Trunk and self IP requests; `None` when the path is neither.
pub(crate) fn apply_net(
    st: &mut DeviceState,
    method: &str,
    parts: &[&str],
    body: &Value,
) -> Option<Result<Value, HttpReply>> {
    let collection = |kind: &str, items: Vec<Value>| {
        json!({"kind": format!("tm:net:{kind}:{kind}collectionstate"),
            "selfLink": format!("https://localhost/mgmt/tm/net/{kind}?ver={VERSION}"), "items": items})
    };
    Some(match (method, parts) {
        ("GET", ["mgmt", "tm", "net", "trunk"]) => Ok(collection(
            "trunk",
            st.trunks
                .iter()
                .map(|(n, t)| trunk_json(st, n, t))
                .collect(),
        )),
        ("GET", ["mgmt", "tm", "net", "trunk", "stats"]) => Ok(trunk_stats(st)),
        ("GET", ["mgmt", "tm", "net", "trunk", name]) => st
            .trunks
            .get(*name)
            .map(|t| trunk_json(st, name, t))
            .ok_or_else(|| trunk_404(name)),
        ("POST", ["mgmt", "tm", "net", "trunk"]) => create_trunk(st, body),
        ("PATCH" | "PUT", ["mgmt", "tm", "net", "trunk", name]) => {
            set_trunk_settings(st, name, body).map(|()| {
                st.refresh_port_channels();
                trunk_json(st, name, &st.trunks[*name])
            })
        }
        ("DELETE", ["mgmt", "tm", "net", "trunk", name]) => delete_trunk(st, name),
        ("GET", ["mgmt", "tm", "net", "self"]) => Ok(collection(
            "self",
            st.self_ips.iter().map(|(n, s)| self_json(n, s)).collect(),
        )),
        ("GET", ["mgmt", "tm", "net", "self", name]) => st
            .self_ips
            .get(local(name))
            .map(|s| self_json(local(name), s))
            .ok_or_else(|| self_404(local(name))),
        ("POST", ["mgmt", "tm", "net", "self"]) => create_self(st, body),
        ("DELETE", ["mgmt", "tm", "net", "self", name]) => st
            .self_ips
            .remove(local(name))
            .map(|_| json!({}))
            .ok_or_else(|| self_404(local(name))),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::state::{Dialect, Neighbor, PortFlag};

    fn req(st: &mut DeviceState, method: &str, path: &str, body: Value) -> Result<Value, u16> {
        let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        apply_net(st, method, &parts, &body)
            .expect("a trunk or self IP path")
            .map_err(|e| e.status)
    }

    /// A trunk's status follows its members' far ends: LACP with one active end, or static on both.
    #[test]
    fn a_trunk_is_up_only_when_the_far_end_bundles_compatibly() {
        let modes = [
            ("enabled", "active"),
            ("enabled", "passive"),
            ("disabled", "active"),
        ];
        for (lacp, mode) in modes {
            for far in ["active", "passive", "on"] {
                let (near_end, far_end) = (PortFlag::default(), PortFlag::default());
                let mut st = DeviceState::new(Dialect::F5, "lb", 1, 2);
                st.interfaces[0].1.oper_up = true;
                st.neighbors.push(Neighbor {
                    local_port: "1.1".into(),
                    system_name: "sw".into(),
                    port: "Ethernet1".into(),
                    chassis_id: String::new(),
                    local_up: near_end,
                    peer_up: far_end.clone(),
                });
                far_end.set_bundle(Some(far));
                req(
                    &mut st,
                    "POST",
                    "/mgmt/tm/net/trunk",
                    json!({"name": "lag1", "lacp": lacp, "lacpMode": mode, "interfaces": ["1.1"]}),
                )
                .unwrap();
                let ours = if lacp == "enabled" { mode } else { "on" };
                assert_eq!(
                    st.iface("1.1").unwrap().channel_group,
                    Some((0, ours.to_owned())),
                    "the member publishes the trunk's mode"
                );
                st.refresh_port_channels();
                let want = matches!(
                    (ours, far),
                    ("active", "active" | "passive") | ("passive", "active") | ("on", "on")
                );
                let stats = req(&mut st, "GET", "/mgmt/tm/net/trunk/stats", Value::Null).unwrap();
                let status = &stats["entries"]["https://localhost/mgmt/tm/net/trunk/lag1/stats"]["nestedStats"]
                    ["entries"]["status"]["description"];
                assert_eq!(
                    status,
                    if want { "up" } else { "down" },
                    "{ours} with {far}"
                );
            }
        }
    }

    /// References stay whole: a VLAN member cannot join a trunk, a trunk member cannot join a VLAN,
    /// a trunk in a VLAN or a VLAN with a self IP cannot be deleted.
    #[test]
    fn trunks_vlans_and_self_ips_refuse_broken_references() {
        let mut st = DeviceState::new(Dialect::F5, "lb", 1, 3);
        st.vlans.insert(100, "servers".into());
        st.iface_mut("1.3").unwrap().access_vlan = 100;
        req(
            &mut st,
            "POST",
            "/mgmt/tm/net/trunk",
            json!({"name": "lag1", "interfaces": ["1.1"]}),
        )
        .unwrap();
        assert_eq!(
            req(
                &mut st,
                "PATCH",
                "/mgmt/tm/net/trunk/lag1",
                json!({"interfaces": ["1.1", "1.3"]})
            ),
            Err(400),
            "1.3 is in VLAN servers"
        );
        assert!(vlan_member_allowed(&st, "1.1").is_err());
        assert!(vlan_member_allowed(&st, "lag1").is_ok());
        st.iface_mut("lag1").unwrap().access_vlan = 100;
        assert_eq!(
            req(&mut st, "DELETE", "/mgmt/tm/net/trunk/lag1", Value::Null),
            Err(400)
        );
        let s = req(
            &mut st,
            "POST",
            "/mgmt/tm/net/self",
            json!({"name": "s1", "address": "10.0.0.1/24", "vlan": "/Common/servers"}),
        )
        .unwrap();
        assert_eq!(
            (
                s["address"].as_str(),
                s["vlan"].as_str(),
                s["trafficGroup"].as_str()
            ),
            (
                Some("10.0.0.1/24"),
                Some("/Common/servers"),
                Some("/Common/traffic-group-local-only")
            )
        );
        assert!(vlan_in_use(&st, "servers").is_err());
        assert_eq!(
            req(
                &mut st,
                "POST",
                "/mgmt/tm/net/self",
                json!({"name": "s2", "address": "10.0.0.1/24", "vlan": "/Common/servers"})
            ),
            Err(409),
            "the address is in use"
        );
        assert_eq!(
            req(
                &mut st,
                "POST",
                "/mgmt/tm/net/self",
                json!({"name": "s3", "address": "10.0.1.1/24", "vlan": "/Common/nope"})
            ),
            Err(400)
        );
        req(
            &mut st,
            "DELETE",
            "/mgmt/tm/net/self/~Common~s1",
            Value::Null,
        )
        .unwrap();
        assert!(vlan_in_use(&st, "servers").is_ok());
    }
}
