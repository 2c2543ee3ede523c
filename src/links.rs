//! Declared links against LLDP (`netgw links`, and `--check-links` where a transaction asks for it).
//!
//! ```text
//!   topology links ──declared()──▶ [Declared {a: (node, port), b: (node, port)}]   ports as each kind
//!                                                                                   names them (kinds.rs)
//!   devices ──gather() (bounded, timed)──▶ node -> [Adjacency {local port, peer name, peer port}]
//!   compare(declared, seen) ──▶ LinkReport { up, missing (which end misses it), unreadable (an end
//!                               whose LLDP could not be read), undeclared, errors }
//!   judge_aggregates(seen, lags) ──▶ LinkReport.unbundled: aggregates whose far end does not bundle
//! ```
//!
//! An aggregate's members are judged by where LLDP says they go: members reaching two devices, a
//! member whose far end port is in no aggregate (LACP or a static bundle on one side only), far-end
//! ports split over two aggregates, or LACP modes that never bundle (passive with passive, LACP with
//! static) make it unbundled, and so does a member the device itself reports suspended or not
//! bundled (`lags.NAME.member_state`, where the platform reports one) though both ends' configurations
//! bundle. Members whose far end was not seen, or is a device that was not read, are left to the link
//! checks.
//!
//! "Not there" and "could not read" are different answers: a link is missing only when an end whose
//! neighbours were read does not see it; an end that could not be read at all (no session, no answer,
//! or a table the device cannot give, such as BIG-IP's over REST without SNMP) makes it unreadable.
//!
//! Only links between two nodes netgw drives are checked: a Linux host or an undriven router may not
//! speak LLDP, and nothing can be read from it. Interface names are compared as the drivers report
//! them, abbreviations matched (`Et0/1` is `Ethernet0/1`); a peer's system name matches a node when it
//! is the node's name or starts with it and a dot (`leaf1.example.net`).

use crate::inventory::Inventory;
use netgw_models::facts::{LagFacts, LldpNeighbor, MemberState};
use netgw_models::kinds::device_port_name;
use netgw_models::plan::lag::LacpMode;
use netgw_models::topology::Topology;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// One end of a link: a node and its port as the device names it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct End {
    pub node: String,
    pub port: String,
}

/// A link of the topology between two driven nodes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Declared {
    pub a: End,
    pub b: End,
}

/// One LLDP neighbour a node reports.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Adjacency {
    pub node: String,
    pub port: String,
    pub peer: String,
    pub peer_port: String,
}

/// A declared link not seen from one or both ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Missing {
    pub link: Declared,
    /// The nodes that do not see the other end (one or both).
    pub missing_on: Vec<String>,
}

/// A declared link that could not be checked from one or both ends: their LLDP could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unreadable {
    pub link: Declared,
    /// The nodes whose neighbours could not be read (why: [`LinkReport::errors`]).
    pub unreadable_on: Vec<String>,
}

/// The comparison.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkReport {
    /// Declared links each end sees.
    pub up: Vec<Declared>,
    pub missing: Vec<Missing>,
    /// Declared links not seen from an end whose neighbours could not be read (and seen, where read).
    #[serde(default)]
    pub unreadable: Vec<Unreadable>,
    /// Neighbours seen that no declared link explains.
    pub undeclared: Vec<Adjacency>,
    /// Nodes whose neighbours could not be read, with why (their links are unreadable there).
    pub errors: BTreeMap<String, String>,
    /// Links with an end netgw does not drive (not checked).
    pub unchecked: usize,
    /// Aggregates whose far end does not bundle them.
    #[serde(default)]
    pub unbundled: Vec<Unbundled>,
}

/// An aggregate whose far end does not bundle it, with why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unbundled {
    pub node: String,
    pub lag: String,
    pub reasons: Vec<String>,
}

/// Each read node's aggregates by name.
pub type NodeLags = BTreeMap<String, BTreeMap<String, LagFacts>>;

impl LinkReport {
    /// Declared and seen agree, every aggregate is bundled by its far end, and every node answered.
    pub fn equal(&self) -> bool {
        self.missing.is_empty()
            && self.unbundled.is_empty()
            && self.unreadable.is_empty()
            && self.undeclared.is_empty()
            && self.errors.is_empty()
    }
}

/// The topology's two-ended links: `checked`, both ends driven (in `driven`); `unchecked`, one end
/// outside it (a neighbour seen across one of those is not undeclared, and its absence is not a fault).
/// Ports are named as each node's kind names them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeclaredLinks {
    pub checked: Vec<Declared>,
    pub unchecked: Vec<Declared>,
}

pub fn declared(topo: &Topology, driven: &BTreeSet<String>) -> DeclaredLinks {
    let mut out = DeclaredLinks::default();
    for l in &topo.links {
        let ends: Vec<End> = l
            .endpoints
            .iter()
            .filter(|e| topo.nodes.contains_key(&e.node))
            .map(|e| End {
                node: e.node.clone(),
                port: device_port_name(
                    topo.nodes.get(&e.node).and_then(|n| n.kind.as_deref()),
                    e.interface.as_deref().unwrap_or_default(),
                ),
            })
            .collect();
        let Ok([a, b]) = <[End; 2]>::try_from(ends) else {
            continue;
        };
        match (driven.contains(&a.node), driven.contains(&b.node)) {
            (true, true) => out.checked.push(Declared { a, b }),
            (false, false) => {}
            _ => out.unchecked.push(Declared { a, b }),
        }
    }
    out.checked.sort();
    out.unchecked.sort();
    out
}

/// A node's LLDP neighbours as adjacencies.
pub fn adjacencies(node: &str, lldp: &BTreeMap<String, Vec<LldpNeighbor>>) -> Vec<Adjacency> {
    let mut out = Vec::new();
    for (port, ns) in lldp {
        for n in ns {
            out.push(Adjacency {
                node: node.to_owned(),
                port: port.clone(),
                peer: n.remote_system_name.clone().unwrap_or_default(),
                peer_port: n.remote_port.clone().unwrap_or_default(),
            });
        }
    }
    out
}

fn names_node(system_name: &str, node: &str) -> bool {
    system_name == node
        || system_name
            .strip_prefix(node)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Whether `adj` is `from` seeing `to` across the link.
fn sees(adj: &Adjacency, from: &End, to: &End) -> bool {
    adj.node == from.node
        && crate::facts::same_interface(&adj.port, &from.port)
        && names_node(&adj.peer, &to.node)
        && crate::facts::same_interface(&adj.peer_port, &to.port)
}

/// Compare the declared links with the adjacencies read (`seen`: every node that answered; `errors`:
/// the nodes that did not).
pub fn compare(
    declared: &DeclaredLinks,
    seen: &[Adjacency],
    errors: BTreeMap<String, String>,
) -> LinkReport {
    let mut r = LinkReport {
        errors,
        unchecked: declared.unchecked.len(),
        ..Default::default()
    };
    let mut explained = vec![false; seen.len()];
    let mut explain = |from: &End, to: &End| match seen.iter().position(|s| sees(s, from, to)) {
        Some(i) => {
            explained[i] = true;
            true
        }
        None => false,
    };
    for d in &declared.checked {
        let (unreadable_on, missing_on): (Vec<String>, Vec<String>) = [(&d.a, &d.b), (&d.b, &d.a)]
            .into_iter()
            .filter(|(from, to)| !explain(from, to))
            .map(|(from, _)| from.node.clone())
            .partition(|n| r.errors.contains_key(n));
        if !missing_on.is_empty() {
            r.missing.push(Missing {
                link: d.clone(),
                missing_on,
            });
        } else if !unreadable_on.is_empty() {
            r.unreadable.push(Unreadable {
                link: d.clone(),
                unreadable_on,
            });
        } else {
            r.up.push(d.clone());
        }
    }
    for d in &declared.unchecked {
        explain(&d.a, &d.b);
        explain(&d.b, &d.a);
    }
    r.undeclared = seen
        .iter()
        .zip(explained)
        .filter(|(_, e)| !e)
        .map(|(s, _)| s.clone())
        .collect();
    r
}

/// Read every node's LLDP neighbours through its driver (and SNMP where configured), `concurrency`
/// nodes at a time, each within `timeout`.
pub async fn gather(
    inv: &Inventory,
    nodes: &[String],
    concurrency: usize,
    timeout: Duration,
) -> (Vec<Adjacency>, BTreeMap<String, String>, NodeLags) {
    use futures::StreamExt;
    type Read = (Vec<Adjacency>, BTreeMap<String, LagFacts>);
    let results: Vec<(String, Result<Read, String>)> = futures::stream::iter(nodes.iter().cloned())
        .map(|n| async move {
            let r = match inv.target(&n) {
                Ok(t) => {
                    match tokio::time::timeout(timeout, crate::facts::device_facts(&t)).await {
                        Ok(Ok(f)) => match f.lldp_unreadable {
                            Some(why) => Err(format!("LLDP neighbours unreadable: {why}")),
                            None => Ok((adjacencies(&n, &f.lldp_neighbors), f.lags)),
                        },
                        Ok(Err(e)) => Err(e.to_string()),
                        Err(_) => Err(format!("no answer within {}s", timeout.as_secs())),
                    }
                }
                Err(e) => Err(e.to_string()),
            };
            (n, r)
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let mut seen = Vec::new();
    let mut errors = BTreeMap::new();
    let mut lags = NodeLags::new();
    for (n, r) in results {
        match r {
            Ok((a, l)) => {
                seen.extend(a);
                lags.insert(n, l);
            }
            Err(e) => {
                errors.insert(n, e);
            }
        }
    }
    seen.sort();
    (seen, errors, lags)
}

/// Whether two ends' modes bundle: LACP with one active end at least, or static on both.
fn modes_bundle(a: LacpMode, b: LacpMode) -> bool {
    use LacpMode::*;
    matches!(
        (a, b),
        (Active, Active | Passive) | (Passive, Active) | (On, On)
    )
}

/// The far end of `node`'s `port` as LLDP saw it: a read node and its port.
fn far_end<'a>(
    seen: &'a [Adjacency],
    lags: &'a NodeLags,
    node: &str,
    port: &str,
) -> Option<(&'a str, &'a str)> {
    let adj = seen
        .iter()
        .find(|a| a.node == node && crate::facts::same_interface(&a.port, port))?;
    let peer = lags.keys().find(|n| names_node(&adj.peer, n))?;
    Some((peer.as_str(), adj.peer_port.as_str()))
}

/// How the device itself reports member `m` held out of its aggregate (`lags.NAME.member_state`:
/// suspended or not bundled), where it reports one: two configurations that should bundle and a
/// negotiation that did not.
fn held_out(lag: &LagFacts, m: &str) -> Option<&'static str> {
    match lag.member_state.get(m)? {
        MemberState::Suspended => Some("suspended"),
        MemberState::NotBundled => Some("not bundled"),
        _ => None,
    }
}

/// Why one aggregate is not bundled by its far end (none: it is, as far as was read).
fn unbundled_reasons(
    node: &str,
    lag: &LagFacts,
    seen: &[Adjacency],
    lags: &NodeLags,
) -> Vec<String> {
    let mut reasons = Vec::new();
    let ends: Vec<(&String, &str, &str)> = lag
        .members
        .iter()
        .filter_map(|m| far_end(seen, lags, node, m).map(|(n, p)| (m, n, p)))
        .collect();
    let devices: BTreeSet<&str> = ends.iter().map(|(_, n, _)| *n).collect();
    if devices.len() > 1 {
        let each: Vec<String> = ends
            .iter()
            .map(|(m, n, p)| format!("{m} to {n}:{p}"))
            .collect();
        reasons.push(format!(
            "its members go to {} devices ({})",
            devices.len(),
            each.join(", ")
        ));
    }
    let mut far_lags = BTreeSet::new();
    for (m, peer, port) in &ends {
        let far = lags.get(*peer).and_then(|l| {
            l.iter().find(|(_, f)| {
                f.members
                    .iter()
                    .any(|x| crate::facts::same_interface(x, port))
            })
        });
        match far {
            None => reasons.push(format!(
                "{m} reaches {peer}:{port}, which is in no aggregate (the far end does not bundle)"
            )),
            Some((name, f)) => {
                far_lags.insert(format!("{peer}:{name}"));
                if let (Some(a), Some(b)) = (lag.lacp, f.lacp)
                    && !modes_bundle(a, b)
                {
                    reasons.push(format!(
                        "{m}: LACP {a} here and {b} on {peer}:{name} do not bundle (one end active, or both on)"
                    ));
                } else if let Some(state) = held_out(lag, m) {
                    reasons.push(format!(
                        "{m} reaches {peer}:{name}, but the device reports it {state} (its own summary)"
                    ));
                }
            }
        }
    }
    if far_lags.len() > 1 {
        let names: Vec<String> = far_lags.into_iter().collect();
        reasons.push(format!(
            "the far end bundles its members into {}",
            names.join(" and ")
        ));
    }
    reasons
}

/// Aggregates whose far end does not bundle them (see the module docs), in node and name order.
pub fn judge_aggregates(seen: &[Adjacency], lags: &NodeLags) -> Vec<Unbundled> {
    let mut out = Vec::new();
    for (node, ls) in lags {
        for (name, lag) in ls {
            let reasons = unbundled_reasons(node, lag, seen, lags);
            if !reasons.is_empty() {
                out.push(Unbundled {
                    node: node.clone(),
                    lag: name.clone(),
                    reasons,
                });
            }
        }
    }
    out
}

/// A link check a transaction runs between verify and confirm (`--check-links`): the declared links
/// and how to read every driven node of the topology (members of the transaction or not: a change on
/// one device can take a link down seen from its neighbour).
pub struct LinkCheck {
    pub declared: DeclaredLinks,
    pub inventory: std::sync::Arc<Inventory>,
    pub nodes: Vec<String>,
    pub concurrency: usize,
    /// Per device.
    pub timeout: Duration,
}

impl LinkCheck {
    /// The declared links of `topo` between the nodes `inv` can reach and netgw drives.
    pub fn new(
        topo: &Topology,
        inventory: std::sync::Arc<Inventory>,
        concurrency: usize,
        timeout: Duration,
    ) -> LinkCheck {
        let driven: BTreeSet<String> = topo
            .managed_nodes()
            .map(|n| n.name.clone())
            .filter(|n| inventory.hosts.contains_key(n) && inventory.not_driven(n).is_none())
            .collect();
        LinkCheck {
            declared: declared(topo, &driven),
            nodes: driven.into_iter().collect(),
            inventory,
            concurrency,
            timeout,
        }
    }

    pub async fn run(&self) -> LinkReport {
        let (seen, errors, lags) =
            gather(&self.inventory, &self.nodes, self.concurrency, self.timeout).await;
        let mut r = compare(&self.declared, &seen, errors);
        r.unbundled = judge_aggregates(&seen, &lags);
        r
    }
}

impl LinkReport {
    /// The first difference, in a sentence (a transaction's failure names it), and the node it is on.
    pub fn first_difference(&self) -> Option<(String, String)> {
        let end = |e: &End| format!("{}:{}", e.node, e.port);
        if let Some(m) = self.missing.first() {
            return Some((
                m.missing_on[0].clone(),
                format!(
                    "declared link {} <-> {} not seen from {} ({} missing, {} undeclared in all)",
                    end(&m.link.a),
                    end(&m.link.b),
                    m.missing_on.join(" and "),
                    self.missing.len(),
                    self.undeclared.len()
                ),
            ));
        }
        if let Some(u) = self.unbundled.first() {
            return Some((
                u.node.clone(),
                format!(
                    "aggregate {}:{} is not bundled by its far end: {} ({} unbundled in all)",
                    u.node,
                    u.lag,
                    u.reasons.join("; "),
                    self.unbundled.len()
                ),
            ));
        }
        if let Some(u) = self.unreadable.first() {
            let node = &u.unreadable_on[0];
            let why = self
                .errors
                .get(node)
                .map(String::as_str)
                .unwrap_or_default();
            return Some((
                node.clone(),
                format!(
                    "declared link {} <-> {} could not be checked: {node} could not be read ({why})",
                    end(&u.link.a),
                    end(&u.link.b),
                ),
            ));
        }
        if let Some(u) = self.undeclared.first() {
            return Some((
                u.node.clone(),
                format!(
                    "undeclared neighbour: {}:{} sees {}:{} ({} undeclared in all)",
                    u.node,
                    u.port,
                    u.peer,
                    u.peer_port,
                    self.undeclared.len()
                ),
            ));
        }
        let (n, e) = self.errors.iter().next()?;
        Some((n.clone(), format!("LLDP neighbours unreadable: {e}")))
    }
}

/// The report for people: one line a link or adjacency.
/// Terminal-safe (`crate::terminal::terminal_safe`): neighbour names and ports come from the devices'
/// LLDP tables, which anything plugged into a port sets.
pub fn human(r: &LinkReport) -> String {
    let end = |e: &End| format!("{}:{}", e.node, e.port);
    let mut out = String::new();
    for d in &r.up {
        out.push_str(&format!("up          {} <-> {}\n", end(&d.a), end(&d.b)));
    }
    for m in &r.missing {
        out.push_str(&format!(
            "MISSING     {} <-> {}  (not seen from {})\n",
            end(&m.link.a),
            end(&m.link.b),
            m.missing_on.join(" and ")
        ));
    }
    for u in &r.unreadable {
        out.push_str(&format!(
            "UNREADABLE  {} <-> {}  (could not read {}'s neighbours)\n",
            end(&u.link.a),
            end(&u.link.b),
            u.unreadable_on.join(" or ")
        ));
    }
    for u in &r.undeclared {
        out.push_str(&format!(
            "UNDECLARED  {}:{} sees {}:{}\n",
            u.node, u.port, u.peer, u.peer_port
        ));
    }
    for u in &r.unbundled {
        out.push_str(&format!(
            "UNBUNDLED   {}:{}  ({})\n",
            u.node,
            u.lag,
            u.reasons.join("; ")
        ));
    }
    for (n, e) in &r.errors {
        out.push_str(&format!("ERROR       {n}: {e}\n"));
    }
    out.push_str(&format!(
        "{} up, {} missing, {} undeclared, {} unreadable ({} node(s) could not be read), {} link(s) not checked (an end netgw does not drive)\n",
        r.up.len(),
        r.missing.len(),
        r.undeclared.len(),
        r.unreadable.len(),
        r.errors.len(),
        r.unchecked
    ));
    if !r.unbundled.is_empty() {
        out.push_str(&format!(
            "{} aggregate(s) not bundled by their far end\n",
            r.unbundled.len()
        ));
    }
    crate::terminal::terminal_safe(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOPO: &str = r#"
name: t
topology:
  nodes:
    s1: {kind: ceos}
    a1: {kind: cisco_iol}
    h: {kind: linux}
  links:
    - endpoints: ["s1:eth1", "a1:eth1"]
    - endpoints: ["s1:eth2", "h:eth1"]
"#;

    fn adj(node: &str, port: &str, peer: &str, peer_port: &str) -> Adjacency {
        Adjacency {
            node: node.into(),
            port: port.into(),
            peer: peer.into(),
            peer_port: peer_port.into(),
        }
    }

    fn driven() -> BTreeSet<String> {
        ["s1".to_owned(), "a1".to_owned()].into()
    }

    #[test]
    fn declared_links_use_the_kinds_port_names_and_skip_undriven_ends() {
        let t = Topology::parse(TOPO).unwrap();
        let d = declared(&t, &driven());
        assert_eq!(d.unchecked.len(), 1);
        assert_eq!(d.unchecked[0].b.port, "eth1");
        assert_eq!(d.checked.len(), 1);
        assert_eq!(d.checked[0].a.port, "Ethernet1");
        assert_eq!(d.checked[0].b.port, "Ethernet0/1");
    }

    /// An end that could not be read makes a link unreadable, not missing; a readable end that does
    /// not see it still makes it missing.
    #[test]
    fn an_end_that_could_not_be_read_is_unreadable_not_missing() {
        let t = Topology::parse(TOPO).unwrap();
        let d = declared(&t, &driven());
        let errors: BTreeMap<String, String> = [(
            "a1".to_owned(),
            "LLDP neighbours unreadable: no table".to_owned(),
        )]
        .into();
        let from_s1 = [adj("s1", "Ethernet1", "a1", "Ethernet0/1")];
        let r = compare(&d, &from_s1, errors.clone());
        assert!(r.missing.is_empty(), "{r:?}");
        assert_eq!(r.unreadable.len(), 1);
        assert_eq!(r.unreadable[0].unreadable_on, ["a1"]);
        assert!(!r.equal());
        let text = human(&r);
        assert!(
            text.contains(
                "UNREADABLE  s1:Ethernet1 <-> a1:Ethernet0/1  (could not read a1's neighbours)"
            ) && !text.contains("MISSING")
                && text.contains(
                    "0 missing, 0 undeclared, 1 unreadable (1 node(s) could not be read)"
                ),
            "{text}"
        );
        let (node, first) = r.first_difference().unwrap();
        assert_eq!(node, "a1");
        assert!(
            first.contains("could not be checked") && first.contains("no table"),
            "{first}"
        );
        // s1 was read and does not see a1: missing from s1, whatever a1 would have said.
        let r = compare(&d, &[], errors);
        assert_eq!(r.missing.len(), 1, "{r:?}");
        assert_eq!(r.missing[0].missing_on, ["s1"]);
        assert!(r.unreadable.is_empty());
    }

    #[test]
    fn equal_missing_on_one_end_and_undeclared() {
        let t = Topology::parse(TOPO).unwrap();
        let d = declared(&t, &driven());
        let both = [
            adj("s1", "Ethernet1", "a1.lab.example", "Et0/1"),
            adj("a1", "Ethernet0/1", "s1", "Ethernet1"),
        ];
        let r = compare(&d, &both, BTreeMap::new());
        assert!(r.equal(), "{r:?}");
        assert_eq!(r.up.len(), 1);
        let r = compare(&d, &both[..1], BTreeMap::new());
        assert!(!r.equal());
        assert_eq!(r.missing[0].missing_on, ["a1"]);
        let extra = [
            both[0].clone(),
            both[1].clone(),
            adj("s1", "Ethernet3", "a1", "Ethernet0/2"),
        ];
        let r = compare(&d, &extra, BTreeMap::new());
        assert_eq!(r.undeclared, [extra[2].clone()]);
        // A neighbour across a link to an undriven node is declared, and its absence no fault.
        let host = [
            both[0].clone(),
            both[1].clone(),
            adj("s1", "Ethernet2", "h", "eth1"),
        ];
        assert!(compare(&d, &host, BTreeMap::new()).equal());
        // A peer whose name only starts like the node is another node.
        let other = [adj("s1", "Ethernet1", "a10", "Et0/1"), both[1].clone()];
        assert_eq!(compare(&d, &other, BTreeMap::new()).missing.len(), 1);
    }

    fn lag(members: &[&str], lacp: LacpMode) -> LagFacts {
        LagFacts {
            members: members.iter().map(|m| m.to_string()).collect(),
            lacp: Some(lacp),
            oper_status: None,
            member_state: BTreeMap::new(),
        }
    }

    /// Bundled on both ends is fine; one end only, members to two devices, far-end members in two
    /// aggregates and passive with passive are each reported, naming the members.
    #[test]
    fn aggregates_are_judged_by_their_members_far_ends() {
        let seen = [
            adj("s1", "Ethernet1", "a1", "Et0/1"),
            adj("s1", "Ethernet2", "a1.lab", "Ethernet0/2"),
            adj("a1", "Ethernet0/1", "s1", "Ethernet1"),
            adj("a1", "Ethernet0/2", "s1", "Ethernet2"),
            adj("s1", "Ethernet3", "a1", "Ethernet0/3"),
            adj("s1", "Ethernet4", "x9", "Ethernet1"),
        ];
        let node_lags = |s1: Vec<(&str, LagFacts)>, a1: Vec<(&str, LagFacts)>| -> NodeLags {
            let m =
                |v: Vec<(&str, LagFacts)>| v.into_iter().map(|(n, l)| (n.to_owned(), l)).collect();
            [("s1".to_owned(), m(s1)), ("a1".to_owned(), m(a1))].into()
        };
        let both = node_lags(
            vec![(
                "Port-Channel1",
                lag(&["Ethernet1", "Ethernet2"], LacpMode::Active),
            )],
            vec![(
                "Port-channel1",
                lag(&["Ethernet0/1", "Ethernet0/2"], LacpMode::Passive),
            )],
        );
        assert!(judge_aggregates(&seen, &both).is_empty());
        // The same configurations, and the device reports a member suspended (LACP not answered):
        // only its own summary shows it.
        let mut held = both.clone();
        let s1 = held
            .get_mut("s1")
            .unwrap()
            .get_mut("Port-Channel1")
            .unwrap();
        s1.member_state
            .insert("Ethernet2".into(), MemberState::Suspended);
        s1.member_state
            .insert("Ethernet1".into(), MemberState::Bundled);
        let u = judge_aggregates(&seen, &held);
        assert_eq!(u.len(), 1, "{u:?}");
        assert_eq!(
            u[0].reasons,
            [
                "Ethernet2 reaches a1:Port-channel1, but the device reports it suspended (its own summary)"
            ],
            "{u:?}"
        );
        let one_side = node_lags(
            vec![(
                "Port-Channel1",
                lag(&["Ethernet1", "Ethernet2"], LacpMode::Active),
            )],
            vec![],
        );
        let u = judge_aggregates(&seen, &one_side);
        assert_eq!(
            (u.len(), u[0].node.as_str(), u[0].lag.as_str()),
            (1, "s1", "Port-Channel1")
        );
        assert!(
            u[0].reasons[0].contains("Ethernet1 reaches a1:Et0/1, which is in no aggregate"),
            "{u:?}"
        );
        let passive = node_lags(
            vec![(
                "Port-Channel1",
                lag(&["Ethernet1", "Ethernet2"], LacpMode::Passive),
            )],
            vec![(
                "Port-channel1",
                lag(&["Ethernet0/1", "Ethernet0/2"], LacpMode::Passive),
            )],
        );
        let u = judge_aggregates(&seen, &passive);
        assert_eq!(u.len(), 2, "both ends are reported: {u:?}");
        assert!(
            u[0].reasons.iter().all(|r| r.contains("do not bundle")),
            "{u:?}"
        );
        let split = node_lags(
            vec![(
                "Port-Channel1",
                lag(&["Ethernet1", "Ethernet2"], LacpMode::Active),
            )],
            vec![
                ("Port-channel1", lag(&["Ethernet0/1"], LacpMode::Active)),
                ("Port-channel2", lag(&["Ethernet0/2"], LacpMode::Active)),
            ],
        );
        let u = judge_aggregates(&seen, &split);
        assert!(
            u.iter().any(|x| x.node == "s1"
                && x.reasons
                    .iter()
                    .any(|r| r.contains("into a1:Port-channel1 and a1:Port-channel2"))),
            "{u:?}"
        );
        // Members to two devices; x9 was not read, so only the device count is judged there.
        let mut two = node_lags(
            vec![(
                "Port-Channel3",
                lag(&["Ethernet3", "Ethernet4"], LacpMode::Active),
            )],
            vec![("Port-channel3", lag(&["Ethernet0/3"], LacpMode::Active))],
        );
        two.insert("x9".into(), BTreeMap::new());
        let u = judge_aggregates(&seen, &two);
        assert!(u[0].reasons[0].starts_with("its members go to 2 devices (Ethernet3 to a1:Ethernet0/3, Ethernet4 to x9:Ethernet1)"), "{u:?}");
        let mut r = LinkReport {
            unbundled: u,
            ..Default::default()
        };
        assert!(!r.equal());
        let text = human(&r);
        assert!(
            text.contains("UNBUNDLED   s1:Port-Channel3  (its members go to 2 devices"),
            "{text}"
        );
        assert!(
            r.first_difference()
                .unwrap()
                .1
                .contains("not bundled by its far end")
        );
        r.unbundled.clear();
        assert!(r.equal());
    }
}
