//! Reading netgw-lab devices back through the simulator's own state (never through netgw's drivers),
//! and the seeded generator the fault campaigns draw from.

use netgw_labs::lab::{Lab, Sim};

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

/// What the device holds: VLANs and interface configuration (MACs and indexes left out, they differ
/// per device), or Junos' running configuration; `node` and `control` (a device converged to the same
/// desired state) are both written `NODE`, so the two compare.
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
