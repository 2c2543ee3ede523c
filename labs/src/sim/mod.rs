//! The simulated devices.
//!
//! ```text
//!   Device (name, dialect, credentials, faults, Mutex<DeviceState>)
//!     ├─ eos.rs    eAPI JSON-RPC over HTTP(S)           (http.rs: hyper server, lab TLS)
//!     ├─ junos.rs  NETCONF over SSH, candidate/commit   (ssh.rs: russh server, shared host key)
//!     ├─ cli.rs    IOS / NX-OS interactive CLI over SSH (archive.rs: IOS revert timer)
//!     ├─ f5.rs     iControl REST over HTTPS
//!     └─ snmp/     an SNMPv2c/v3 agent over UDP, MIB generated from the state at every request
//!   sessions.rs: every connection a session; sessions of one device open together are counted
//!   fault.rs: latency, resets (per connection, FaultStream), auth failure, rejected / slow commits
//! ```

pub mod archive;
pub mod bundles;
pub mod cli;
mod cli_lag;
pub mod diff;
pub mod eos;
pub mod f5;
pub mod f5_net;
pub mod fault;
pub mod http;
pub mod junos;
pub mod sessions;
pub mod snmp;
pub mod ssh;
pub mod state;

use fault::Faults;
use state::{DeviceState, Dialect, PortFlag};
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

/// One simulated device.
#[derive(Debug)]
pub struct Device {
    pub name: String,
    pub dialect: Dialect,
    /// Position in the lab (MACs, serials).
    pub index: u32,
    pub username: String,
    pub password: String,
    pub faults: Faults,
    /// Unix time the device "booted".
    pub boot_time: f64,
    /// This device's ends of the topology's links, by port; their peers read them (see [`PortFlag`]).
    pub link_ends: Vec<(String, PortFlag)>,
    /// Its sessions (connections), counted by the listener: two open together are an overlap.
    pub sessions: Arc<sessions::Sessions>,
    state: Mutex<DeviceState>,
    /// The startup configuration: what the device booted from (a new device's) until `write memory`
    /// (or the vendor's equivalent) saves the running one; a reload ([`Device::reload`]) boots from it.
    /// Never locked while waiting for `state`.
    startup: Mutex<DeviceState>,
    /// Saves to the startup configuration, and reloads, so far.
    pub saves: std::sync::atomic::AtomicU32,
    pub reloads: std::sync::atomic::AtomicU32,
    /// What the device answered so far (round trips and commands).
    pub exchanges: Exchanges,
}

/// What a device answered, counted where it answers: the benchmark's round trips per device.
///
/// A **round trip** is one message of the client's the device replied to, after which a client that
/// waits for the reply waits once: an HTTP request (eAPI, iControl REST), a NETCONF RPC (with the RPCs
/// written after it before its reply, pipelined), or one SSH channel data message of an interactive
/// shell (whatever complete lines it holds, answered with their output and a prompt each, or the echo
/// of a line typed so far). A **command** is one request the device answered: an HTTP request, an RPC,
/// or one CLI line. Several CLI lines or RPCs written at once are one round trip and as many commands;
/// a client that sends a command's characters and its return apart
/// (waiting for the echo between them) makes two round trips of one command. HTTP requests that
/// come while another of the device's is being answered (on other connections: HTTP/1.1 answers one
/// at a time on each) are commands of that round trip; without a latency, whether they overlap is a
/// matter of timing, so such a client's count is exact only under latency. The latency fault
/// (`latency-ms`) delays each round trip once, as a network does.
#[derive(Debug, Default)]
pub struct Exchanges {
    round_trips: std::sync::atomic::AtomicU64,
    commands: std::sync::atomic::AtomicU64,
}

impl Exchanges {
    /// Round trips and commands answered so far.
    pub fn get(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.round_trips.load(Relaxed), self.commands.load(Relaxed))
    }

    pub(crate) fn round_trip(&self) {
        self.round_trips
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn command(&self) {
        self.commands
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The state locked; on release, the link ends follow the ports' `shutdown` (Junos keeps `disable` in
/// its configuration tree, so its simulator publishes them at commit instead).
pub struct StateGuard<'a> {
    dev: &'a Device,
    guard: MutexGuard<'a, DeviceState>,
}

impl Deref for StateGuard<'_> {
    type Target = DeviceState;
    fn deref(&self) -> &DeviceState {
        &self.guard
    }
}

impl DerefMut for StateGuard<'_> {
    fn deref_mut(&mut self) -> &mut DeviceState {
        &mut self.guard
    }
}

impl Drop for StateGuard<'_> {
    fn drop(&mut self) {
        if self.dev.dialect == Dialect::Junos {
            return;
        }
        for (port, flag) in &self.dev.link_ends {
            let f = self.guard.iface(port);
            flag.set(f.is_none_or(|f| f.enabled));
            flag.set_bundle(
                f.and_then(|f| f.channel_group.as_ref())
                    .map(|(_, m)| m.as_str()),
            );
        }
    }
}

impl Device {
    pub fn new(
        name: &str,
        dialect: Dialect,
        index: u32,
        ports: usize,
        username: &str,
        password: &str,
        faults: Faults,
    ) -> Device {
        Device {
            name: name.to_owned(),
            dialect,
            index,
            username: username.to_owned(),
            password: password.to_owned(),
            faults,
            boot_time: now(),
            link_ends: Vec::new(),
            sessions: Arc::default(),
            state: Mutex::new(DeviceState::new(dialect, name, index, ports)),
            startup: Mutex::new(DeviceState::new(dialect, name, index, ports)),
            saves: Default::default(),
            reloads: Default::default(),
            exchanges: Exchanges::default(),
        }
    }

    /// One round trip of a request (HTTP, NETCONF) is answered: counted, then its latency.
    pub async fn answer_request(&self) {
        self.exchanges.round_trip();
        self.exchanges.command();
        self.faults.delay().await;
    }

    /// A request that came while another of this device's was being answered, on another
    /// connection: a command of that round trip, its latency paid alongside.
    pub async fn answer_alongside(&self) {
        self.exchanges.command();
        self.faults.delay().await;
    }

    /// An HTTP request: [`Device::answer_alongside`] when it joined another's round trip.
    pub async fn answer_http(&self, joined: bool) {
        if joined {
            self.answer_alongside().await
        } else {
            self.answer_request().await
        }
    }

    /// A request written with the one before it, without waiting for its reply: a command of the
    /// same round trip, whose latency was paid once.
    pub fn answer_joined(&self) {
        self.exchanges.command();
    }

    /// `write memory`, `copy running-config startup-config`, `save sys config`: the running
    /// configuration becomes the startup configuration.
    pub fn save_startup(&self) {
        let running = self.state().clone();
        *self.startup.lock().unwrap_or_else(|p| p.into_inner()) = running;
        self.saves.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// The startup configuration: the last one saved, else the one the device started with.
    pub fn startup(&self) -> DeviceState {
        self.startup
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A reload: the running configuration is replaced by the startup configuration, so what was
    /// never saved is lost.
    pub fn reload(&self) {
        let startup = self.startup();
        self.state().boot_from(&startup);
        self.reloads
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// The state, for a short critical section (never held across an await). Aggregates' status is
    /// brought up to date first: it follows the far ends, which change on other devices.
    pub fn state(&self) -> StateGuard<'_> {
        // A panic while holding the lock cannot leave the state half-written in a way that matters for
        // a simulator: keep serving.
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if guard.has_aggregates() {
            guard.refresh_port_channels();
        }
        StateGuard { dev: self, guard }
    }

    /// This device's end of the link on `port` (Junos: from its committed configuration).
    pub fn set_link_end(&self, port: &str, up: bool) {
        for (p, flag) in &self.link_ends {
            if p == port {
                flag.set(up);
            }
        }
    }

    /// How this device bundles the port on `port` (Junos: from its committed configuration).
    pub fn set_link_bundle(&self, port: &str, mode: Option<&str>) {
        for (p, flag) in &self.link_ends {
            if p == port {
                flag.set_bundle(mode);
            }
        }
    }

    pub fn check_login(&self, user: &str, password: &str) -> bool {
        !self.faults.auth_fail && user == self.username && password == self.password
    }

    pub fn serial(&self) -> String {
        format!("NGW{:09}", self.index)
    }
}

pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// A Unix time as a UTC date and time (the epoch for times before it or out of range).
pub fn utc(unix: f64) -> time::OffsetDateTime {
    time::OffsetDateTime::from_unix_timestamp(unix.max(0.0) as i64)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
}

/// The three-letter English name devices print (`Jan`, `Mon`) of a month or weekday.
pub fn abbrev(name: impl std::fmt::Display) -> String {
    name.to_string().chars().take(3).collect()
}

/// XML text escaping.
pub fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c => o.push(c),
        }
    }
    o
}

/// `aabb.ccdd.eeff` (Cisco / Arista dotted MAC) from `aa:bb:cc:dd:ee:ff`.
pub fn dotted_mac(mac: &str) -> String {
    let h: String = mac.chars().filter(char::is_ascii_hexdigit).collect();
    if h.len() != 12 {
        return mac.to_owned();
    }
    format!("{}.{}.{}", &h[0..4], &h[4..8], &h[8..12])
}
