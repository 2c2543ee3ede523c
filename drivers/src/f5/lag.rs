//! Aggregates and routed interfaces on BIG-IP: `net trunk` as netgw's `lag`, `net self` as the
//! addresses of an `l3_interface` on a VLAN, parsed from iControl REST and rendered as its requests.
//!
//! Mapping (netgw <- BIG-IP):
//! * `lag` = one `net trunk` (`GET /mgmt/tm/net/trunk`): `name`; `links` = `interfaces`; `lacp` =
//!   `lacpMode` (`active`, `passive`) when `lacp: enabled`, `on` when `lacp: disabled` (a static
//!   trunk); `description`; the trunk's VLANs are its VLAN memberships, read and written as a link's
//!   (`link.rs`). BIG-IP trunks have no minimum-links setting, no enabled flag and no MTU (set per
//!   VLAN): a declaration of any of them is refused before anything is sent.
//! * `l3_interface` `VlanN` = the self IPs (`GET /mgmt/tm/net/self`) whose `vlan` is the VLAN tagged
//!   N: `address` (`A/L`) into `ipv4` or `ipv6`, each list in ascending order. BIG-IP has no primary
//!   address, so a declared IPv4 list must be in that order too (else every run would see a change),
//!   and no routed ports (layer 3 lives on VLANs), no per-VLAN-interface description or shutdown.
//!   Self IPs in a route domain other than 0 (`A%N/L`) are left out. netgw names a self IP it
//!   creates `self-TAG-ADDRESS` (`:` written as `_`), in `/Common`, traffic group
//!   `traffic-group-local-only`, `allowService: none`; one it did not create keeps its name.
//!
//! Order in the transaction (BIG-IP runs it in order and keeps all or nothing): self IPs removed,
//! trunks losing members (so they are free), trunks created (no members yet), the VLAN requests
//! (`config.rs`; a joining member leaves its VLANs there, a removed trunk leaves its VLANs), trunks
//! completed (members, LACP, description) or deleted, interfaces, self IPs added.

use std::collections::BTreeSet;

use netgw_models::plan::l3::{IpCidr, L3Interface};
use netgw_models::plan::lag::{LacpMode, Lag};
use netgw_models::resource::{Link, LinkMode, VlanId};
use serde_json::{Map, Value, json};

use super::rest::{RestMethod, RestOp};
use super::text;
use super::vlan::F5Vlan;

pub const SELF_COLLECTION: &str = "/mgmt/tm/net/self";
pub const TRUNK_STATS: &str = "/mgmt/tm/net/trunk/stats";
pub const TRAFFIC_GROUP: &str = "/Common/traffic-group-local-only";

/// One `net trunk` as the device reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct F5Trunk {
    pub name: String,
    pub description: Option<String>,
    pub members: Vec<String>,
    pub lacp: LacpMode,
}

impl F5Trunk {
    pub fn path(&self) -> String {
        trunk_path(&self.name)
    }
}

pub fn trunk_path(name: &str) -> String {
    super::link::link_path(super::link::LinkKind::Trunk, name)
}

/// One `net self` as the device reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct F5Self {
    pub name: String,
    /// `/Common/self-100-10.0.0.1`.
    pub full_path: String,
    pub address: IpCidr,
    /// The VLAN's name without its partition.
    pub vlan: String,
    /// The object as received (a restore re-creates it with the same settings).
    pub raw: Value,
}

impl F5Self {
    pub fn path(&self) -> String {
        format!("{SELF_COLLECTION}/{}", self.full_path.replace('/', "~"))
    }
}

/// `GET /mgmt/tm/net/trunk` (a collection, or one trunk object as in F5's MOCK).
pub fn parse_trunks(v: &Value) -> Vec<F5Trunk> {
    let items = super::items_or_one(v);
    items
        .into_iter()
        .filter_map(|t| {
            let lacp = match (text(t, "lacp").as_deref(), text(t, "lacpMode").as_deref()) {
                (Some("enabled"), Some("passive")) => LacpMode::Passive,
                (Some("enabled"), _) => LacpMode::Active,
                _ => LacpMode::On,
            };
            Some(F5Trunk {
                name: text(t, "name")?,
                description: text(t, "description"),
                members: t
                    .get("interfaces")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|i| i.as_str().map(str::to_owned).or_else(|| text(i, "name")))
                    .collect(),
                lacp,
            })
        })
        .collect()
}

/// `10.0.0.1/24` (route domain 0, written `%0` or not); `None` for another route domain.
fn parse_address(a: &str) -> Option<IpCidr> {
    let (addr, len) = a.split_once('/')?;
    let addr = match addr.split_once('%') {
        Some((a, "0")) => a,
        Some(_) => return None,
        None => addr,
    };
    format!("{addr}/{len}").parse().ok()
}

/// `GET /mgmt/tm/net/self`.
pub fn parse_selfs(v: &Value) -> Vec<F5Self> {
    super::items(v)
        .filter_map(|s| {
            let name = text(s, "name")?;
            let full_path = text(s, "fullPath").unwrap_or_else(|| format!("/Common/{name}"));
            let address = parse_address(&text(s, "address")?)?;
            let vlan = text(s, "vlan")?;
            Some(F5Self {
                name,
                full_path,
                address,
                vlan: super::vlan::local_name(&vlan).to_owned(),
                raw: s.clone(),
            })
        })
        .collect()
}

/// `GET /mgmt/tm/net/trunk/stats`: each trunk's name and whether it is up.
pub fn parse_trunk_stats(v: &Value) -> Vec<(String, bool)> {
    let Some(entries) = v.get("entries").and_then(Value::as_object) else {
        return vec![];
    };
    entries
        .values()
        .filter_map(|e| {
            let n = e.get("nestedStats")?.get("entries")?;
            let name = n.get("tmName")?.get("description")?.as_str()?;
            let status = n.get("status")?.get("description")?.as_str()?;
            Some((super::vlan::local_name(name).to_owned(), status == "up"))
        })
        .collect()
}

/// The aggregates in netgw's model, their own settings from the trunks' links (`links`: the
/// model of every interface and trunk).
pub fn lags_to_model(trunks: &[F5Trunk], links: &[Link]) -> Vec<Lag> {
    trunks
        .iter()
        .map(|t| {
            let mut l = Lag::new(t.name.clone());
            if let Some(s) = links.iter().find(|l| l.name == t.name) {
                l.set_settings(s.clone());
            }
            l.description = t.description.clone();
            l.links = Some(t.members.clone());
            l.lacp = Some(t.lacp);
            l
        })
        .collect()
}

/// The routed interfaces in netgw's model: `VlanN` per VLAN with self IPs.
pub fn l3_to_model(selfs: &[F5Self], vlans: &[F5Vlan]) -> Vec<L3Interface> {
    let mut out: Vec<L3Interface> = Vec::new();
    for s in selfs {
        let Some(tag) = vlans
            .iter()
            .find(|v| v.name == s.vlan && v.partition.as_deref().unwrap_or("Common") == "Common")
            .and_then(|v| v.tag)
        else {
            continue;
        };
        let name = format!("Vlan{tag}");
        let i = match out.iter().position(|l| l.name == name) {
            Some(i) => i,
            None => {
                let mut l = L3Interface::new(name);
                // A BIG-IP VLAN has no shutdown: its addresses are always in use.
                l.enabled = Some(true);
                out.push(l);
                out.len() - 1
            }
        };
        let l = &mut out[i];
        let list = if s.address.addr.is_ipv4() {
            l.ipv4.get_or_insert_with(Vec::new)
        } else {
            l.ipv6.get_or_insert_with(Vec::new)
        };
        list.push(s.address);
        list.sort();
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The name netgw gives a self IP it creates.
pub fn self_name(tag: VlanId, a: &IpCidr) -> String {
    format!("self-{tag}-{}", a.addr).replace(':', "_")
}

/// Why an aggregate or routed interface cannot be rendered on BIG-IP: each names the resource.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unfit {
    #[error("in lag {0}: BIG-IP trunks have no minimum links; remove minimum_links")]
    MinimumLinks(String),
    #[error(
        "in lag {0}: a BIG-IP trunk has no enabled flag (it carries traffic while a member is up; disable members instead); remove enabled"
    )]
    TrunkEnabled(String),
    #[error("in lag {0}: BIG-IP sets the MTU per VLAN, not per trunk; remove mtu")]
    TrunkMtu(String),
    #[error("in lag {0}: BIG-IP trunks have no routed mode (layer 3 lives on VLAN self IPs)")]
    TrunkRouted(String),
    #[error("in lag {0}: {1}")]
    TrunkName(String, super::vlan::NameUnfit),
    #[error("in lag {0}: no such trunk on the device")]
    NoSuchTrunk(String),
    #[error("in lag {0}: to be created but the device has it")]
    TrunkExists(String),
    #[error(
        "in l3_interface {0}: BIG-IP has no routed ports; its addresses are self IPs on a VLAN (declare VlanN)"
    )]
    NotAVlan(String),
    #[error(
        "in l3_interface {0}: VLAN {1} does not exist on the device and this plan does not create it"
    )]
    NoVlan(String, u16),
    #[error(
        "in l3_interface {0}: BIG-IP VLAN interfaces have no {1} here (a VLAN's addresses are its self IPs); remove {1}"
    )]
    Unsupported(String, &'static str),
    #[error(
        "in l3_interface {0}: BIG-IP self IPs have no primary address; declare the ipv4 list in ascending order ({1})"
    )]
    Order(String, String),
    #[error("in l3_interface {0}: the device has no self IP with {1} to remove")]
    NoSelf(String, IpCidr),
}

/// The trunk requests of a plan, in their three places of the transaction (see the module docs).
#[derive(Debug, Default)]
pub struct TrunkOps {
    pub free: Vec<RestOp>,
    pub create: Vec<RestOp>,
    pub finish: Vec<RestOp>,
}

/// `lacp` and `lacpMode` for a mode.
pub fn lacp_body(o: &mut Map<String, Value>, m: LacpMode) {
    match m {
        LacpMode::On => {
            o.insert("lacp".into(), json!("disabled"));
        }
        LacpMode::Active | LacpMode::Passive => {
            o.insert("lacp".into(), json!("enabled"));
            o.insert("lacpMode".into(), json!(m.to_string()));
        }
    }
}

/// Vendor limits on a lag's target state.
pub fn check_lag(after: &Lag) -> Result<(), Unfit> {
    let n = || after.name.clone();
    super::vlan::validate_f5_name(&after.name).map_err(|e| Unfit::TrunkName(n(), e))?;
    if after.minimum_links.is_some() {
        return Err(Unfit::MinimumLinks(n()));
    }
    // Either value: `true` could never be read back, so it would be a change on every run.
    if after.enabled.is_some() {
        return Err(Unfit::TrunkEnabled(n()));
    }
    if after.mtu.is_some() {
        return Err(Unfit::TrunkMtu(n()));
    }
    if after.mode == Some(LinkMode::Routed) {
        return Err(Unfit::TrunkRouted(n()));
    }
    Ok(())
}

/// The request that brings a trunk from `before` (`None`: just created, no members) to `after`.
pub fn trunk_patch(before: Option<&F5Trunk>, after: &Lag) -> Option<RestOp> {
    let mut o = Map::new();
    let members: Vec<String> = before.map(|b| b.members.clone()).unwrap_or_default();
    if after.members() != members.as_slice() {
        o.insert("interfaces".into(), json!(after.members()));
    }
    if let Some(m) = after.lacp
        && before.is_some_and(|b| b.lacp != m)
    {
        lacp_body(&mut o, m);
    }
    if before.is_some_and(|b| b.description != after.description) {
        o.insert(
            "description".into(),
            json!(after.description.as_deref().unwrap_or("")),
        );
    }
    (!o.is_empty()).then(|| {
        RestOp::new(
            RestMethod::Patch,
            trunk_path(&after.name),
            Some(Value::Object(o)),
        )
    })
}

/// `POST /mgmt/tm/net/trunk` for a new trunk, without members (they join once free).
pub fn trunk_create(after: &Lag) -> RestOp {
    let mut o = Map::new();
    o.insert("name".into(), json!(after.name));
    lacp_body(&mut o, after.lacp.unwrap_or(LacpMode::Active));
    if let Some(d) = &after.description {
        o.insert("description".into(), json!(d));
    }
    RestOp::new(
        RestMethod::Post,
        super::link::TRUNK_COLLECTION,
        Some(Value::Object(o)),
    )
}

/// `POST /mgmt/tm/net/self` for an address on VLAN `vlan` (its name).
pub fn self_create(name: &str, a: &IpCidr, vlan: &str) -> RestOp {
    RestOp::new(
        RestMethod::Post,
        SELF_COLLECTION,
        Some(
            json!({"name": name, "partition": super::vlan::PARTITION, "address": a.to_string(),
            "vlan": format!("/{}/{vlan}", super::vlan::PARTITION), "trafficGroup": TRAFFIC_GROUP,
            "allowService": "none"}),
        ),
    )
}

/// A self IP re-created as it was recorded (its name, VLAN and settings).
pub fn self_recreate(s: &F5Self) -> RestOp {
    let mut o = Map::new();
    o.insert("name".into(), json!(s.name));
    o.insert(
        "partition".into(),
        json!(text(&s.raw, "partition").unwrap_or_else(|| super::vlan::PARTITION.into())),
    );
    for k in [
        "address",
        "vlan",
        "trafficGroup",
        "allowService",
        "floating",
        "description",
    ] {
        if let Some(v) = s.raw.get(k).filter(|v| !v.is_null()) {
            o.insert(k.into(), v.clone());
        }
    }
    RestOp::new(RestMethod::Post, SELF_COLLECTION, Some(Value::Object(o)))
}

/// The touched trunks' and self IPs' requests that take `now` back to `pre`, in the transaction's
/// places: (self IP deletes, trunk frees, trunk creates, trunk completions and deletes, self IP
/// creates).
pub struct Restore {
    pub self_deletes: Vec<RestOp>,
    pub trunks: TrunkOps,
    pub self_creates: Vec<RestOp>,
}

fn lag_of(t: &F5Trunk) -> Lag {
    let mut l = Lag::new(t.name.clone());
    l.links = Some(t.members.clone());
    l.lacp = Some(t.lacp);
    l.description = t.description.clone();
    l
}

pub fn render_restore(
    pre: (&[F5Trunk], &[F5Self]),
    now: (&[F5Trunk], &[F5Self]),
    touched: (&BTreeSet<String>, &BTreeSet<String>),
) -> Restore {
    let mut r = Restore {
        self_deletes: vec![],
        trunks: TrunkOps::default(),
        self_creates: vec![],
    };
    let find_self = |list: &[F5Self], p: &str| list.iter().find(|s| s.full_path == p).cloned();
    for p in touched.1 {
        match (find_self(pre.1, p), find_self(now.1, p)) {
            (None, Some(n)) => r
                .self_deletes
                .push(RestOp::new(RestMethod::Delete, n.path(), None)),
            (Some(b), None) => r.self_creates.push(self_recreate(&b)),
            _ => {}
        }
    }
    let find = |list: &[F5Trunk], n: &str| list.iter().find(|t| t.name == n).cloned();
    for name in touched.0 {
        let (p, n) = (find(pre.0, name), find(now.0, name));
        if let Some(n) = &n {
            let keep: Vec<String> = n
                .members
                .iter()
                .filter(|m| p.as_ref().is_some_and(|p| p.members.contains(m)))
                .cloned()
                .collect();
            if keep != n.members {
                r.trunks.free.push(RestOp::new(
                    RestMethod::Patch,
                    n.path(),
                    Some(json!({"interfaces": keep})),
                ));
            }
        }
        match (p, n) {
            (Some(p), None) => {
                r.trunks.create.push(trunk_create(&lag_of(&p)));
                r.trunks.finish.extend(trunk_patch(None, &lag_of(&p)));
            }
            (None, Some(n)) => {
                r.trunks
                    .finish
                    .push(RestOp::new(RestMethod::Delete, n.path(), None))
            }
            (Some(p), Some(mut n)) => {
                n.members.retain(|m| p.members.contains(m));
                r.trunks.finish.extend(trunk_patch(Some(&n), &lag_of(&p)));
            }
            (None, None) => {}
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f5_lag_trunks_selfs_and_model() {
        // The shape of `bigip_trunk`'s object (f5-ansible) and genieparser's `get_net_self` sample.
        let trunks = parse_trunks(&json!({"items": [
            {"kind": "tm:net:trunk:trunkstate", "name": "lag1", "fullPath": "lag1", "interfaces": ["1.1", "1.2"],
             "lacp": "enabled", "lacpMode": "passive", "lacpTimeout": "long", "description": "to sw"},
            {"name": "static", "lacp": "disabled", "lacpMode": "active"}
        ]}));
        assert_eq!(trunks[0].members, ["1.1", "1.2"]);
        assert_eq!(trunks[0].lacp, LacpMode::Passive);
        assert_eq!(trunks[1].lacp, LacpMode::On);
        assert!(trunks[1].members.is_empty());
        let selfs = parse_selfs(&json!({"items": [
            {"kind": "tm:net:self:selfstate", "name": "Services-SelfIP", "partition": "Common",
             "fullPath": "/Common/Services-SelfIP", "address": "172.16.2.233/24", "vlan": "/Common/Services"},
            {"name": "v6", "fullPath": "/Common/v6", "address": "2001:db8::1/64", "vlan": "/Common/Services"},
            {"name": "b", "fullPath": "/Common/b", "address": "172.16.1.1%0/24", "vlan": "/Common/Services"},
            {"name": "rd", "fullPath": "/Common/rd", "address": "10.0.0.1%2/24", "vlan": "/Common/Services"}
        ]}));
        assert_eq!(selfs.len(), 3, "route domain 2 left out");
        let vlans = super::super::vlan::parse_vlans(
            &json!({"items": [{"name": "Services", "fullPath": "/Common/Services", "tag": 100}]}),
        );
        let l3 = l3_to_model(&selfs, &vlans);
        assert_eq!(l3.len(), 1);
        assert_eq!(l3[0].name, "Vlan100");
        let v4: Vec<String> = l3[0].ipv4.iter().flatten().map(|a| a.to_string()).collect();
        assert_eq!(v4, ["172.16.1.1/24", "172.16.2.233/24"], "ascending");
        assert_eq!(l3[0].ipv6.as_ref().unwrap().len(), 1);
        let stats = parse_trunk_stats(&json!({"entries": {
            "https://localhost/mgmt/tm/net/trunk/lag1/stats": {"nestedStats": {"entries": {
                "tmName": {"description": "lag1"}, "status": {"description": "up"}}}}}}));
        assert_eq!(stats, [("lag1".to_owned(), true)]);
    }

    #[test]
    fn f5_lag_requests_and_limits() {
        let mut l = Lag::new("lag1");
        l.links = Some(vec!["1.1".into(), "1.2".into()]);
        l.lacp = Some(LacpMode::Active);
        assert_eq!(
            trunk_create(&l).render(),
            r#"POST /mgmt/tm/net/trunk {"name":"lag1","lacp":"enabled","lacpMode":"active"}"#
        );
        assert_eq!(
            trunk_patch(None, &l).unwrap().render(),
            r#"PATCH /mgmt/tm/net/trunk/lag1 {"interfaces":["1.1","1.2"]}"#
        );
        let before = F5Trunk {
            name: "lag1".into(),
            description: None,
            members: vec!["1.1".into(), "1.2".into()],
            lacp: LacpMode::Passive,
        };
        assert_eq!(
            trunk_patch(Some(&before), &l).unwrap().render(),
            r#"PATCH /mgmt/tm/net/trunk/lag1 {"lacp":"enabled","lacpMode":"active"}"#
        );
        l.lacp = Some(LacpMode::On);
        assert_eq!(
            trunk_patch(Some(&before), &l).unwrap().render(),
            r#"PATCH /mgmt/tm/net/trunk/lag1 {"lacp":"disabled"}"#
        );
        for enabled in [true, false] {
            let mut e = l.clone();
            e.enabled = Some(enabled);
            assert_eq!(check_lag(&e), Err(Unfit::TrunkEnabled("lag1".into())));
        }
        l.minimum_links = Some(1);
        assert_eq!(check_lag(&l), Err(Unfit::MinimumLinks("lag1".into())));
        let a: IpCidr = "2001:db8::1/64".parse().unwrap();
        assert_eq!(
            self_name(VlanId::new(100).unwrap(), &a),
            "self-100-2001_db8__1"
        );
        assert!(
            super::super::vlan::validate_f5_name(&self_name(VlanId::new(100).unwrap(), &a)).is_ok()
        );
    }
}
