//! Reading netgw-lab devices back through the simulator's own state (never through netgw's drivers),
//! and the seeded generator the fault campaigns draw from.

use netgw_labs::lab::{Lab, Sim};
use netgw_labs::sim::state::Dialect;

/// Deterministic pseudo-random numbers (splitmix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// Log-uniform in [lo, hi): as many offsets among the first kilobytes as among the last.
    pub fn log_between(&mut self, lo: u64, hi: u64) -> u64 {
        let (l, h) = ((lo.max(1) as f64).ln(), (hi as f64).ln());
        let x = l + (self.next() as f64 / u64::MAX as f64) * (h - l);
        (x.exp() as u64).clamp(lo, hi - 1)
    }
}

/// What the device holds: VLANs and interface configuration, aggregates (membership, LACP mode,
/// minimum links; BIG-IP trunks) and addresses (BIG-IP self IPs) included, MACs, indexes and
/// operational state left out (they differ per device), or Junos' running configuration; `node` and
/// `control` (a device converged to the same desired state) are both written `NODE`, so the two
/// compare.
pub fn snapshot(lab: &Lab, node: &str, control: &str) -> String {
    let n = lab.node(node).unwrap();
    let text = match &n.sim {
        Sim::Junos(j) => j.running_xml(),
        _ => {
            let st = n.device.state().clone();
            let mut s = format!("vlans {:?}\n", st.vlans);
            for (name, i) in &st.interfaces {
                s.push_str(&format!(
                    "{name} desc={:?} en={} mtu={} mode={:?} access={} trunk={} native={}\n",
                    i.description,
                    i.enabled,
                    i.mtu,
                    i.mode,
                    i.access_vlan,
                    i.trunk_allowed.to_range_string(),
                    i.native_vlan
                ));
                if i.channel_group.is_some() || i.min_links > 0 {
                    // A BIG-IP trunk's number is the device's own pick (the lowest free): by name.
                    let group = i.channel_group.as_ref().map(|(n, mode)| {
                        let trunk = st.trunks.iter().find(|(_, t)| t.id == *n);
                        (trunk.map_or(n.to_string(), |(t, _)| t.clone()), mode)
                    });
                    s.push_str(&format!(
                        "  channel-group={group:?} min-links={}\n",
                        i.min_links
                    ));
                }
                if !i.ipv4.is_empty() || !i.ipv6.is_empty() {
                    s.push_str(&format!("  ipv4={:?} ipv6={:?}\n", i.ipv4, i.ipv6));
                }
            }
            for (name, t) in &st.trunks {
                s.push_str(&format!("trunk {name} lacp={} {}\n", t.lacp, t.lacp_mode));
            }
            for (name, a) in &st.self_ips {
                s.push_str(&format!("self {name} {a:?}\n"));
            }
            s
        }
    };
    text.replace(node, "NODE").replace(control, "NODE")
}

/// Whether a Junos confirmed commit or an EOS session commit timer is still pending anywhere.
pub fn pending_timer(lab: &Lab) -> bool {
    lab.nodes.iter().any(|n| match &n.sim {
        Sim::Junos(j) => j.pending_confirm(),
        Sim::Eos(e) => e.pending_timer(),
        _ => false,
    })
}

/// A seeded aggregate-and-address change for a campaign device: what a first converge puts on the
/// device (`seed`: a VLAN, an LACP aggregate of two ports trunking it, and its routed interface with
/// IPv4 and IPv6 addresses) and what the change under test does with aggregates and addresses
/// (`lags`, `l3_interfaces`): remove both, and create another aggregate of two other ports trunking
/// `vlans` with a routed interface on `vlans[0]` (VLANs the change itself creates).
pub struct LagL3Draw {
    /// `netdev` attributes of the first converge.
    pub seed: serde_json::Value,
    pub lags: serde_json::Value,
    pub l3_interfaces: serde_json::Value,
}

/// The run list a node with [`LagL3Draw`] attributes needs beside VLANs and links.
pub const LAG_L3_RECIPES: [&str; 2] = ["recipe[netdev::lags]", "recipe[netdev::l3_interfaces]"];

/// An aggregate's and a VLAN interface's names as `dialect` spells them.
fn lag_l3_names(dialect: Dialect, lag: u64, vlan: u16) -> (String, String) {
    let lag = match dialect {
        Dialect::Eos => format!("Port-Channel{lag}"),
        Dialect::Ios => format!("Port-channel{lag}"),
        Dialect::Nxos => format!("port-channel{lag}"),
        Dialect::Junos => format!("ae{lag}"),
        Dialect::F5 => format!("lag{lag}"),
    };
    let svi = match dialect {
        Dialect::Junos => format!("irb.{vlan}"),
        _ => format!("Vlan{vlan}"),
    };
    (lag, svi)
}

/// One aggregate of ports `ports` of `dialect`, trunking `trunk_vlans`, LACP mode and minimum
/// links (where the platform has them) drawn.
fn lag_attrs(
    rng: &mut Rng,
    dialect: Dialect,
    ports: [usize; 2],
    trunk_vlans: &str,
) -> serde_json::Value {
    let lacp = ["active", "passive", "active", "on"][rng.below(4) as usize];
    let mut lag = serde_json::json!({
        "links": ports.map(|p| dialect.port_name(p)),
        "lacp": lacp,
        "mode": "trunk",
        "trunk_vlans": trunk_vlans,
    });
    // BIG-IP trunks have no minimum links.
    if rng.chance(50) && dialect != Dialect::F5 {
        lag["minimum_links"] = (1 + rng.below(2)).into();
    }
    lag
}

/// A routed interface's addresses on VLAN `vlan`: an IPv4 primary (a secondary drawn) and an IPv6
/// address.
fn l3_attrs(rng: &mut Rng, vlan: u16) -> serde_json::Value {
    let o = 1 + rng.below(200);
    let mut v4 = vec![format!("10.{o}.{}.1/24", vlan % 256)];
    if rng.chance(50) {
        v4.push(format!("172.16.{}.1/24", vlan % 256));
    }
    serde_json::json!({
        "ipv4": v4,
        "ipv6": [format!("2001:db8:{o:x}:{vlan:x}::1/64")],
    })
}

/// A [`LagL3Draw`] for a device of `dialect` whose change creates `vlans` (none below 100).
pub fn draw_lag_l3(rng: &mut Rng, dialect: Dialect, vlans: &[u16]) -> LagL3Draw {
    let seed_vlan = 2 + rng.below(90) as u16;
    let a = 1 + rng.below(4);
    let b = a + 1 + rng.below(4);
    let (old_lag, old_svi) = lag_l3_names(dialect, a, seed_vlan);
    let (new_lag, new_svi) = lag_l3_names(dialect, b, vlans[0]);
    let trunk: Vec<String> = vlans.iter().map(u16::to_string).collect();
    let seed = serde_json::json!({
        "vlans": {seed_vlan.to_string(): {"name": format!("seed_{seed_vlan}")}},
        "lags": {&old_lag: lag_attrs(rng, dialect, [4, 5], &seed_vlan.to_string())},
        "l3_interfaces": {&old_svi: l3_attrs(rng, seed_vlan)},
    });
    LagL3Draw {
        seed,
        lags: serde_json::json!({
            old_lag: {"state": "absent"},
            new_lag: lag_attrs(rng, dialect, [6, 7], &trunk.join(",")),
        }),
        l3_interfaces: serde_json::json!({
            old_svi: {"state": "absent"},
            new_svi: l3_attrs(rng, vlans[0]),
        }),
    }
}
