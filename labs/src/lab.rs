//! A running lab: every node of a containerlab topology served as a simulated device on 127.0.0.1,
//! its own port per node, and the Nornir inventory that reaches them.
//!
//! ```text
//!   Lab::start(topology, options)
//!     ├─ per node: Device (state + faults) ─▶ simulator (EOS eAPI | Junos NETCONF | IOS/NX-OS CLI | F5 REST)
//!     │            one TcpListener, one accept task (connections are tasks too; no OS thread per device)
//!     │            one UdpSocket (the same port number when free), one SNMP agent task (sim/snmp)
//!     ├─ LLDP neighbours and link state from the topology's links
//!     └─ Lab::inventory() ─▶ hosts: {hostname, port, platform, username, password,
//!                                    connection_options.{eapi|netconf|ssh|rest, snmp}, data.netgw}
//!   Dropping the Lab aborts every task (listeners close, sessions end).
//! ```

use crate::clab::ClabPlan;
use crate::sim::Device;
use crate::sim::cli::CliSim;
use crate::sim::eos::EosSim;
use crate::sim::f5::F5Sim;
use crate::sim::fault::{FaultError, Faults};
use crate::sim::http::{self, Handler, LabTls};
use crate::sim::junos::{JunosSim, JunosStyle};
use crate::sim::sessions::LabGauge;
use crate::sim::snmp::{
    self as snmp_agent, AgentConfig, AgentDevice, SnmpAgent, StateSource, UsmUser,
};
use crate::sim::ssh::{self, SshApp};
use crate::sim::state::{Dialect, Neighbor, PortFlag, mac_for};
use netgw_models::topology::{ConnectionAccess, NodeAccess, Topology, nornir_inventory};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::Path;
use std::sync::Arc;
use thiserror::Error;
use tokio::net::{TcpListener, UdpSocket};
use tokio::task::JoinHandle;

#[derive(Debug, Error)]
pub enum LabError {
    #[error("node {node}: {source}")]
    Fault { node: String, source: FaultError },
    #[error("node {node}: cannot listen on {addr}:{port}: {source}")]
    Listen {
        node: String,
        addr: Ipv4Addr,
        port: u16,
        source: std::io::Error,
    },
    #[error(
        "node {node}: cannot bind UDP for its SNMP agent: {source} (each device needs a TCP and a UDP \
         socket: raise `ulimit -n`, or run without SNMP agents: --no-snmp)"
    )]
    ListenUdp {
        node: String,
        source: std::io::Error,
    },
    #[error("node {node}: {message}")]
    Node { node: String, message: String },
    #[error("TLS setup: {0}")]
    Tls(#[from] http::TlsSetupError),
    #[error("SSH setup: {0}")]
    Ssh(#[from] ssh::SshSetupError),
    #[error("writing {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

/// How to run a lab.
#[derive(Debug, Clone)]
pub struct LabOptions {
    /// First port; nodes get consecutive ports. `None`: the OS picks (127.0.0.1:0).
    pub base_port: Option<u16>,
    /// Replicate the topology this many times (benchmarks); node names get `-N` suffixes when > 1.
    pub count: usize,
    /// eAPI over HTTPS (the lab CA signs the certificate) rather than plain HTTP.
    pub eapi_https: bool,
    pub username: String,
    pub password: String,
    /// Extra faults (`node`, `key`, `value`), on top of the nodes' `netgw-lab.*` labels.
    pub faults: Vec<(String, String, String)>,
    /// Serve an SNMP agent per device (UDP) and list it in the inventory.
    pub snmp: bool,
    /// The agents' read-only SNMPv2c community.
    pub snmp_community: String,
    /// The SNMPv3 user every agent accepts (authPriv); `None`: v2c only.
    pub snmp_v3: Option<SnmpV3User>,
    /// What the inventory's `connection_options.snmp` uses: v2c (community) or v3 (the user).
    pub snmp_inventory_v3: bool,
    /// The agents' local message-size constraint (octets).
    pub snmp_max_message_size: usize,
    /// One SNMP port for all devices (`COMMUNITY@NODE`, v3 context `NODE`) instead of one per device.
    /// `None`: only when the open-file limit cannot hold a TCP and a UDP socket per device.
    pub snmp_shared: Option<bool>,
    /// containerlab mode (`--clab`): every node on its own loopback address, on its kind's real
    /// management ports (22, 830, 443; SNMP 161/udp), with its containerlab credentials.
    pub clab: Option<ClabPlan>,
}

/// The lab's SNMPv3 user (USM, RFC 3414): authPriv with `auth_proto` (SHA or SHA-256) and AES-128.
#[derive(Debug, Clone)]
pub struct SnmpV3User {
    pub user: String,
    pub auth_proto: String,
    pub auth_key: String,
    pub priv_key: String,
}

/// The documented defaults (docs/lab.md).
pub const DEFAULT_SNMP_COMMUNITY: &str = "netgw-lab";

impl Default for SnmpV3User {
    fn default() -> Self {
        SnmpV3User {
            user: "netgw-lab".into(),
            auth_proto: "SHA".into(),
            auth_key: "netgw-lab-auth".into(),
            priv_key: "netgw-lab-priv".into(),
        }
    }
}

impl Default for LabOptions {
    fn default() -> Self {
        LabOptions {
            base_port: None,
            count: 1,
            eapi_https: true,
            username: "admin".into(),
            password: "admin".into(),
            faults: Vec::new(),
            snmp: true,
            snmp_community: DEFAULT_SNMP_COMMUNITY.into(),
            snmp_v3: Some(SnmpV3User::default()),
            snmp_inventory_v3: false,
            snmp_max_message_size: snmp_agent::DEFAULT_MAX_MESSAGE_SIZE,
            snmp_shared: None,
            clab: None,
        }
    }
}

/// The simulator behind one node.
#[derive(Debug, Clone)]
pub enum Sim {
    Eos(Arc<EosSim>),
    Junos(Arc<JunosSim>),
    Cli(Arc<CliSim>),
    F5(Arc<F5Sim>),
}

/// One served node.
#[derive(Debug, Clone)]
pub struct LabNode {
    pub name: String,
    pub platform: &'static str,
    /// The address it listens on: 127.0.0.1, or its own in containerlab mode.
    pub addr: Ipv4Addr,
    pub port: u16,
    /// UDP port of the node's SNMP agent (`None` when the lab runs without SNMP).
    pub snmp_port: Option<u16>,
    pub snmp: Option<Arc<SnmpAgent>>,
    /// On a shared SNMP port, the name that selects this node (`COMMUNITY@NAME`, v3 context `NAME`).
    pub snmp_key: Option<String>,
    pub device: Arc<Device>,
    pub sim: Sim,
}

/// A running lab. Dropping it stops every device.
pub struct Lab {
    pub topology: Topology,
    pub nodes: Vec<LabNode>,
    pub tls: LabTls,
    /// `ssh-ed25519 AAAA...`, the host key every SSH device presents.
    pub host_key: String,
    pub options: LabOptions,
    /// Nodes not simulated, and why.
    pub skipped: Vec<String>,
    /// Sessions open on all devices together ([`Lab::counts`]).
    pub gauge: Arc<LabGauge>,
    tasks: Vec<JoinHandle<()>>,
}

/// What every device of a lab answered so far, summed ([`crate::sim::Exchanges`]), and its sessions:
/// what `netgw-lab` prints on SIGUSR1 for the benchmark.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct LabCounts {
    pub devices: usize,
    pub round_trips: u64,
    pub commands: u64,
    /// The fewest and the most round trips one device answered.
    pub round_trips_min: u64,
    pub round_trips_max: u64,
    /// Sessions accepted since the start, open now, and the most open at once (all devices
    /// together) since the previous [`Lab::counts`].
    pub sessions: u64,
    pub open: usize,
    pub peak_open: usize,
}

impl Drop for Lab {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// The topology `count` times over (`leaf1-1`, `leaf1-2`, ...), links included.
pub fn replicate(topo: &Topology, count: usize) -> Topology {
    if count <= 1 {
        return topo.clone();
    }
    let mut out = Topology {
        name: topo.name.clone(),
        prefix: topo.prefix.clone(),
        mgmt: topo.mgmt.clone(),
        ..Topology::default()
    };
    for i in 1..=count {
        let rename = |n: &str| {
            if topo.nodes.contains_key(n) {
                format!("{n}-{i}")
            } else {
                n.to_owned()
            }
        };
        for (name, node) in &topo.nodes {
            let mut n = node.clone();
            n.name = rename(name);
            n.mgmt_ipv4 = None;
            n.mgmt_ipv6 = None;
            out.nodes.insert(n.name.clone(), n);
        }
        for l in &topo.links {
            let mut l = l.clone();
            for e in &mut l.endpoints {
                e.node = rename(&e.node);
            }
            out.links.push(l);
        }
    }
    out
}

/// A Junos node's layer-2 style: the `netgw-lab.junos-style` label, else from the kind (vMX: MX).
fn junos_style(n: &netgw_models::topology::Node) -> Result<JunosStyle, String> {
    if let Some(s) = n.labels.get("netgw-lab.junos-style") {
        return JunosStyle::parse(s).ok_or_else(|| {
            format!("label netgw-lab.junos-style: {s:?} is not a style (ex, els, qfx or mx)")
        });
    }
    Ok(match n.kind.as_deref() {
        Some("juniper_vmx" | "vr-vmx" | "juniper_vjunosrouter") => JunosStyle::Mx,
        _ => JunosStyle::Els,
    })
}

/// The agents' shared settings (the SNMPv3 passwords are hashed here, once per lab).
fn snmp_config(opts: &LabOptions) -> Result<Option<Arc<AgentConfig>>, LabError> {
    if !opts.snmp {
        return Ok(None);
    }
    let user = match &opts.snmp_v3 {
        None => None,
        Some(u) => {
            let bad = |message: String| LabError::Node {
                node: "(every node)".into(),
                message,
            };
            let auth = snmp_agent::usm::AuthAlg::parse(&u.auth_proto).ok_or_else(|| {
                bad(format!(
                    "SNMPv3 auth protocol {:?}: the lab agents offer SHA and SHA-256",
                    u.auth_proto
                ))
            })?;
            // RFC 3414 §11.2: passwords of at least 8 characters.
            if u.auth_key.len() < 8 || u.priv_key.len() < 8 {
                return Err(bad(
                    "SNMPv3 auth and privacy passwords need at least 8 characters (RFC 3414 §11.2)"
                        .into(),
                ));
            }
            Some(UsmUser::new(&u.user, auth, &u.auth_key, &u.priv_key))
        }
    };
    if opts.snmp_inventory_v3 && user.is_none() {
        return Err(LabError::Node {
            node: "(every node)".into(),
            message: "an SNMPv3 inventory needs an SNMPv3 user".into(),
        });
    }
    Ok(Some(Arc::new(AgentConfig {
        community: opts.snmp_community.as_bytes().to_vec(),
        user,
        max_message_size: opts.snmp_max_message_size.clamp(484, 65_507),
    })))
}

/// The simulator a node gets: by its netgw platform, except kinds netgw-lab does not simulate
/// although a platform is named for them (IOS-XR `cisco_c8000` is not IOS).
fn sim_dialect(n: &netgw_models::topology::Node) -> Option<Dialect> {
    let kind = n.kind.as_deref().unwrap_or("").to_ascii_lowercase();
    if matches!(kind.as_str(), "cisco_c8000" | "c8000") {
        return None;
    }
    Dialect::from_platform(n.platform?)
}

/// A router rather than a switch: cRPD (a routing daemon), and an IOL node without `type: l2` (the L3
/// image; containerlab's `nodes/iol`).
fn routed_only(n: &netgw_models::topology::Node) -> bool {
    let kind = n.kind.as_deref().unwrap_or("").to_ascii_lowercase();
    match kind.as_str() {
        "juniper_crpd" | "crpd" => true,
        "cisco_iol" => !n
            .node_type
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("l2")),
        _ => false,
    }
}

/// The real management port of a simulator's service (containerlab mode).
fn service_port(dialect: Dialect, eapi_https: bool) -> u16 {
    match dialect {
        Dialect::Eos if !eapi_https => 80,
        Dialect::Eos | Dialect::F5 => 443,
        Dialect::Junos => 830,
        Dialect::Ios | Dialect::Nxos => 22,
    }
}

/// Write `text` to `rel` beneath `dir` (0600; the directory created 0700 or refused when another
/// user could write into it; no symlink followed: `crate::private`).
pub fn write_file(dir: &Path, rel: &str, text: &str) -> Result<(), LabError> {
    let path = dir.join(rel);
    crate::private::private_dir(dir)
        .and_then(|()| crate::private::write_beneath(dir, Path::new(rel), text))
        .map_err(|source| LabError::Write {
            path: path.display().to_string(),
            source,
        })
}

/// The simulated port a topology interface names: containerlab's `ethN` as the node's kind names it
/// (the one kind table), else as the simulator's dialect numbers its ports.
fn link_port(
    node: &netgw_models::topology::Node,
    dialect: Dialect,
    ifname: &str,
) -> Option<String> {
    let named = netgw_models::kinds::device_port_name(node.kind.as_deref(), ifname);
    dialect
        .port_from_clab(&named)
        .or_else(|| dialect.port_from_clab(ifname))
}

/// The shared state of one link end, made by whichever of its two devices comes first.
fn link_end(ends: &mut BTreeMap<(String, String), PortFlag>, node: &str, port: &str) -> PortFlag {
    ends.entry((node.to_owned(), port.to_owned()))
        .or_default()
        .clone()
}

/// The `netgw-lab.ports` label: how many front-panel ports the device has.
fn ports_label(value: &str) -> Result<usize, String> {
    match value.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_PORTS).contains(&n) => Ok(n),
        _ => Err(format!(
            "label netgw-lab.ports: {value:?} is not a port count (a whole number from 1 to {MAX_PORTS})"
        )),
    }
}

/// Most ports a simulated device has (and the highest port a link may name).
const MAX_PORTS: usize = 256;

fn ports_needed(dialect: Dialect, used: &[String]) -> usize {
    let mut n = 8;
    for i in 0..MAX_PORTS {
        if used.contains(&dialect.port_name(i)) {
            n = n.max(i + 1);
        }
    }
    n
}

/// A node's device, made before anything listens: name, platform, dialect, index, device.
/// A node planned: name, platform, dialect, index, Junos style (the simulator's when Junos), device.
type PlannedDevice = (String, &'static str, Dialect, u32, JunosStyle, Arc<Device>);

/// What pass 1 learns of the topology: each simulated node's index and dialect.
type NodeIndex = BTreeMap<String, (u32, Dialect)>;

/// Pass 1: the simulated nodes' indices and dialects, and why the others are skipped.
fn index_nodes(topo: &Topology) -> (NodeIndex, Vec<String>) {
    let mut skipped = Vec::new();
    let mut index_of = NodeIndex::new();
    for (i, (name, node)) in topo.nodes.iter().enumerate() {
        let Some(dialect) = sim_dialect(node) else {
            skipped.push(format!(
                "{name}: kind {} is not simulated (netgw does not drive it)",
                node.kind.as_deref().unwrap_or("(none)")
            ));
            continue;
        };
        index_of.insert(name.clone(), (i as u32 + 1, dialect));
    }
    (index_of, skipped)
}

/// Pass 2: every simulated node's device, its faults set and its LLDP neighbours wired both ways
/// (the link ends are shared through `ends`).
fn plan_devices(
    topo: &Topology,
    opts: &LabOptions,
) -> Result<(Vec<PlannedDevice>, Vec<String>), LabError> {
    let mut extra: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for (n, k, v) in &opts.faults {
        extra
            .entry(n.as_str())
            .or_default()
            .push((k.as_str(), v.as_str()));
    }
    let (index_of, skipped) = index_nodes(topo);
    let mut ends: BTreeMap<(String, String), PortFlag> = BTreeMap::new();
    let mut devices = Vec::new();
    for (name, node) in &topo.nodes {
        let Some(&(index, dialect)) = index_of.get(name) else {
            continue;
        };
        let mut faults = Faults::from_labels(&node.labels).map_err(|source| LabError::Fault {
            node: name.clone(),
            source,
        })?;
        let style = junos_style(node).map_err(|message| LabError::Node {
            node: name.clone(),
            message,
        })?;
        for (k, v) in extra.get(name.as_str()).into_iter().flatten() {
            faults.set(k, v).map_err(|source| LabError::Fault {
                node: name.clone(),
                source,
            })?;
        }
        let dev = wire_device(
            topo,
            opts,
            &index_of,
            &mut ends,
            (name, node),
            (index, dialect),
            faults,
        )
        .map_err(|message| LabError::Node {
            node: name.clone(),
            message,
        })?;
        devices.push((
            name.clone(),
            node.platform.unwrap_or("?"),
            dialect,
            index,
            style,
            Arc::new(dev),
        ));
    }
    Ok((devices, skipped))
}

/// One node's device with its ports, credentials and LLDP neighbours.
fn wire_device(
    topo: &Topology,
    opts: &LabOptions,
    index_of: &NodeIndex,
    ends: &mut BTreeMap<(String, String), PortFlag>,
    (name, node): (&str, &netgw_models::topology::Node),
    (index, dialect): (u32, Dialect),
    faults: Faults,
) -> Result<Device, String> {
    let neighbors: Vec<(String, String, String)> = topo
        .neighbors(name)
        .into_iter()
        .filter_map(|(l, peer, peer_if)| {
            let lp = link_port(node, dialect, &l)?;
            let rp = match (topo.nodes.get(&peer), index_of.get(&peer)) {
                (Some(pn), Some(&(_, pd))) => link_port(pn, pd, &peer_if),
                _ => None,
            };
            Some((lp, peer, rp.unwrap_or(peer_if)))
        })
        .collect();
    let used: Vec<String> = neighbors.iter().map(|(l, _, _)| l.clone()).collect();
    let ports = match node.labels.get("netgw-lab.ports") {
        Some(p) => ports_label(p)?,
        None => ports_needed(dialect, &used),
    };
    let clab = opts.clab.as_ref().and_then(|p| p.node(name));
    let (user, pass) = clab.map_or((&opts.username, &opts.password), |c| {
        (&c.username, &c.password)
    });
    let lldp_name = faults.lldp_system_name.clone();
    let mut dev = Device::new(name, dialect, index, ports, user, pass, faults);
    let mut st = dev.state().clone();
    st.routed_only = routed_only(node);
    for (lp, peer, rp) in neighbors {
        let pidx = index_of.get(&peer).map_or(0, |&(i, _)| i);
        let local_up = link_end(ends, name, &lp);
        let peer_up = link_end(ends, &peer, &rp);
        if let Some(f) = st.iface_mut(&lp) {
            f.oper_up = true;
        }
        dev.link_ends.push((lp.clone(), local_up.clone()));
        st.neighbors.push(Neighbor {
            local_port: lp,
            system_name: lldp_name.clone().unwrap_or(peer),
            port: rp,
            chassis_id: mac_for(pidx, 1),
            local_up,
            peer_up,
        });
    }
    *dev.state() = st;
    Ok(dev)
}

/// One UDP socket for every device's SNMP agent, unless each can have its own: the open-file limit
/// must hold a TCP and a UDP socket per device (see `LabOptions::snmp_shared`).
async fn shared_snmp_socket(
    snmp_config: Option<&Arc<AgentConfig>>,
    opts: &LabOptions,
    devices: usize,
) -> Result<Option<(UdpSocket, Arc<AgentConfig>)>, LabError> {
    let Some(cfg) = snmp_config else {
        return Ok(None);
    };
    // Every containerlab node has its own address, so its own port 161.
    if opts.clab.is_some() {
        return Ok(None);
    }
    let need = 2 * devices as u64 + 512;
    let have = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX);
    if !opts.snmp_shared.unwrap_or(have < need) {
        return Ok(None);
    }
    let port = opts.base_port.unwrap_or(0);
    let sock = UdpSocket::bind(("127.0.0.1", port))
        .await
        .map_err(|source| LabError::ListenUdp {
            node: "(shared SNMP port)".into(),
            source,
        })?;
    if opts.snmp_shared.is_none() {
        tracing::warn!(
            "open-file limit {have} < {need}: the {devices} devices share one SNMP port \
             (community COMMUNITY@NODE, v3 context NODE)"
        );
    }
    Ok(Some((sock, cfg.clone())))
}

/// Where node number `seq` listens: its containerlab address and real ports, else 127.0.0.1 on
/// consecutive ports from `base_port` (or any). The third value is a fixed SNMP port, if any.
fn node_address(
    opts: &LabOptions,
    name: &str,
    dialect: Dialect,
    seq: usize,
) -> (Ipv4Addr, u16, Option<u16>) {
    match opts.clab.as_ref().and_then(|p| p.node(name)) {
        Some(c) => (
            c.addr.unwrap_or(Ipv4Addr::LOCALHOST),
            service_port(dialect, opts.eapi_https),
            Some(161),
        ),
        None => (
            Ipv4Addr::LOCALHOST,
            opts.base_port.map_or(0, |b| {
                b.saturating_add(u16::try_from(seq).unwrap_or(u16::MAX))
            }),
            None,
        ),
    }
}

/// The node's TCP listener and the port it got.
async fn bind_tcp(name: &str, addr: Ipv4Addr, port: u16) -> Result<(TcpListener, u16), LabError> {
    let err = |source| LabError::Listen {
        node: name.to_owned(),
        addr,
        port,
        source,
    };
    let listener = TcpListener::bind((addr, port)).await.map_err(err)?;
    let port = listener.local_addr().map_err(err)?.port();
    Ok((listener, port))
}

/// The node's own SNMP agent socket: UDP on `snmp_port` when fixed (containerlab), else on the
/// node's TCP port number when it is free (ports are per protocol), else any.
async fn bind_snmp_udp(
    name: &str,
    addr: Ipv4Addr,
    port: u16,
    snmp_port: Option<u16>,
) -> Result<(UdpSocket, u16), LabError> {
    let err = |source| LabError::ListenUdp {
        node: name.to_owned(),
        source,
    };
    let sock = match UdpSocket::bind((addr, snmp_port.unwrap_or(port))).await {
        Ok(s) => s,
        Err(source) if snmp_port.is_some() => return Err(err(source)),
        Err(_) => UdpSocket::bind((addr, 0)).await.map_err(err)?,
    };
    let udp_port = sock.local_addr().map_err(err)?.port();
    Ok((sock, udp_port))
}

/// Where a node's SNMP agent reads its state: a Junos simulator keeps its own.
fn state_source(sim: &Sim) -> StateSource {
    match sim {
        Sim::Junos(j) => StateSource::Junos(j.clone()),
        _ => StateSource::Shared,
    }
}

impl Lab {
    /// Start every node of `topo` (after replication). Nodes of kinds netgw-lab does not simulate
    /// (linux, unsupported) are listed in `skipped`.
    pub async fn start(topo: &Topology, opts: LabOptions) -> Result<Lab, LabError> {
        let topo = replicate(topo, opts.count);
        let tls = match &opts.clab {
            Some(plan) => LabTls::generate_for(&plan.tls_names())?,
            None => LabTls::generate()?,
        };
        let ssh_config = ssh::server_config()?;
        let snmp_config = snmp_config(&opts)?;
        let host_key = ssh::host_key_openssh(&ssh_config).unwrap_or_default();
        let (devices, skipped) = plan_devices(&topo, &opts)?;
        let shared_snmp = shared_snmp_socket(snmp_config.as_ref(), &opts, devices.len()).await?;
        let mut shared_members = Vec::new();
        let mut lab = Lab {
            topology: topo.clone(),
            nodes: Vec::new(),
            tls,
            host_key,
            options: opts.clone(),
            skipped,
            gauge: Arc::default(),
            tasks: Vec::new(),
        };
        for (seq, (name, platform, dialect, _index, style, dev)) in devices.into_iter().enumerate()
        {
            dev.sessions.join_lab(lab.gauge.clone());
            let (addr, port, snmp_port) = node_address(&opts, &name, dialect, seq);
            let (listener, port) = bind_tcp(&name, addr, port).await?;
            let udp = match &snmp_config {
                Some(cfg) if shared_snmp.is_none() => {
                    let (sock, udp_port) = bind_snmp_udp(&name, addr, port, snmp_port).await?;
                    Some((sock, udp_port, cfg.clone()))
                }
                _ => None,
            };
            let sim = lab.serve_sim(listener, &ssh_config, dialect, style, &dev);
            let (snmp_port, snmp) = match udp {
                Some((sock, udp_port, cfg)) => {
                    let agent = SnmpAgent::new(dev.clone(), state_source(&sim), cfg);
                    lab.tasks
                        .push(tokio::spawn(snmp_agent::serve(sock, agent.clone())));
                    (Some(udp_port), Some(agent))
                }
                None => (None, None),
            };
            if shared_snmp.is_some() {
                let source = state_source(&sim);
                shared_members.push((
                    name.clone(),
                    AgentDevice {
                        dev: dev.clone(),
                        source,
                    },
                ));
            }
            lab.nodes.push(LabNode {
                name,
                platform,
                addr,
                port,
                snmp_port,
                snmp,
                snmp_key: None,
                device: dev,
                sim,
            });
        }
        if let Some((sock, cfg)) = shared_snmp {
            lab.serve_shared_snmp(sock, cfg, shared_members)?;
        }
        Ok(lab)
    }

    /// The node's simulator, serving `listener` from a task of the lab's.
    fn serve_sim(
        &mut self,
        listener: TcpListener,
        ssh_config: &Arc<russh::server::Config>,
        dialect: Dialect,
        style: JunosStyle,
        dev: &Arc<Device>,
    ) -> Sim {
        let limit = dev.faults.reset_after_bytes;
        let (sim, task) = match dialect {
            Dialect::Eos => {
                let s = EosSim::new(dev.clone());
                let s2 = s.clone();
                let handler: Handler =
                    Arc::new(move |req, ctl| Box::pin(s2.clone().handle_http(req, ctl)));
                let acc = self.options.eapi_https.then(|| self.tls.acceptor.clone());
                (
                    Sim::Eos(s),
                    tokio::spawn(http::serve(
                        listener,
                        acc,
                        limit,
                        handler,
                        dev.sessions.clone(),
                    )),
                )
            }
            Dialect::F5 => {
                let s = F5Sim::new(dev.clone());
                let s2 = s.clone();
                let handler: Handler =
                    Arc::new(move |req, ctl| Box::pin(s2.clone().handle_http(req, ctl)));
                (
                    Sim::F5(s),
                    tokio::spawn(http::serve(
                        listener,
                        Some(self.tls.acceptor.clone()),
                        limit,
                        handler,
                        dev.sessions.clone(),
                    )),
                )
            }
            Dialect::Junos => {
                let s = JunosSim::new(dev.clone(), style);
                (
                    Sim::Junos(s.clone()),
                    tokio::spawn(ssh::serve(listener, ssh_config.clone(), SshApp::Netconf(s))),
                )
            }
            Dialect::Ios | Dialect::Nxos => {
                let s = CliSim::new(dev.clone());
                (
                    Sim::Cli(s.clone()),
                    tokio::spawn(ssh::serve(listener, ssh_config.clone(), SshApp::Cli(s))),
                )
            }
        };
        self.tasks.push(task);
        sim
    }

    /// One agent on the shared SNMP port answers for every node (`COMMUNITY@NODE`, v3 context `NODE`).
    fn serve_shared_snmp(
        &mut self,
        sock: UdpSocket,
        cfg: Arc<AgentConfig>,
        members: Vec<(String, AgentDevice)>,
    ) -> Result<(), LabError> {
        let port = sock
            .local_addr()
            .map_err(|source| LabError::ListenUdp {
                node: "(shared SNMP port)".into(),
                source,
            })?
            .port();
        let agent = SnmpAgent::shared(members, cfg);
        self.tasks
            .push(tokio::spawn(snmp_agent::serve(sock, agent.clone())));
        for n in &mut self.nodes {
            n.snmp_port = Some(port);
            n.snmp = Some(agent.clone());
            n.snmp_key = Some(n.name.clone());
        }
        Ok(())
    }

    /// `connection_options.snmp.extras` (docs/design.md §6) for the lab's agents; `key` selects a node on a
    /// shared port.
    pub fn snmp_extras(&self, key: Option<&str>) -> Map<String, Value> {
        let o = &self.options;
        let mut v = match (&o.snmp_v3, o.snmp_inventory_v3) {
            (Some(u), true) => json!({
                "version": "3", "user": u.user, "auth_proto": u.auth_proto, "auth_key": u.auth_key,
                "priv_proto": "AES", "priv_key": u.priv_key,
            }),
            _ => json!({"version": "2c", "community": o.snmp_community}),
        };
        if let (Some(k), Some(m)) = (key, v.as_object_mut()) {
            if o.snmp_inventory_v3 && o.snmp_v3.is_some() {
                m.insert("context".into(), Value::String(k.to_owned()));
            } else {
                m.insert(
                    "community".into(),
                    Value::String(format!("{}@{k}", o.snmp_community)),
                );
            }
        }
        v.as_object().cloned().unwrap_or_default()
    }

    /// Every device's sessions summed: sessions opened, the most open at once on one device, and
    /// pairs of sessions of one device open together longer than `slack`
    /// ([`crate::sim::sessions`]).
    pub fn session_totals(&self, slack: std::time::Duration) -> (u64, usize, u64) {
        self.nodes.iter().fold((0, 0, 0), |(o, m, x), n| {
            let s = n.device.sessions.stats();
            (o + s.opened, m.max(s.max_open), x + s.overlaps_over(slack))
        })
    }

    /// Every device's round trips and commands summed, and the sessions; starts a new period for
    /// `peak_open`.
    pub fn counts(&self) -> LabCounts {
        let mut c = LabCounts {
            devices: self.nodes.len(),
            round_trips_min: u64::MAX,
            open: self.gauge.open(),
            peak_open: self.gauge.take_peak(),
            ..LabCounts::default()
        };
        for n in &self.nodes {
            let (rt, cmds) = n.device.exchanges.get();
            c.round_trips += rt;
            c.commands += cmds;
            c.round_trips_min = c.round_trips_min.min(rt);
            c.round_trips_max = c.round_trips_max.max(rt);
            c.sessions += n.device.sessions.stats().opened;
        }
        if self.nodes.is_empty() {
            c.round_trips_min = 0;
        }
        c
    }

    /// Reload node `name` as a power cycle or `reload` would: it comes back with its startup
    /// configuration (Junos: its committed one), so a change that was not saved is lost. `false` when
    /// the lab has no such node.
    pub fn reload(&self, name: &str) -> bool {
        let Some(n) = self.node(name) else {
            return false;
        };
        match &n.sim {
            Sim::Junos(j) => j.reload(),
            _ => n.device.reload(),
        }
        true
    }

    pub fn node(&self, name: &str) -> Option<&LabNode> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// `known_hosts` text for every SSH node (`[127.0.0.1]:PORT ssh-ed25519 ...`).
    pub fn known_hosts(&self) -> String {
        let mut s = String::new();
        for n in &self.nodes {
            if !matches!(n.sim, Sim::Junos(_) | Sim::Cli(_)) {
                continue;
            }
            // OpenSSH's form: the bare address for port 22, `[addr]:port` otherwise.
            if n.port == 22 {
                s.push_str(&format!("{} {}\n", n.addr, self.host_key));
            } else {
                s.push_str(&format!("[{}]:{} {}\n", n.addr, n.port, self.host_key));
            }
        }
        s
    }

    /// The Nornir inventory reaching every node. `files` is where the lab CA and known-hosts files
    /// are (referenced from `data.netgw`), written by [`Lab::write_inventory`].
    pub fn inventory(&self, ca_file: &Path, known_hosts: &Path) -> Value {
        let mut access = BTreeMap::new();
        for n in &self.nodes {
            let mut a = NodeAccess {
                hostname: n.addr.to_string(),
                port: Some(n.port),
                // The device's own login: containerlab's per kind in containerlab mode.
                username: n.device.username.clone(),
                password: n.device.password.clone(),
                ..NodeAccess::default()
            };
            let mut netgw = Map::new();
            let (conn, extras) = match n.sim {
                Sim::Eos(_) => (
                    "eapi",
                    json!({"transport": if self.options.eapi_https { "https" } else { "http" }}),
                ),
                Sim::Junos(_) => ("netconf", json!({})),
                Sim::Cli(_) => ("ssh", json!({})),
                Sim::F5(_) => ("rest", json!({})),
            };
            match n.sim {
                Sim::Eos(_) | Sim::F5(_) => {
                    netgw.insert(
                        "tls_ca".into(),
                        Value::String(ca_file.display().to_string()),
                    );
                }
                Sim::Junos(_) | Sim::Cli(_) => {
                    netgw.insert(
                        "known_hosts".into(),
                        Value::String(known_hosts.display().to_string()),
                    );
                    netgw.insert("accept_new_host_keys".into(), Value::Bool(false));
                }
            }
            if matches!(n.sim, Sim::Cli(_)) {
                netgw.insert(
                    "enable_secret".into(),
                    Value::String(n.device.password.clone()),
                );
            }
            a.connection_options.insert(
                conn.into(),
                ConnectionAccess {
                    port: Some(n.port),
                    extras: extras.as_object().cloned().unwrap_or_default(),
                    ..ConnectionAccess::default()
                },
            );
            if let Some(port) = n.snmp_port {
                a.connection_options.insert(
                    "snmp".into(),
                    ConnectionAccess {
                        hostname: Some(n.addr.to_string()),
                        port: Some(port),
                        extras: self.snmp_extras(n.snmp_key.as_deref()),
                    },
                );
            }
            a.netgw = netgw;
            access.insert(n.name.clone(), a);
        }
        nornir_inventory(&self.topology, &access)
    }

    /// Write the inventory (YAML, 0600: it holds the password) to `path`, with `lab-ca.pem` and
    /// `lab-known_hosts` beside it; the directory is created.
    pub fn write_inventory(&self, path: &Path) -> Result<(), LabError> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let file = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .ok_or_else(|| LabError::Write {
                path: path.display().to_string(),
                source: std::io::Error::other("names no file"),
            })?;
        crate::private::private_dir(dir).map_err(|source| LabError::Write {
            path: dir.display().to_string(),
            source,
        })?;
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
        let ca = dir.join("lab-ca.pem");
        let kh = dir.join("lab-known_hosts");
        write_file(&dir, "lab-ca.pem", &self.tls.ca_pem)?;
        write_file(&dir, "lab-known_hosts", &self.known_hosts())?;
        let inv = self.inventory(&ca, &kh);
        let yaml = serde_norway::to_string(&inv).map_err(|e| LabError::Write {
            path: path.display().to_string(),
            source: std::io::Error::other(e.to_string()),
        })?;
        write_file(&dir, &file, &yaml)
    }

    /// containerlab mode: the lab directory as `containerlab deploy` leaves it (its three files,
    /// `.tls/ca/ca.pem`), plus `known_hosts` for the nodes' SSH host keys. `schema` is
    /// `CLAB_NORNIR_PLATFORM_NAME_SCHEMA`. Returns the directory.
    pub fn write_clab(&self, schema: Option<&str>) -> Result<&Path, LabError> {
        let Some(plan) = &self.options.clab else {
            return Err(LabError::Node {
                node: "(every node)".into(),
                message: "the lab was not started in containerlab mode".into(),
            });
        };
        let dir = plan.lab_dir.as_path();
        let owner = std::env::var("SUDO_USER")
            .or_else(|_| std::env::var("USER"))
            .unwrap_or_default();
        for (name, text) in plan.files(schema, &owner) {
            write_file(dir, name, &text)?;
        }
        write_file(dir, ".tls/ca/ca.pem", &self.tls.ca_pem)?;
        write_file(dir, "known_hosts", &self.known_hosts())?;
        Ok(dir)
    }
}
