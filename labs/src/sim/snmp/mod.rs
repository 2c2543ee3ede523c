//! An SNMP agent per simulated device: SNMPv2c (community) and SNMPv3 USM (authPriv, HMAC-SHA-96 or
//! HMAC-SHA-256-192 with AES-128), over UDP on 127.0.0.1, answering from the device's live state.
//!
//! ```text
//!   UdpSocket (one per device) ─▶ serve(): readable ─▶ try_recv_from into a per-thread buffer
//!        └─▶ SnmpAgent::handle(datagram) -> Option<reply>       (pure: bytes in, bytes out)
//!              ├─ ber.rs   strict BER decode / encode
//!              ├─ v2c: community check (a wrong one is dropped, as agents do: RFC 3584 §5.2.1)
//!              ├─ v3:  RFC 3412 §7.2 message processing, RFC 3414 §3.2 USM checks ─▶ Reports
//!              │        (unknown engine ID = discovery, unknown user, wrong digest, time window,
//!              │         decryption error, unknown context); usm.rs keys, HMAC, AES-CFB
//!              └─ GET / GETNEXT / GETBULK over mib::View (built per request from the state)
//! ```
//!
//! RFC 3416 §4.2 rules kept: request-id echoed; noSuchObject / noSuchInstance / endOfMibView per varbind;
//! GETBULK with non-repeaters and max-repetitions, truncated from the end to fit the message size, and
//! `tooBig` (error-index 0, no varbinds) when not even one varbind (GETBULK) or not all (GET, GETNEXT)
//! fit. SET is refused with `noAccess` (the community and the user are read-only). SNMPv1 messages are
//! dropped (netgw speaks v2c and v3). The local message-size constraint is 1472 octets by default
//! (an Ethernet frame, like Cisco's default `snmp-server packetsize`), so large bulk answers are really
//! truncated.
//!
//! An idle agent holds only its socket and a few counters: the MIB is generated per request and the
//! receive buffer is per runtime thread (10,000 devices).

pub mod ber;
pub mod mib;
pub mod usm;

use super::Device;
use super::junos::JunosSim;
use ber::{BerError, Reader, tag};
use netgw_transport::snmp::{Oid, SnmpValue, Varbind};
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use tokio::net::UdpSocket;
use usm::AuthAlg;

/// Default local message-size constraint (octets).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 1472;
/// Engine boots reported by every lab agent (RFC 3414 §2.2.2: at least 1 once configured).
const ENGINE_BOOTS: u32 = 1;
/// RFC 3414 §3.2 step 7: the time window.
const TIME_WINDOW: i64 = 150;

/// An SNMPv3 user the agents accept (read-only, authPriv).
#[derive(Clone)]
pub struct UsmUser {
    pub name: String,
    pub auth: AuthAlg,
    /// Ku of the authentication password (RFC 3414 §A.2), shared by every agent of the lab.
    ku_auth: Vec<u8>,
    /// Ku of the privacy password, hashed with the authentication protocol (RFC 3826 §1.2).
    ku_priv: Vec<u8>,
}

impl UsmUser {
    /// Hash the passwords once (1 MiB of hashing each); agents only localise.
    pub fn new(name: &str, auth: AuthAlg, auth_password: &str, priv_password: &str) -> Self {
        UsmUser {
            name: name.to_owned(),
            auth,
            ku_auth: usm::password_to_key(auth, auth_password.as_bytes()),
            ku_priv: usm::password_to_key(auth, priv_password.as_bytes()),
        }
    }
}

impl std::fmt::Debug for UsmUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UsmUser")
            .field("name", &self.name)
            .field("auth", &self.auth)
            .finish_non_exhaustive()
    }
}

/// What every agent of a lab shares.
#[derive(Clone)]
pub struct AgentConfig {
    /// The read-only SNMPv2c community.
    pub community: Vec<u8>,
    pub user: Option<UsmUser>,
    pub max_message_size: usize,
}

impl std::fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConfig")
            .field("community", &"<redacted>")
            .field("user", &self.user)
            .field("max_message_size", &self.max_message_size)
            .finish()
    }
}

/// USM statistics (SNMP-USER-BASED-SM-MIB usmStats, RFC 3414 §5), the values Reports carry.
#[derive(Debug, Default)]
struct Stats {
    not_in_time_windows: AtomicU32,
    unknown_user_names: AtomicU32,
    unknown_engine_ids: AtomicU32,
    wrong_digests: AtomicU32,
    decryption_errors: AtomicU32,
    unknown_contexts: AtomicU32,
    bad_community_names: AtomicU32,
    parse_errors: AtomicU32,
}

/// Which usmStats counter a Report carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReportKind {
    NotInTimeWindow,
    UnknownUserName,
    UnknownEngineId,
    WrongDigest,
    DecryptionError,
    UnknownContext,
}

impl ReportKind {
    fn oid(self) -> &'static str {
        match self {
            ReportKind::NotInTimeWindow => "1.3.6.1.6.3.15.1.1.2.0",
            ReportKind::UnknownUserName => "1.3.6.1.6.3.15.1.1.3.0",
            ReportKind::UnknownEngineId => "1.3.6.1.6.3.15.1.1.4.0",
            ReportKind::WrongDigest => "1.3.6.1.6.3.15.1.1.5.0",
            ReportKind::DecryptionError => "1.3.6.1.6.3.15.1.1.6.0",
            // SNMP-TARGET-MIB snmpUnknownContexts (RFC 3413).
            ReportKind::UnknownContext => "1.3.6.1.6.3.12.1.5.0",
        }
    }
}

/// A decoded PDU (RFC 3416 §3). For GETBULK, `a` and `b` are non-repeaters and max-repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct Pdu {
    pub tag: u8,
    pub request_id: i32,
    pub a: i64,
    pub b: i64,
    pub varbinds: Vec<Varbind>,
}

pub fn decode_pdu(t: u8, content: &[u8]) -> Result<Pdu, BerError> {
    let mut r = Reader::new(content);
    let request_id = r.read_integer_in(i64::from(i32::MIN), i64::from(i32::MAX))? as i32;
    let a = r.read_integer_in(0, i64::from(i32::MAX))?;
    let b = r.read_integer_in(0, i64::from(i32::MAX))?;
    let varbinds = ber::decode_varbinds(r.expect(tag::SEQUENCE)?)?;
    r.finish()?;
    Ok(Pdu {
        tag: t,
        request_id,
        a,
        b,
        varbinds,
    })
}

/// A Response or Report PDU from already encoded varbinds.
fn encode_pdu(t: u8, request_id: i32, status: i64, index: i64, varbinds: &[Vec<u8>]) -> Vec<u8> {
    let mut list = Vec::with_capacity(varbinds.iter().map(Vec::len).sum());
    for v in varbinds {
        list.extend_from_slice(v);
    }
    let mut c = Vec::with_capacity(list.len() + 16);
    ber::write_integer(&mut c, tag::INTEGER, i64::from(request_id));
    ber::write_integer(&mut c, tag::INTEGER, status);
    ber::write_integer(&mut c, tag::INTEGER, index);
    ber::write_tlv(&mut c, tag::SEQUENCE, &list);
    ber::tlv(t, &c)
}

/// RFC 3416 error-status values used here.
mod status {
    pub const TOO_BIG: i64 = 1;
    pub const NO_ACCESS: i64 = 6;
    pub const AUTHORIZATION_ERROR: i64 = 16;
}

/// Where the device's state comes from (Junos keeps part of it in its configuration tree).
#[derive(Debug, Clone)]
pub enum StateSource {
    Shared,
    Junos(Arc<JunosSim>),
}

/// One simulated device behind an agent.
#[derive(Debug, Clone)]
pub struct AgentDevice {
    pub dev: Arc<Device>,
    pub source: StateSource,
}

/// The devices an agent answers for.
#[derive(Debug)]
enum Devices {
    /// An agent of its own (its own UDP port): the usual case.
    One(AgentDevice),
    /// One agent and port for many devices when the lab cannot hold a socket per device (the
    /// open-file limit): v2c selects the device with the community `COMMUNITY@NODE` (Cisco's
    /// community string indexing), v3 with the context name `NODE` (RFC 3411 §3.3.1).
    Many(std::collections::HashMap<String, AgentDevice>),
}

/// An SNMP engine answering for one device, or for many on a shared port.
#[derive(Debug)]
pub struct SnmpAgent {
    devices: Devices,
    /// When the engine started (snmpEngineTime).
    boot_time: f64,
    config: Arc<AgentConfig>,
    engine_id: Vec<u8>,
    /// Localised auth and privacy keys of the lab's user for this engine.
    keys: Option<(Vec<u8>, Vec<u8>)>,
    stats: Stats,
    salt: AtomicU64,
}

/// The IANA enterprise number of a vendor, for its engine ID (RFC 3411 §5 SnmpEngineID).
fn enterprise(dev: &Device) -> u32 {
    use super::state::Dialect;
    match dev.dialect {
        Dialect::Eos => 30065,
        Dialect::Junos => 2636,
        Dialect::Ios | Dialect::Nxos => 9,
        Dialect::F5 => 3375,
    }
}

/// What selects a device: the v2c community or the v3 context name.
#[derive(Debug, Clone, Copy)]
enum Key<'a> {
    Community(&'a [u8]),
    Context(&'a [u8]),
}

/// Security level of an incoming or outgoing v3 message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Level {
    auth: bool,
    privacy: bool,
}

const NO_AUTH: Level = Level {
    auth: false,
    privacy: false,
};

impl SnmpAgent {
    /// The agent of one device.
    pub fn new(dev: Arc<Device>, source: StateSource, config: Arc<AgentConfig>) -> Arc<Self> {
        // RFC 3411 §5: 0x80 | enterprise, format 4 (text), then the device's serial.
        let mut engine_id = (0x8000_0000u32 | enterprise(&dev)).to_be_bytes().to_vec();
        engine_id.push(4);
        engine_id.extend_from_slice(dev.serial().as_bytes());
        let seed = u64::from(dev.index) << 40;
        let boot_time = dev.boot_time;
        Self::build(
            Devices::One(AgentDevice { dev, source }),
            engine_id,
            boot_time,
            seed,
            config,
        )
    }

    /// One agent for `devices` (node name, device) on a shared port (`COMMUNITY@NODE`, context `NODE`).
    pub fn shared(devices: Vec<(String, AgentDevice)>, config: Arc<AgentConfig>) -> Arc<Self> {
        // net-snmp's enterprise (8072), text format: the lab's engine, not a device's.
        let mut engine_id = (0x8000_0000u32 | 8072).to_be_bytes().to_vec();
        engine_id.push(4);
        engine_id.extend_from_slice(b"netgw-lab");
        Self::build(
            Devices::Many(devices.into_iter().collect()),
            engine_id,
            super::now(),
            0,
            config,
        )
    }

    fn build(
        devices: Devices,
        engine_id: Vec<u8>,
        boot_time: f64,
        seed: u64,
        config: Arc<AgentConfig>,
    ) -> Arc<Self> {
        let keys = config.user.as_ref().map(|u| {
            (
                usm::localize(u.auth, &u.ku_auth, &engine_id),
                usm::localize(u.auth, &u.ku_priv, &engine_id),
            )
        });
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
            ^ seed;
        Arc::new(SnmpAgent {
            devices,
            boot_time,
            config,
            engine_id,
            keys,
            stats: Stats::default(),
            salt: AtomicU64::new(seed),
        })
    }

    pub fn engine_id(&self) -> &[u8] {
        &self.engine_id
    }

    fn engine_time(&self) -> u32 {
        (super::now() - self.boot_time).clamp(0.0, f64::from(i32::MAX)) as u32
    }

    /// The device a v2c community or a v3 context name addresses.
    fn select(&self, key: Key<'_>) -> Option<&AgentDevice> {
        match (&self.devices, key) {
            (Devices::One(d), Key::Community(c)) => {
                (c == self.config.community.as_slice()).then_some(d)
            }
            (Devices::One(d), Key::Context(c)) => c.is_empty().then_some(d),
            (Devices::Many(m), Key::Community(c)) => {
                let base = self.config.community.as_slice();
                let node = c.strip_prefix(base)?.strip_prefix(b"@")?;
                m.get(std::str::from_utf8(node).ok()?)
            }
            (Devices::Many(m), Key::Context(c)) => m.get(std::str::from_utf8(c).ok()?),
        }
    }

    fn view<'a>(&'a self, d: &'a AgentDevice) -> mib::View<'a> {
        let (state, junos_style) = match &d.source {
            StateSource::Shared => (d.dev.state().clone(), None),
            StateSource::Junos(j) => (j.snmp_state(), Some(j.style)),
        };
        let ticks = ((super::now() - d.dev.boot_time).max(0.0) * 100.0) as u64;
        mib::View::new(mib::MibInput {
            dev: &d.dev,
            state,
            junos_style,
            uptime_ticks: (ticks % (1u64 << 32)) as u32,
            engine_id: &self.engine_id,
            engine_boots: ENGINE_BOOTS,
            engine_time: self.engine_time(),
            max_message_size: self.config.max_message_size as u32,
        })
    }

    /// One datagram in, at most one datagram out. Never panics; malformed input is dropped.
    pub fn handle(&self, datagram: &[u8]) -> Option<Vec<u8>> {
        let out = self.handle_message(datagram);
        if out.is_err() {
            self.stats.parse_errors.fetch_add(1, Ordering::Relaxed);
        }
        out.ok().flatten()
    }

    fn handle_message(&self, datagram: &[u8]) -> Result<Option<Vec<u8>>, BerError> {
        let mut outer = Reader::new(datagram);
        let mut msg = outer.nested(tag::SEQUENCE)?;
        outer.finish()?;
        match msg.read_integer()? {
            1 => self.handle_v2c(msg),
            3 => self.handle_v3(datagram, msg),
            // SNMPv1 and unknown versions: snmpInBadVersions, no answer (RFC 3412 §7.2 step 2).
            _ => Ok(None),
        }
    }

    fn handle_v2c(&self, mut msg: Reader<'_>) -> Result<Option<Vec<u8>>, BerError> {
        let community = msg.read_octets()?;
        let (t, content) = msg.read_tlv()?;
        msg.finish()?;
        let pdu = decode_pdu(t, content)?;
        let Some(device) = self.select(Key::Community(community)) else {
            // RFC 3584 §5.2.1 / RFC 1157 §4.1: an unknown community is counted and dropped.
            self.stats
                .bad_community_names
                .fetch_add(1, Ordering::Relaxed);
            return Ok(None);
        };
        if device.dev.faults.snmp_no_answer {
            return Ok(None);
        }
        let wrap = |pdu: &[u8]| {
            let mut c = Vec::with_capacity(pdu.len() + community.len() + 8);
            ber::write_integer(&mut c, tag::INTEGER, 1);
            ber::write_tlv(&mut c, tag::OCTET_STRING, community);
            c.extend_from_slice(pdu);
            ber::tlv(tag::SEQUENCE, &c)
        };
        Ok(self.respond(device, &pdu, self.config.max_message_size, &wrap))
    }

    /// Answer a request PDU; `wrap` turns an encoded Response PDU into the whole message.
    fn respond(
        &self,
        device: &AgentDevice,
        pdu: &Pdu,
        max_size: usize,
        wrap: &dyn Fn(&[u8]) -> Vec<u8>,
    ) -> Option<Vec<u8>> {
        let rid = pdu.request_id;
        let echo = || pdu.varbinds.iter().map(ber::varbind).collect::<Vec<_>>();
        let too_big = || wrap(&encode_pdu(tag::RESPONSE, rid, status::TOO_BIG, 0, &[]));
        let (vbs, bulk): (Vec<Vec<u8>>, bool) = match pdu.tag {
            tag::GET | tag::GET_NEXT | tag::GET_BULK => {
                let overhead = wrap(&encode_pdu(tag::RESPONSE, rid, 0, 0, &[])).len() + 12;
                let budget = max_size.saturating_sub(overhead);
                let view = self.view(device);
                (answer(&view, pdu, budget), pdu.tag == tag::GET_BULK)
            }
            // Read-only access (RFC 3416 §4.2.5): noAccess on the first varbind.
            tag::SET => {
                return Some(wrap(&encode_pdu(
                    tag::RESPONSE,
                    rid,
                    status::NO_ACCESS,
                    1,
                    &echo(),
                )));
            }
            // Responses, reports, traps and informs are not for an agent.
            _ => return None,
        };
        let mut n = vbs.len();
        loop {
            let msg = wrap(&encode_pdu(tag::RESPONSE, rid, 0, 0, &vbs[..n]));
            if msg.len() <= max_size {
                return Some(msg);
            }
            // RFC 3416 §4.2.3: GETBULK answers with fewer varbinds, removed from the end; GET and GETNEXT
            // (§4.2.1, §4.2.2) answer tooBig with no varbinds.
            if !bulk || n <= 1 {
                let tb = too_big();
                return (tb.len() <= max_size).then_some(tb);
            }
            n -= 1;
        }
    }

    // -----------------------------------------------------------------------------------------------
    // SNMPv3

    fn handle_v3(&self, datagram: &[u8], mut msg: Reader<'_>) -> Result<Option<Vec<u8>>, BerError> {
        let mut gd = msg.nested(tag::SEQUENCE)?;
        let msg_id = gd.read_integer_in(0, i64::from(i32::MAX))?;
        let msg_max = gd.read_integer_in(484, i64::from(i32::MAX))?;
        let flags = match gd.read_octets()? {
            [f] => *f,
            _ => return Err(BerError::Range),
        };
        let model = gd.read_integer_in(1, i64::from(i32::MAX))?;
        gd.finish()?;
        let sp_bytes = msg.read_octets()?;
        let (data_tag, data) = msg.read_tlv()?;
        msg.finish()?;
        if model != 3 {
            // snmpUnknownSecurityModels: dropped (RFC 3412 §7.2 step 4).
            return Ok(None);
        }
        let mut sp = Reader::new(sp_bytes).nested(tag::SEQUENCE)?;
        let engine_id = sp.read_octets()?;
        let boots = sp.read_integer_in(0, i64::from(i32::MAX))?;
        let time = sp.read_integer_in(0, i64::from(i32::MAX))?;
        let user = sp.read_octets()?;
        let auth_params = sp.read_octets()?;
        let priv_params = sp.read_octets()?;
        sp.finish()?;
        if user.len() > 32 {
            return Err(BerError::Range);
        }
        let level = Level {
            auth: flags & 0x01 != 0,
            privacy: flags & 0x02 != 0,
        };
        let reportable = flags & 0x04 != 0;
        if level.privacy && !level.auth {
            // snmpInvalidMsgs (RFC 3412 §7.2 step 5).
            return Ok(None);
        }
        let max_size = usize::try_from(msg_max)
            .unwrap_or(usize::MAX)
            .min(self.config.max_message_size);
        // The request-id of a plaintext request, for Reports (0 when it cannot be read).
        let plain = (data_tag == tag::SEQUENCE)
            .then(|| decode_scoped(data).ok())
            .flatten();
        let rid = plain.as_ref().map_or(0, |s| s.2.request_id);
        let report = |kind: ReportKind, level: Level| -> Option<Vec<u8>> {
            if !reportable {
                return None;
            }
            Some(self.report(msg_id, user, rid, kind, level))
        };

        // RFC 3414 §3.2 step 3: an unknown engine ID is the discovery request.
        if engine_id != self.engine_id.as_slice() {
            return Ok(report(ReportKind::UnknownEngineId, NO_AUTH));
        }
        // Step 4: the user.
        let (Some(u), Some((auth_key, priv_key))) = (&self.config.user, &self.keys) else {
            return Ok(report(ReportKind::UnknownUserName, NO_AUTH));
        };
        if user != u.name.as_bytes() {
            return Ok(report(ReportKind::UnknownUserName, NO_AUTH));
        }
        // Step 6: authentication over the whole message with the MAC zeroed.
        if level.auth {
            if auth_params.len() != u.auth.mac_len() {
                self.stats.wrong_digests.fetch_add(1, Ordering::Relaxed);
                return Ok(report(ReportKind::WrongDigest, NO_AUTH));
            }
            let offset = (auth_params.as_ptr() as usize).wrapping_sub(datagram.as_ptr() as usize);
            let mut zeroed = datagram.to_vec();
            match zeroed.get_mut(offset..offset + auth_params.len()) {
                Some(slot) => slot.fill(0),
                None => return Err(BerError::Range),
            }
            if !usm::verify(u.auth, auth_key, &zeroed, auth_params) {
                return Ok(report(ReportKind::WrongDigest, NO_AUTH));
            }
            // Step 7: the time window (the agent is authoritative).
            let now = i64::from(self.engine_time());
            if boots != i64::from(ENGINE_BOOTS) || (time - now).abs() > TIME_WINDOW {
                return Ok(report(
                    ReportKind::NotInTimeWindow,
                    Level {
                        auth: true,
                        privacy: false,
                    },
                ));
            }
        }
        // Step 8: decryption.
        let scoped = if level.privacy {
            let parsed = decrypt_scoped(priv_key, (data_tag, data), priv_params, (boots, time));
            match parsed {
                Some(s) => s,
                None => {
                    self.stats.decryption_errors.fetch_add(1, Ordering::Relaxed);
                    return Ok(report(ReportKind::DecryptionError, NO_AUTH));
                }
            }
        } else {
            match plain {
                Some(s) => s,
                None => {
                    return Err(BerError::Tag {
                        expected: tag::SEQUENCE,
                        found: data_tag,
                    });
                }
            }
        };
        self.answer_v3(msg_id, (level, user), scoped, max_size, &report)
    }

    /// The decoded ScopedPDU, answered by the device its context names (RFC 3413 §3.2), with
    /// `report` for the Reports of the security model.
    fn answer_v3(
        &self,
        msg_id: i64,
        (level, user): (Level, &[u8]),
        scoped: (Vec<u8>, Vec<u8>, Pdu),
        max_size: usize,
        report: &dyn Fn(ReportKind, Level) -> Option<Vec<u8>>,
    ) -> Result<Option<Vec<u8>>, BerError> {
        let (context_engine, context_name, pdu) = scoped;
        let device = match self.select(Key::Context(&context_name)) {
            Some(d) if context_engine.is_empty() || context_engine == self.engine_id => d,
            _ => return Ok(report(ReportKind::UnknownContext, level)),
        };
        if device.dev.faults.snmp_no_answer {
            return Ok(None);
        }
        let rid = pdu.request_id;
        let engine = self.engine_id.clone();
        let wrap = |p: &[u8]| {
            let mut c = Vec::with_capacity(p.len() + engine.len() + 8);
            ber::write_tlv(&mut c, tag::OCTET_STRING, &engine);
            ber::write_tlv(&mut c, tag::OCTET_STRING, &context_name);
            c.extend_from_slice(p);
            self.v3_message(msg_id, level, user, &ber::tlv(tag::SEQUENCE, &c))
        };
        // Access control (like net-snmp's `rouser NAME priv`): only authPriv may read.
        if !(level.auth && level.privacy) {
            let echo: Vec<Vec<u8>> = pdu.varbinds.iter().map(ber::varbind).collect();
            return Ok(Some(wrap(&encode_pdu(
                tag::RESPONSE,
                rid,
                status::AUTHORIZATION_ERROR,
                0,
                &echo,
            ))));
        }
        Ok(self.respond(device, &pdu, max_size, &wrap))
    }

    /// A Report PDU (RFC 3412 §7.1.3) carrying one usmStats counter.
    fn report(
        &self,
        msg_id: i64,
        user: &[u8],
        rid: i32,
        kind: ReportKind,
        level: Level,
    ) -> Vec<u8> {
        let counter = match kind {
            ReportKind::NotInTimeWindow => &self.stats.not_in_time_windows,
            ReportKind::UnknownUserName => &self.stats.unknown_user_names,
            ReportKind::UnknownEngineId => &self.stats.unknown_engine_ids,
            ReportKind::WrongDigest => &self.stats.wrong_digests,
            ReportKind::DecryptionError => &self.stats.decryption_errors,
            ReportKind::UnknownContext => &self.stats.unknown_contexts,
        };
        let value = counter.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        let vb = ber::varbind(&Varbind::new(
            kind.oid().parse::<Oid>().unwrap_or_default(),
            SnmpValue::Counter32(value),
        ));
        let mut c = Vec::new();
        ber::write_tlv(&mut c, tag::OCTET_STRING, &self.engine_id);
        ber::write_tlv(&mut c, tag::OCTET_STRING, &[]);
        c.extend_from_slice(&encode_pdu(tag::REPORT, rid, 0, 0, &[vb]));
        // Reports at authNoPriv carry the user's MAC; the others go unauthenticated, without a user
        // name the agent could not verify.
        let user = if level.auth { user } else { &[][..] };
        self.v3_message(msg_id, level, user, &ber::tlv(tag::SEQUENCE, &c))
    }

    /// An SNMPv3 message from our engine (RFC 3412 §6, RFC 3414 §2.4): encrypts and authenticates
    /// `scoped` (an encoded ScopedPDU) as `level` asks.
    fn v3_message(&self, msg_id: i64, level: Level, user: &[u8], scoped: &[u8]) -> Vec<u8> {
        let (boots, time) = (ENGINE_BOOTS, self.engine_time());
        let keys = self.keys.as_ref();
        let alg = self.config.user.as_ref().map_or(AuthAlg::Sha1, |u| u.auth);
        let level = Level {
            auth: level.auth && keys.is_some(),
            privacy: level.privacy && keys.is_some(),
        };
        let (data, priv_params) = match (level.privacy, keys) {
            (true, Some((_, priv_key))) => {
                let salt = self.salt.fetch_add(1, Ordering::Relaxed).to_be_bytes();
                let mut buf = scoped.to_vec();
                usm::aes_cfb(priv_key, usm::aes_iv(boots, time, &salt), &mut buf, true);
                (ber::tlv(tag::OCTET_STRING, &buf), salt.to_vec())
            }
            _ => (scoped.to_vec(), Vec::new()),
        };
        let mac_len = if level.auth { alg.mac_len() } else { 0 };
        let mut sp = Vec::new();
        ber::write_tlv(&mut sp, tag::OCTET_STRING, &self.engine_id);
        ber::write_integer(&mut sp, tag::INTEGER, i64::from(boots));
        ber::write_integer(&mut sp, tag::INTEGER, i64::from(time));
        ber::write_tlv(&mut sp, tag::OCTET_STRING, user);
        let mac_in_sp = sp.len() + ber::header_len(mac_len);
        ber::write_tlv(&mut sp, tag::OCTET_STRING, &vec![0; mac_len]);
        ber::write_tlv(&mut sp, tag::OCTET_STRING, &priv_params);
        let mac_in_sp = ber::header_len(sp.len()) + mac_in_sp;
        let sp = ber::tlv(tag::SEQUENCE, &sp);
        let flags = u8::from(level.auth) | (u8::from(level.privacy) << 1);
        let mut gd = Vec::new();
        ber::write_integer(&mut gd, tag::INTEGER, msg_id);
        ber::write_integer(&mut gd, tag::INTEGER, self.config.max_message_size as i64);
        ber::write_tlv(&mut gd, tag::OCTET_STRING, &[flags]);
        ber::write_integer(&mut gd, tag::INTEGER, 3);
        let mut body = Vec::new();
        ber::write_integer(&mut body, tag::INTEGER, 3);
        ber::write_tlv(&mut body, tag::SEQUENCE, &gd);
        let mac_in_body = body.len() + ber::header_len(sp.len()) + mac_in_sp;
        ber::write_tlv(&mut body, tag::OCTET_STRING, &sp);
        body.extend_from_slice(&data);
        let mut msg = ber::tlv(tag::SEQUENCE, &body);
        if let (true, Some((auth_key, _))) = (level.auth, keys) {
            let at = ber::header_len(body.len()) + mac_in_body;
            let mac = usm::mac(alg, auth_key, &msg);
            if let Some(slot) = msg.get_mut(at..at + mac_len) {
                slot.copy_from_slice(&mac);
            }
        }
        msg
    }
}

/// The ScopedPDU of an authPriv message: AES-128 CFB (RFC 3826 §3.1.4) with the salt from
/// msgPrivacyParameters; `None` when it does not decrypt to one.
fn decrypt_scoped(
    priv_key: &[u8],
    (data_tag, data): (u8, &[u8]),
    priv_params: &[u8],
    (boots, time): (i64, i64),
) -> Option<(Vec<u8>, Vec<u8>, Pdu)> {
    let salt: Option<[u8; 8]> = priv_params.try_into().ok();
    let decrypted = match (data_tag, salt) {
        (tag::OCTET_STRING, Some(salt)) => {
            let mut buf = data.to_vec();
            let iv = usm::aes_iv(boots as u32, time as u32, &salt);
            usm::aes_cfb(priv_key, iv, &mut buf, false);
            Some(buf)
        }
        _ => None,
    };
    decrypted.as_deref().and_then(|b| {
        // The plaintext is one ScopedPDU; CFB adds no padding, but tolerate none after it.
        let mut r = Reader::new(b);
        let seq = r.expect(tag::SEQUENCE).ok()?;
        decode_scoped(seq).ok()
    })
}

/// ScopedPDU (RFC 3412 §6): contextEngineID, contextName, PDU.
fn decode_scoped(seq: &[u8]) -> Result<(Vec<u8>, Vec<u8>, Pdu), BerError> {
    let mut r = Reader::new(seq);
    let ce = r.read_octets()?.to_vec();
    let cn = r.read_octets()?.to_vec();
    let (t, c) = r.read_tlv()?;
    r.finish()?;
    Ok((ce, cn, decode_pdu(t, c)?))
}

/// The varbinds answering a GET, GETNEXT or GETBULK (RFC 3416 §4.2.1-3), encoded. GETBULK stops adding
/// repetitions once `budget` octets are used (the caller truncates precisely); every varbind of a GET or
/// GETNEXT is answered.
fn answer(view: &mib::View<'_>, pdu: &Pdu, budget: usize) -> Vec<Vec<u8>> {
    let next = |oid: &Oid| -> Varbind {
        view.get_next(oid)
            .unwrap_or_else(|| Varbind::new(oid.clone(), SnmpValue::EndOfMibView))
    };
    match pdu.tag {
        tag::GET => pdu
            .varbinds
            .iter()
            .map(|vb| ber::varbind(&Varbind::new(vb.oid.clone(), view.get(&vb.oid))))
            .collect(),
        tag::GET_NEXT => pdu
            .varbinds
            .iter()
            .map(|vb| ber::varbind(&next(&vb.oid)))
            .collect(),
        _ => {
            let n = usize::try_from(pdu.a).unwrap_or(0).min(pdu.varbinds.len());
            let m = usize::try_from(pdu.b).unwrap_or(0);
            let mut out = Vec::new();
            let mut used = 0usize;
            for vb in &pdu.varbinds[..n] {
                let e = ber::varbind(&next(&vb.oid));
                used += e.len();
                out.push(e);
            }
            let mut cursors: Vec<Oid> = pdu.varbinds[n..].iter().map(|v| v.oid.clone()).collect();
            let mut ended = vec![false; cursors.len()];
            'rounds: for _ in 0..m {
                if cursors.is_empty() || ended.iter().all(|e| *e) {
                    // RFC 3416 §4.2.3: all endOfMibView, the agent may stop.
                    break;
                }
                for (c, end) in cursors.iter_mut().zip(ended.iter_mut()) {
                    let vb = if *end {
                        Varbind::new(c.clone(), SnmpValue::EndOfMibView)
                    } else {
                        let vb = next(c);
                        if vb.value == SnmpValue::EndOfMibView {
                            *end = true;
                        } else {
                            c.clone_from(&vb.oid);
                        }
                        vb
                    };
                    let e = ber::varbind(&vb);
                    used += e.len();
                    out.push(e);
                    if used > budget {
                        break 'rounds;
                    }
                }
            }
            out
        }
    }
}

thread_local! {
    /// One receive buffer per runtime thread, not per device: 10,000 idle agents hold none.
    static RECV: RefCell<Vec<u8>> = RefCell::new(vec![0; 65_535]);
}

/// Serve `agent` on `socket` until the task is aborted.
pub async fn serve(socket: UdpSocket, agent: Arc<SnmpAgent>) {
    loop {
        if socket.readable().await.is_err() {
            return;
        }
        let reply = RECV.with(|buf| {
            let mut buf = buf.borrow_mut();
            match socket.try_recv_from(&mut buf) {
                Ok((n, peer)) => buf
                    .get(..n)
                    .and_then(|d| agent.handle(d))
                    .map(|r| (r, peer)),
                // WouldBlock (a spurious wake-up) or an error datagram: wait again.
                Err(_) => None,
            }
        });
        if let Some((bytes, peer)) = reply {
            // A reply that cannot be sent is lost, as UDP replies are.
            let _ = socket.send_to(&bytes, peer).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::fault::Faults;
    use crate::sim::state::Dialect;

    fn agent(max: usize) -> Arc<SnmpAgent> {
        let dev = Arc::new(Device::new(
            "sw1",
            Dialect::Eos,
            7,
            8,
            "admin",
            "admin",
            Faults::default(),
        ));
        SnmpAgent::new(
            dev,
            StateSource::Shared,
            Arc::new(AgentConfig {
                community: b"pub".to_vec(),
                user: Some(UsmUser::new(
                    "u1",
                    AuthAlg::Sha1,
                    "auth-pass-1",
                    "priv-pass-1",
                )),
                max_message_size: max,
            }),
        )
    }

    fn oid(s: &str) -> Oid {
        s.parse().unwrap()
    }

    /// A v2c request message.
    fn request(community: &[u8], t: u8, rid: i32, a: i64, b: i64, oids: &[&str]) -> Vec<u8> {
        let vbs: Vec<Vec<u8>> = oids
            .iter()
            .map(|o| ber::varbind(&Varbind::new(oid(o), SnmpValue::Null)))
            .collect();
        let mut pdu = encode_pdu(t, rid, a, b, &vbs);
        // encode_pdu writes error-status/index; for requests they are a and b.
        pdu = {
            let d = decode_pdu(t, Reader::new(&pdu).expect(t).unwrap()).unwrap();
            assert_eq!((d.a, d.b), (a, b));
            pdu
        };
        let mut c = Vec::new();
        ber::write_integer(&mut c, tag::INTEGER, 1);
        ber::write_tlv(&mut c, tag::OCTET_STRING, community);
        c.extend_from_slice(&pdu);
        ber::tlv(tag::SEQUENCE, &c)
    }

    /// (community, pdu) of a v2c response.
    fn response(bytes: &[u8]) -> (Vec<u8>, Pdu) {
        let mut r = Reader::new(bytes);
        let mut m = r.nested(tag::SEQUENCE).unwrap();
        r.finish().unwrap();
        assert_eq!(m.read_integer().unwrap(), 1);
        let c = m.read_octets().unwrap().to_vec();
        let (t, content) = m.read_tlv().unwrap();
        m.finish().unwrap();
        assert_eq!(t, tag::RESPONSE);
        (c, decode_pdu(t, content).unwrap())
    }

    #[test]
    fn get_getnext_echo_request_id_and_exceptions() {
        let a = agent(DEFAULT_MAX_MESSAGE_SIZE);
        let req = request(
            b"pub",
            tag::GET,
            -12345,
            0,
            0,
            &["1.3.6.1.2.1.1.5.0", "1.3.6.1.2.1.1.5.1", "1.3.6.1.2.1.99.0"],
        );
        let (c, p) = response(&a.handle(&req).unwrap());
        assert_eq!(
            (c.as_slice(), p.request_id, p.a, p.b),
            (&b"pub"[..], -12345, 0, 0)
        );
        let v: Vec<&SnmpValue> = p.varbinds.iter().map(|vb| &vb.value).collect();
        assert_eq!(
            v,
            [
                &SnmpValue::OctetString(b"sw1".to_vec()),
                &SnmpValue::NoSuchInstance,
                &SnmpValue::NoSuchObject
            ]
        );
        let req = request(
            b"pub",
            tag::GET_NEXT,
            7,
            0,
            0,
            &["1.3.6.1.2.1.1.5", "1.3.6.1.6.3.10.2.1.4.0"],
        );
        let (_, p) = response(&a.handle(&req).unwrap());
        assert_eq!(p.varbinds[0].oid, oid("1.3.6.1.2.1.1.5.0"));
        assert_eq!(
            p.varbinds[1],
            Varbind::new(oid("1.3.6.1.6.3.10.2.1.4.0"), SnmpValue::EndOfMibView)
        );
        // A wrong community is dropped; so are responses sent to the agent.
        assert!(
            a.handle(&request(b"nope", tag::GET, 1, 0, 0, &["1.3.6.1.2.1.1.5.0"]))
                .is_none()
        );
        assert!(
            a.handle(&request(
                b"pub",
                tag::RESPONSE,
                1,
                0,
                0,
                &["1.3.6.1.2.1.1.5.0"]
            ))
            .is_none()
        );
        // SET: noAccess on the first varbind.
        let (_, p) = response(
            &a.handle(&request(b"pub", tag::SET, 9, 0, 0, &["1.3.6.1.2.1.1.5.0"]))
                .unwrap(),
        );
        assert_eq!((p.request_id, p.a, p.b), (9, status::NO_ACCESS, 1));
    }

    #[test]
    fn getbulk_repeats_truncates_to_the_message_size_and_ends() {
        let a = agent(DEFAULT_MAX_MESSAGE_SIZE);
        // One non-repeater (sysUpTime), then ifDescr and ifMtu repeated.
        let req = request(
            b"pub",
            tag::GET_BULK,
            42,
            1,
            3,
            &[
                "1.3.6.1.2.1.1.3",
                "1.3.6.1.2.1.2.2.1.2",
                "1.3.6.1.2.1.2.2.1.4",
            ],
        );
        let (_, p) = response(&a.handle(&req).unwrap());
        let names: Vec<String> = p.varbinds.iter().map(|v| v.oid.to_string()).collect();
        assert_eq!(
            names,
            [
                "1.3.6.1.2.1.1.3.0",
                "1.3.6.1.2.1.2.2.1.2.1",
                "1.3.6.1.2.1.2.2.1.4.1",
                "1.3.6.1.2.1.2.2.1.2.2",
                "1.3.6.1.2.1.2.2.1.4.2",
                "1.3.6.1.2.1.2.2.1.2.3",
                "1.3.6.1.2.1.2.2.1.4.3",
            ]
        );
        // A huge max-repetitions: the answer is cut to 1472 octets, in order, and complete varbinds.
        let req = request(b"pub", tag::GET_BULK, 43, 0, 100_000, &["1.3.6.1.2.1"]);
        let reply = a.handle(&req).unwrap();
        assert!(reply.len() <= DEFAULT_MAX_MESSAGE_SIZE, "{}", reply.len());
        let (_, p) = response(&reply);
        assert_eq!(p.a, 0, "no error: truncation is not tooBig for GETBULK");
        assert!(p.varbinds.len() > 20, "{}", p.varbinds.len());
        for w in p.varbinds.windows(2) {
            assert!(w[0].oid < w[1].oid);
        }
        // Past the end: endOfMibView, and the agent stops repeating.
        let req = request(
            b"pub",
            tag::GET_BULK,
            44,
            0,
            50,
            &["1.3.6.1.6.3.10.2.1.3.0"],
        );
        let (_, p) = response(&a.handle(&req).unwrap());
        assert_eq!(p.varbinds.len(), 2);
        assert_eq!(p.varbinds[1].value, SnmpValue::EndOfMibView);
    }

    #[test]
    fn too_big_for_get_and_for_a_bulk_that_cannot_carry_one_varbind() {
        let a = agent(DEFAULT_MAX_MESSAGE_SIZE);
        let many = vec!["1.3.6.1.2.1.1.1.0"; 40];
        let (_, p) = response(
            &a.handle(&request(b"pub", tag::GET, 5, 0, 0, &many))
                .unwrap(),
        );
        assert_eq!((p.request_id, p.a, p.b), (5, status::TOO_BIG, 0));
        assert!(p.varbinds.is_empty());
        let small = agent(484);
        let big_oid = format!("1.3.6.1.2.1.1.1{}", ".4294967295".repeat(40));
        let (_, p) = response(
            &small
                .handle(&request(
                    b"pub",
                    tag::GET_BULK,
                    6,
                    1,
                    0,
                    &[big_oid.as_str()],
                ))
                .unwrap(),
        );
        // The non-repeater's answer (sysObjectID) fits; a request whose echo alone is too big does not.
        assert_eq!(p.a, 0);
        let huge: Vec<String> = (0..4).map(|_| big_oid.clone()).collect();
        let huge: Vec<&str> = huge.iter().map(String::as_str).collect();
        let (_, p) = response(
            &small
                .handle(&request(b"pub", tag::GET, 7, 0, 0, &huge))
                .unwrap(),
        );
        assert_eq!(p.a, status::TOO_BIG);
    }

    /// xorshift64*: deterministic noise for the fuzz test.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    #[test]
    fn garbage_datagrams_never_panic() {
        let a = agent(DEFAULT_MAX_MESSAGE_SIZE);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let valid = [
            request(
                b"pub",
                tag::GET_BULK,
                1,
                1,
                10,
                &["1.3.6.1.2.1.1", "1.3.6.1.2.1.2.2.1.2"],
            ),
            request(b"pub", tag::GET, 2, 0, 0, &["1.3.6.1.2.1.1.5.0"]),
            // A v3 discovery request as snmp2 and net-snmp send it.
            discovery(),
        ];
        for v in &valid {
            assert!(a.handle(v).is_some());
        }
        let mut answered = 0;
        for i in 0..60_000 {
            let data: Vec<u8> = if i % 3 == 0 {
                let len = (rng.next() % 600) as usize;
                (0..len).map(|_| rng.next() as u8).collect()
            } else {
                // Mutations of valid messages: flipped, truncated, extended.
                let mut d = valid[(rng.next() % valid.len() as u64) as usize].clone();
                for _ in 0..=(rng.next() % 4) {
                    let at = (rng.next() as usize) % d.len();
                    match rng.next() % 4 {
                        0 => d[at] ^= 1 << (rng.next() % 8),
                        1 => d[at] = rng.next() as u8,
                        2 => d.truncate(at),
                        _ => d.insert(at, rng.next() as u8),
                    }
                    if d.is_empty() {
                        break;
                    }
                }
                d
            };
            if a.handle(&data).is_some() {
                answered += 1;
            }
        }
        assert!(answered > 0, "some mutations stay valid");
        // Still answering normally.
        assert!(a.handle(&valid[1]).is_some());
    }

    /// A v3 discovery request: unknown engine, no user, reportable, empty GET.
    fn discovery() -> Vec<u8> {
        let mut sp = Vec::new();
        ber::write_tlv(&mut sp, tag::OCTET_STRING, &[]);
        ber::write_integer(&mut sp, tag::INTEGER, 0);
        ber::write_integer(&mut sp, tag::INTEGER, 0);
        for _ in 0..3 {
            ber::write_tlv(&mut sp, tag::OCTET_STRING, &[]);
        }
        let sp = ber::tlv(tag::SEQUENCE, &sp);
        let mut gd = Vec::new();
        ber::write_integer(&mut gd, tag::INTEGER, 1234);
        ber::write_integer(&mut gd, tag::INTEGER, 65507);
        ber::write_tlv(&mut gd, tag::OCTET_STRING, &[4]);
        ber::write_integer(&mut gd, tag::INTEGER, 3);
        let mut sc = Vec::new();
        ber::write_tlv(&mut sc, tag::OCTET_STRING, &[]);
        ber::write_tlv(&mut sc, tag::OCTET_STRING, &[]);
        sc.extend(encode_pdu(tag::GET, 99, 0, 0, &[]));
        let mut m = Vec::new();
        ber::write_integer(&mut m, tag::INTEGER, 3);
        ber::write_tlv(&mut m, tag::SEQUENCE, &gd);
        ber::write_tlv(&mut m, tag::OCTET_STRING, &sp);
        ber::write_tlv(&mut m, tag::SEQUENCE, &sc);
        ber::tlv(tag::SEQUENCE, &m)
    }

    #[test]
    fn v3_discovery_reports_the_engine() {
        let a = agent(DEFAULT_MAX_MESSAGE_SIZE);
        let reply = a.handle(&discovery()).unwrap();
        let mut r = Reader::new(&reply);
        let mut msg = r.nested(tag::SEQUENCE).unwrap();
        assert_eq!(msg.read_integer().unwrap(), 3);
        let mut gd = msg.nested(tag::SEQUENCE).unwrap();
        assert_eq!(gd.read_integer().unwrap(), 1234, "msgID echoed");
        gd.read_integer().unwrap();
        assert_eq!(
            gd.read_octets().unwrap(),
            [0],
            "noAuthNoPriv, not reportable"
        );
        let mut sp = Reader::new(msg.read_octets().unwrap())
            .nested(tag::SEQUENCE)
            .unwrap();
        assert_eq!(sp.read_octets().unwrap(), a.engine_id());
        assert_eq!(sp.read_integer().unwrap(), 1, "engine boots");
        let scoped = msg.expect(tag::SEQUENCE).unwrap();
        let (_, _, pdu) = decode_scoped(scoped).unwrap();
        assert_eq!((pdu.tag, pdu.request_id), (tag::REPORT, 99));
        assert_eq!(pdu.varbinds[0].oid, oid("1.3.6.1.6.3.15.1.1.4.0"));
        assert_eq!(pdu.varbinds[0].value, SnmpValue::Counter32(1));
    }

    #[test]
    fn no_answer_fault_drops_everything() {
        let mut faults = Faults::default();
        faults.set("snmp-no-answer", "true").unwrap();
        let dev = Arc::new(Device::new("sw1", Dialect::Ios, 1, 4, "a", "b", faults));
        let a = SnmpAgent::new(
            dev,
            StateSource::Shared,
            Arc::new(AgentConfig {
                community: b"pub".to_vec(),
                user: None,
                max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            }),
        );
        assert!(
            a.handle(&request(b"pub", tag::GET, 1, 0, 0, &["1.3.6.1.2.1.1.5.0"]))
                .is_none()
        );
    }
}
