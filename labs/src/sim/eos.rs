//! Arista EOS eAPI: JSON-RPC 2.0 `runCmds` on `POST /command-api`, over HTTP or HTTPS with Basic auth.
//!
//! Shapes follow the real replies recorded in napalm (`arista_eos/eapi/*`) and pyeapi: `show version`,
//! `show hostname`, `show interfaces`, `show vlan`, `show lldp neighbors [detail]`; `show interfaces
//! switchport` follows arista-eosplus/goeapi's model (no recorded sample exists); `show ip interface` and
//! `show ipv6 interface` the fields napalm's `get_interfaces_ip` reads; `show port-channel N all-ports`
//! (text) pyeapi's recorded sample. Errors are eAPI's: code
//! 1002 "invalid command" with a `data` list holding one entry per command that ran and the failed
//! one's `errors`; 1000 for a command that could not run; 1003 for a text-only command asked as JSON.
//!
//! Configuration sessions (EOS 4.x): `configure session NAME` takes a copy of the running state; lines
//! apply to the copy; `show session-config diffs` is a unified diff of running-config text; `commit`
//! replaces the running state with the copy; `commit timer HH:MM:SS` does too but puts the old state
//! back when the timer expires unless `configure session NAME commit` confirms it first (from any
//! connection: the timer is the device's); `abort` throws the session away (and, for a timed commit,
//! rolls back at once). `show configuration sessions` lists a timed one as `pendingCommitTimer`.

use super::Device;
use super::diff::unified;
use super::fault::{ConnCtl, Step, StepFault};
use super::http::{HttpReply, HttpRequest};
use super::state::{ConfigSession, DeviceState, Dialect, Mode};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::AbortHandle;

/// EOS release the simulator reports (sessions and commit timers exist from 4.18).
pub const VERSION: &str = "4.32.0F";

#[derive(Debug)]
struct Session {
    work: DeviceState,
}

#[derive(Debug)]
struct Timed {
    session: String,
    pre: DeviceState,
    timer: AbortHandle,
}

#[derive(Debug, Default)]
struct Sessions {
    open: HashMap<String, Session>,
    timed: Option<Timed>,
}

/// One EOS device's eAPI.
#[derive(Debug)]
pub struct EosSim {
    pub dev: Arc<Device>,
    sessions: Mutex<Sessions>,
}

/// Where a request's commands are.
enum Ctx {
    Exec,
    Config(ConfigSession),
    Session(String, ConfigSession),
}

/// A failed command: eAPI error code and message words.
struct CmdError {
    code: i64,
    kind: &'static str,
    errors: Vec<String>,
}

fn invalid(msg: impl Into<String>) -> CmdError {
    CmdError {
        code: 1002,
        kind: "invalid command",
        errors: vec![msg.into()],
    }
}

fn cannot_run(msg: impl Into<String>) -> CmdError {
    CmdError {
        code: 1000,
        kind: "could not run command",
        errors: vec![msg.into()],
    }
}

/// What a request does to its connection.
pub enum After {
    Reply,
    Reset,
}

fn parse_timer(s: &str) -> Option<Duration> {
    let p: Vec<u64> = s
        .split(':')
        .map(|x| x.parse().ok())
        .collect::<Option<Vec<u64>>>()?;
    match p.as_slice() {
        [h, m, s] if *m < 60 && *s < 60 => Some(Duration::from_secs(h * 3600 + m * 60 + s)),
        _ => None,
    }
}

impl EosSim {
    pub fn new(dev: Arc<Device>) -> Arc<EosSim> {
        Arc::new(EosSim {
            dev,
            sessions: Mutex::new(Sessions::default()),
        })
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The HTTP entry point.
    pub async fn handle_http(self: Arc<Self>, req: HttpRequest, ctl: Arc<ConnCtl>) -> HttpReply {
        self.dev.answer_http(req.joined).await;
        match req.basic_auth() {
            Some((u, p)) if self.dev.check_login(&u, &p) => {}
            _ => {
                let mut r = HttpReply::text(
                    401,
                    "Unable to authenticate user: Bad username/password combination",
                );
                r.headers
                    .push(("www-authenticate".into(), "Basic realm=\"eAPI\"".into()));
                return r;
            }
        }
        if req.method != "POST" || req.path != "/command-api" {
            return HttpReply::text(404, "Not Found");
        }
        let body: Value = match serde_json::from_slice(&req.body) {
            Ok(v) => v,
            Err(e) => {
                return HttpReply::json(
                    200,
                    &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!("Parse error: {e}")}}),
                );
            }
        };
        let (reply, after) = self.clone().run_request(&body).await;
        if let After::Reset = after {
            ctl.kill();
        }
        HttpReply::json(200, &reply)
    }

    /// A whole JSON-RPC request (pure except for commit timers and slow commits).
    pub async fn run_request(self: Arc<Self>, body: &Value) -> (Value, After) {
        let id = body.get("id").cloned().unwrap_or(Value::Null);
        let rpc_err = |code: i64, message: &str| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        if body.get("method").and_then(Value::as_str) != Some("runCmds") {
            return (rpc_err(-32601, "Method not found"), After::Reply);
        }
        let params = body.get("params");
        let Some(cmds) = params.and_then(|p| p.get("cmds")).and_then(Value::as_array) else {
            return (
                rpc_err(-32602, "Invalid params: 'cmds' is required"),
                After::Reply,
            );
        };
        let text = match params
            .and_then(|p| p.get("format"))
            .and_then(Value::as_str)
            .unwrap_or("json")
        {
            "json" => false,
            "text" => true,
            other => {
                return (
                    rpc_err(-32602, &format!("Invalid params: unknown format {other:?}")),
                    After::Reply,
                );
            }
        };
        let cmds: Vec<String> = cmds
            .iter()
            .map(|c| match c {
                Value::String(s) => s.clone(),
                Value::Object(m) => m
                    .get("cmd")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                _ => String::new(),
            })
            .collect();
        let is_commit = |c: &String| {
            let w: Vec<&str> = c.split_whitespace().collect();
            matches!(
                w.as_slice(),
                ["configure", "session", _, "commit", ..] | ["commit", ..]
            )
        };
        let commits = cmds.iter().any(is_commit);
        if commits {
            if self.dev.faults.reset_now(Step::BeforeCommit) {
                return (Value::Null, After::Reset);
            }
            if let Some(d) = self.dev.faults.slow_commit {
                tokio::time::sleep(d).await;
            }
        } else if self.dev.faults.on_read() {
            return (Value::Null, After::Reset);
        }
        let mut refused = None;
        if let Some((i, step)) = self.step_of(&cmds) {
            match self.dev.faults.at_step(step).await {
                Some(StepFault::Reset) => return (Value::Null, After::Reset),
                Some(StepFault::Reject(m)) => refused = Some((i, m)),
                None => {}
            }
        }
        let mut ctx = Ctx::Exec;
        let mut results: Vec<Value> = Vec::with_capacity(cmds.len());
        for (i, cmd) in cmds.iter().enumerate() {
            let r = match &refused {
                Some((at, m)) if *at == i => Err(cannot_run(m.clone())),
                _ => self.run_one(&mut ctx, cmd, text),
            };
            match r {
                Ok(v) => results.push(v),
                Err(e) => {
                    let mut data = results;
                    data.push(json!({"errors": e.errors}));
                    let reply = json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": e.code,
                        "message": format!("CLI command {} of {} '{}' failed: {}", i + 1, cmds.len(), cmd, e.kind),
                        "data": data,
                    }});
                    return (reply, After::Reply);
                }
            }
        }
        let after = if commits && self.dev.faults.after_commit() {
            After::Reset
        } else {
            After::Reply
        };
        (
            json!({"jsonrpc": "2.0", "id": id, "result": results}),
            after,
        )
    }

    /// The request's stage (`configure session NAME` opening a session) or confirm (`configure
    /// session NAME commit` of the session under a commit timer) of the fault table, and its index.
    fn step_of(&self, cmds: &[String]) -> Option<(usize, Step)> {
        let sessions = self.sessions();
        cmds.iter().enumerate().find_map(|(i, c)| {
            match c.split_whitespace().collect::<Vec<_>>().as_slice() {
                ["configure", "session", _] => Some((i, Step::Stage)),
                ["configure", "session", name, "commit"]
                    if sessions.timed.as_ref().is_some_and(|t| t.session == *name) =>
                {
                    Some((i, Step::Confirm))
                }
                _ => None,
            }
        })
    }

    fn empty(text: bool) -> Value {
        if text {
            json!({"output": ""})
        } else {
            json!({})
        }
    }

    fn run_one(self: &Arc<Self>, ctx: &mut Ctx, raw: &str, text: bool) -> Result<Value, CmdError> {
        let cmd = raw.trim();
        let words: Vec<&str> = cmd.split_whitespace().collect();
        // Exec-level commands work in every mode, as on EOS.
        match words.as_slice() {
            ["enable"] | ["terminal", ..] => return Ok(Self::empty(text)),
            ["reload", "now"] | ["reload", "force"] => {
                self.dev.reload();
                return Ok(Self::empty(text));
            }
            ["write", "memory"] | ["copy", "running-config", "startup-config"] => {
                self.dev.save_startup();
                return Ok(Self::empty(text));
            }
            ["show", rest @ ..] => return self.show(ctx, rest, text),
            ["configure"] | ["configure", "terminal"] => {
                *ctx = Ctx::Config(ConfigSession::new(Dialect::Eos));
                return Ok(Self::empty(text));
            }
            ["configure", "session", name] => {
                let base = self.dev.state().clone();
                self.sessions()
                    .open
                    .entry((*name).to_owned())
                    .or_insert(Session { work: base });
                *ctx = Ctx::Session((*name).to_owned(), ConfigSession::new(Dialect::Eos));
                return Ok(Self::empty(text));
            }
            ["configure", "session", name, "commit"] => {
                self.commit(name, None)?;
                return Ok(Self::empty(text));
            }
            ["configure", "session", name, "commit", "timer", t] => {
                let d = parse_timer(t)
                    .ok_or_else(|| invalid(format!("Invalid input (at token 5: '{t}')")))?;
                self.commit(name, Some(d))?;
                return Ok(Self::empty(text));
            }
            ["configure", "session", name, "abort"] => {
                self.abort(name)?;
                return Ok(Self::empty(text));
            }
            _ => {}
        }
        match ctx {
            Ctx::Exec => Err(invalid(format!(
                "Invalid input (at token 0: '{}')",
                words.first().unwrap_or(&"")
            ))),
            Ctx::Config(cs) => {
                let mut st = self.dev.state();
                match cs.apply(&mut st, cmd) {
                    Ok(true) => {
                        if words.as_slice() == ["end"] || cs.context == super::state::Context::Top {
                            drop(st);
                            *ctx = Ctx::Exec;
                        }
                        Ok(Self::empty(text))
                    }
                    Ok(false) => Ok(Self::empty(text)),
                    Err(e) => Err(invalid(e.message)),
                }
            }
            Ctx::Session(name, cs) => {
                match words.as_slice() {
                    ["commit"] => {
                        let n = name.clone();
                        *ctx = Ctx::Exec;
                        self.commit(&n, None)?;
                        return Ok(Self::empty(text));
                    }
                    ["commit", "timer", t] => {
                        let d = parse_timer(t)
                            .ok_or_else(|| invalid(format!("Invalid input (at token 2: '{t}')")))?;
                        let n = name.clone();
                        *ctx = Ctx::Exec;
                        self.commit(&n, Some(d))?;
                        return Ok(Self::empty(text));
                    }
                    ["abort"] => {
                        let n = name.clone();
                        *ctx = Ctx::Exec;
                        self.abort(&n)?;
                        return Ok(Self::empty(text));
                    }
                    _ => {}
                }
                let mut sessions = self.sessions();
                let Some(s) = sessions.open.get_mut(name.as_str()) else {
                    return Err(cannot_run(format!("Session {name} does not exist")));
                };
                match cs.apply(&mut s.work, cmd) {
                    Ok(true) => {
                        drop(sessions);
                        *ctx = Ctx::Exec;
                        Ok(Self::empty(text))
                    }
                    Ok(false) => Ok(Self::empty(text)),
                    Err(e) => Err(invalid(e.message)),
                }
            }
        }
    }

    fn commit(self: &Arc<Self>, name: &str, timer: Option<Duration>) -> Result<(), CmdError> {
        if let Some(msg) = &self.dev.faults.reject_commit {
            return Err(cannot_run(msg.clone()));
        }
        let mut sessions = self.sessions();
        // Confirming a timed commit: `configure session NAME commit` again.
        if sessions.timed.as_ref().is_some_and(|t| t.session == name)
            && !sessions.open.contains_key(name)
        {
            if let Some(t) = sessions.timed.take() {
                t.timer.abort();
            }
            if let Some(d) = timer {
                // A new timer for the same change: keep the original pre-state.
                let _ = d;
            }
            return Ok(());
        }
        let Some(s) = sessions.open.remove(name) else {
            return Err(cannot_run(format!(
                "Cannot commit session {name}: session does not exist"
            )));
        };
        let mut st = self.dev.state();
        let pre = std::mem::replace(&mut *st, s.work);
        drop(st);
        if let Some(d) = timer {
            if let Some(old) = sessions.timed.take() {
                old.timer.abort();
            }
            let me = Arc::downgrade(self);
            let session = name.to_owned();
            let task = tokio::spawn(async move {
                tokio::time::sleep(d).await;
                if let Some(me) = me.upgrade() {
                    me.expire(&session);
                }
            });
            sessions.timed = Some(Timed {
                session: name.to_owned(),
                pre,
                timer: task.abort_handle(),
            });
        }
        Ok(())
    }

    /// The commit timer ran out: put the pre-commit state back.
    fn expire(&self, session: &str) {
        let mut sessions = self.sessions();
        if sessions
            .timed
            .as_ref()
            .is_some_and(|t| t.session == session)
            && let Some(t) = sessions.timed.take()
        {
            tracing::info!(device = %self.dev.name, session, "commit timer expired: rolling back");
            *self.dev.state() = t.pre;
        }
    }

    fn abort(&self, name: &str) -> Result<(), CmdError> {
        let mut sessions = self.sessions();
        if sessions.open.remove(name).is_some() {
            return Ok(());
        }
        if sessions.timed.as_ref().is_some_and(|t| t.session == name)
            && let Some(t) = sessions.timed.take()
        {
            t.timer.abort();
            *self.dev.state() = t.pre;
            return Ok(());
        }
        Err(cannot_run(format!("Session {name} does not exist")))
    }

    /// Whether a timed commit waits for confirmation (tests).
    pub fn pending_timer(&self) -> bool {
        self.sessions().timed.is_some()
    }

    /// Names of the configuration sessions open (pending) on the device, sorted (tests read them).
    pub fn pending_sessions(&self) -> Vec<String> {
        let mut v: Vec<String> = self.sessions().open.keys().cloned().collect();
        v.sort();
        v
    }

    fn show(&self, ctx: &Ctx, rest: &[&str], text: bool) -> Result<Value, CmdError> {
        if matches!(
            rest,
            ["configuration", "sessions"] | ["configuration", "sessions", "detail"]
        ) {
            return Ok(self.show_configuration_sessions());
        }
        let st = match ctx {
            Ctx::Session(name, _) if rest == ["session-config", "diffs"] => {
                let sessions = self.sessions();
                let work = sessions
                    .open
                    .get(name.as_str())
                    .map(|s| s.work.running_config(Dialect::Eos))
                    .unwrap_or_default();
                let running = self.dev.state().running_config(Dialect::Eos);
                let d = unified(
                    &running,
                    &work,
                    "system:/running-config",
                    &format!("session:/{name}-session-config"),
                );
                return Ok(json!({"output": d}));
            }
            _ => self.dev.state().clone(),
        };
        let text_only = |s: String| -> Result<Value, CmdError> {
            if text {
                Ok(json!({"output": s}))
            } else {
                Err(CmdError {
                    code: 1003,
                    kind: "unconverted command",
                    errors: vec!["This is an unconverted command".into()],
                })
            }
        };
        let v = match rest {
            ["version"] => self.show_version(&st),
            ["hostname"] => json!({"fqdn": st.hostname, "hostname": st.hostname}),
            ["interfaces"] => show_interfaces(&st, None),
            ["interfaces", "switchport"] => show_switchport(&st, None),
            ["interfaces", name, "switchport"] => {
                let n = st
                    .resolve_iface(name)
                    .ok_or_else(|| invalid(format!("Invalid input (at token 2: '{name}')")))?;
                show_switchport(&st, Some(&n))
            }
            ["interfaces", name] => {
                let n = st
                    .resolve_iface(name)
                    .ok_or_else(|| invalid(format!("Invalid input (at token 2: '{name}')")))?;
                show_interfaces(&st, Some(&n))
            }
            ["vlan"] => show_vlan(&st),
            ["ip", "interface"] => show_ip_interface(&st),
            ["ipv6", "interface"] => show_ipv6_interface(&st)?,
            ["lldp", "neighbors"] => show_lldp(&st),
            ["lldp", "neighbors", "detail"] => show_lldp_detail(&st),
            ["port-channel", n, "all-ports"] if text => {
                let n: u32 = n
                    .parse()
                    .map_err(|_| invalid(format!("Invalid input (at token 1: '{n}')")))?;
                return text_only(port_channel_all_ports(&st, n));
            }
            ["running-config"] => return text_only(st.running_config(Dialect::Eos)),
            ["port-channel", "summary"] => {
                return text_only(super::bundles::show_summary(&st, Dialect::Eos));
            }
            ["startup-config"] => {
                drop(st);
                return text_only(self.dev.startup().running_config(Dialect::Eos));
            }
            ["running-config", "all"] => return text_only(st.running_config_all_eos()),
            ["running-config", "interfaces", names @ ..] if !names.is_empty() => {
                let mut out = String::new();
                for part in names.join(" ").split(',') {
                    let n = st
                        .resolve_iface(part.trim())
                        .ok_or_else(|| invalid(format!("Invalid input (at token 2: '{part}')")))?;
                    out.push_str(&st.render_interface(Dialect::Eos, &n).unwrap_or_default());
                }
                return text_only(out);
            }
            ["session-config", "diffs"] => {
                return Err(cannot_run("No configuration session is active"));
            }
            _ => {
                return Err(invalid(format!(
                    "Invalid input (at token 1: '{}')",
                    rest.first().unwrap_or(&"")
                )));
            }
        };
        if text {
            // EOS renders its tables; a JSON dump keeps the simulator honest about the content.
            Ok(json!({"output": serde_json::to_string_pretty(&v).unwrap_or_default()}))
        } else {
            Ok(v)
        }
    }

    /// `show configuration sessions [detail]`, in the JSON shape pyeapi and aio-eapi document.
    fn show_configuration_sessions(&self) -> Value {
        let sessions = self.sessions();
        // A session committed under a timer stays listed until confirmed or rolled back; its
        // state's spelling is ours (no recorded sample), the pending one follows pyeapi.
        let timed = sessions
            .timed
            .as_ref()
            .map(|t| (&t.session, "pendingCommitTimer"));
        let map: serde_json::Map<String, Value> = sessions
            .open
            .keys()
            .map(|n| (n, "pending"))
            .chain(timed)
            .map(|(n, state)| {
                (
                    n.clone(),
                    json!({"instances": {}, "state": state, "commitUser": "", "description": ""}),
                )
            })
            .collect();
        json!({"maxSavedSessions": 1, "maxOpenSessions": 5, "sessions": map})
    }

    fn show_version(&self, st: &DeviceState) -> Value {
        let mac = st
            .interfaces
            .first()
            .map(|(_, f)| f.mac.clone())
            .unwrap_or_default();
        json!({
            "modelName": "cEOSLab",
            "internalVersion": format!("{VERSION}-netgw-lab"),
            "systemMacAddress": mac,
            "serialNumber": self.dev.serial(),
            "memTotal": 8_156_872,
            "bootupTimestamp": self.dev.boot_time,
            "memFree": 4_212_212,
            "version": VERSION,
            "architecture": "x86_64",
            "internalBuildId": "00000000-0000-0000-0000-000000000000",
            "hardwareRevision": ""
        })
    }
}

/// `interfaceAddress` as EOS gives it: the primary and the secondaries in order (empty when none).
fn interface_address(f: &super::state::Iface) -> Value {
    let split = |a: &str| {
        let (ip, len) = a.split_once('/').unwrap_or((a, "32"));
        json!({"address": ip, "maskLen": len.parse::<u8>().unwrap_or(32)})
    };
    let Some(primary) = f.ipv4.first() else {
        return json!([]);
    };
    let secondaries: Vec<Value> = f.ipv4[1..].iter().map(|a| split(a)).collect();
    let keyed: Map<String, Value> = f.ipv4[1..]
        .iter()
        .map(|a| (a.split('/').next().unwrap_or(a).to_owned(), split(a)))
        .collect();
    json!([{"primaryIp": split(primary), "secondaryIps": keyed, "secondaryIpsOrderedList": secondaries,
        "virtualIp": {"address": "0.0.0.0", "maskLen": 0}, "broadcastAddress": "255.255.255.255"}])
}

/// `show port-channel N all-ports` as text (pyeapi's `interfaces` API reads the members from it; its
/// recorded sample is `Port Channel Port-Channel1:` / `  Active Ports: Ethernet5 Ethernet6 `): the
/// bundled members, then the configured ones that are not.
fn port_channel_all_ports(st: &DeviceState, n: u32) -> String {
    let members: Vec<&str> = st
        .interfaces
        .iter()
        .filter(|(_, f)| f.channel_group.as_ref().is_some_and(|(g, _)| *g == n))
        .map(|(name, _)| name.as_str())
        .collect();
    let (active, inactive): (Vec<&str>, Vec<&str>) =
        members.iter().partition(|m| st.member_bundled(m));
    let mut s = format!("Port Channel Port-Channel{n}:\n  Active Ports: ");
    for m in active {
        s.push_str(m);
        s.push(' ');
    }
    s.push('\n');
    if !inactive.is_empty() {
        s.push_str(
            "  Configured, but inactive ports:\n       Port            Reason unconfigured\n    \
             --------------- ---------------------------\n",
        );
        for m in inactive {
            s.push_str(&format!("       {m:<15} Waiting for LACP response\n"));
        }
    }
    s
}

/// `show ip interface`: the routed interfaces (an address or `no switchport`), as EOS 4.2x answers
/// (napalm's `get_interfaces_ip` reads `interfaceAddress`).
fn show_ip_interface(st: &DeviceState) -> Value {
    let mut m = Map::new();
    for (name, f) in &st.interfaces {
        if f.ipv4.is_empty() && f.mode != Mode::Routed {
            continue;
        }
        let address = interface_address(f)
            .get(0)
            .cloned()
            .unwrap_or_else(|| json!({"primaryIp": {"address": "0.0.0.0", "maskLen": 0},
                "secondaryIps": {}, "secondaryIpsOrderedList": [],
                "virtualIp": {"address": "0.0.0.0", "maskLen": 0}, "broadcastAddress": "255.255.255.255"}));
        m.insert(
            name.clone(),
            json!({"name": name, "description": f.description, "enabled": f.enabled, "mtu": f.mtu,
                "lineProtocolStatus": if f.status_up() { "up" } else { "down" },
                "interfaceStatus": if f.status_up() { "connected" } else { "notconnect" },
                "interfaceAddress": address, "proxyArp": false, "localProxyArp": false,
                "urpf": "disable", "ipv4Routable240": false, "ipv4Routable0": false}),
        );
    }
    json!({"interfaces": m})
}

/// `show ipv6 interface`: the interfaces with an IPv6 address; with none, EOS refuses the command
/// with "No IPv6 configured interfaces" (napalm's `get_interfaces_ip` expects that error).
fn show_ipv6_interface(st: &DeviceState) -> Result<Value, CmdError> {
    let mut m = Map::new();
    for (name, f) in st.interfaces.iter().filter(|(_, f)| !f.ipv6.is_empty()) {
        let addresses: Vec<Value> = f
            .ipv6
            .iter()
            .map(|a| {
                let (ip, len) = a.split_once('/').unwrap_or((a, "128"));
                let subnet = ipv6_subnet(ip, len);
                json!({"address": ip, "subnet": subnet, "active": true, "dadfailed": false})
            })
            .collect();
        m.insert(
            name.clone(),
            json!({"description": f.description, "mtu": f.mtu, "addresses": addresses,
                "state": if f.status_up() { "up" } else { "down" },
                "lineProtocolStatus": if f.status_up() { "up" } else { "down" }}),
        );
    }
    if m.is_empty() {
        return Err(cannot_run("No IPv6 configured interfaces"));
    }
    Ok(json!({"interfaces": m}))
}

/// `2001:db8:100::/64` for `2001:db8:100::1` and `64`: the network an address is in.
fn ipv6_subnet(ip: &str, len: &str) -> String {
    let (Ok(a), Ok(n)) = (ip.parse::<std::net::Ipv6Addr>(), len.parse::<u32>()) else {
        return format!("{ip}/{len}");
    };
    let mask = u128::MAX.checked_shl(128 - n.min(128)).unwrap_or(0);
    format!("{}/{n}", std::net::Ipv6Addr::from(u128::from(a) & mask))
}

fn show_interfaces(st: &DeviceState, only: Option<&str>) -> Value {
    let mut m = Map::new();
    for (name, f) in &st.interfaces {
        if only.is_some_and(|o| o != name) {
            continue;
        }
        let status = if !f.enabled {
            "disabled"
        } else if f.oper_up {
            "connected"
        } else {
            "notconnect"
        };
        let addresses = if Some(name.as_str()) == st.mgmt_interface.as_deref() {
            json!([{"secondaryIpsOrderedList": [], "broadcastAddress": "255.255.255.255", "secondaryIps": {},
                "primaryIp": {"maskLen": 24, "address": "172.20.20.2"}, "virtualIp": {"maskLen": 0, "address": "0.0.0.0"}}])
        } else {
            interface_address(f)
        };
        m.insert(
            name.clone(),
            json!({
                "lastStatusChangeTimestamp": 0.0,
                "name": name,
                "interfaceStatus": status,
                "autoNegotiate": "unknown",
                "burnedInAddress": f.mac,
                "loopbackMode": "loopbackNone",
                "interfaceStatistics": {"inBitsRate": 0.0, "inPktsRate": 0.0, "outBitsRate": 0.0, "updateInterval": 300.0, "outPktsRate": 0.0},
                "mtu": f.mtu,
                "hardware": "ethernet",
                "duplex": "duplexFull",
                "bandwidth": f.speed_mbps * 1_000_000,
                "forwardingModel": if f.mode == Mode::Routed { "routed" } else { "bridged" },
                "lineProtocolStatus": if f.status_up() { "up" } else { "down" },
                "interfaceCounters": {
                    "outBroadcastPkts": 0, "linkStatusChanges": 1, "totalOutErrors": 0, "inMulticastPkts": 0,
                    "counterRefreshTime": 0.0, "inBroadcastPkts": 0,
                    "outputErrorsDetail": {"deferredTransmissions": 0, "txPause": 0, "collisions": 0, "lateCollisions": 0},
                    "inOctets": 0, "outDiscards": 0, "outOctets": 0, "inUcastPkts": 0,
                    "inputErrorsDetail": {"runtFrames": 0, "rxPause": 0, "fcsErrors": 0, "alignmentErrors": 0, "giantFrames": 0, "symbolErrors": 0},
                    "outUcastPkts": 0, "outMulticastPkts": 0, "totalInErrors": 0, "inDiscards": 0
                },
                "interfaceAddress": addresses,
                "physicalAddress": f.mac,
                "description": f.description
            }),
        );
    }
    json!({"interfaces": m})
}

fn allowed_text(set: &super::state::VlanBits) -> String {
    set.text("ALL", "NONE")
}

fn show_switchport(st: &DeviceState, only: Option<&str>) -> Value {
    let mut m = Map::new();
    let vname = |id: u16| {
        st.vlans
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("VLAN{id:04}"))
    };
    for (name, f) in &st.interfaces {
        // Aggregates are switchports as their members are.
        let switchable = name.starts_with("Ethernet") || name.starts_with("Port-Channel");
        if only.is_some_and(|o| o != name) || !switchable {
            continue;
        }
        m.insert(
            name.clone(),
            json!({
                "enabled": f.mode != Mode::Routed,
                "switchportInfo": {
                    "accessVlanId": f.access_vlan,
                    "accessVlanName": vname(f.access_vlan),
                    "dynamicAllowedVlans": {},
                    "dynamicTrunkGroups": [],
                    "macLearning": true,
                    "mode": match f.mode { Mode::Trunk => "trunk", _ => "access" },
                    "sourceportFilterMode": "enabled",
                    "staticTrunkGroups": [],
                    "tpid": "0x8100",
                    "tpidStatus": true,
                    "trunkAllowedVlans": allowed_text(&f.trunk_allowed),
                    "trunkingNativeVlanId": f.native_vlan,
                    "trunkingNativeVlanName": vname(f.native_vlan)
                }
            }),
        );
    }
    json!({"switchports": m})
}

fn show_vlan(st: &DeviceState) -> Value {
    let mut vlans = Map::new();
    for (id, name) in &st.vlans {
        let mut ifs = Map::new();
        for p in st.members(*id) {
            ifs.insert(p.to_owned(), json!({"privatePromoted": false}));
        }
        vlans.insert(
            id.to_string(),
            json!({"status": "active", "name": name, "interfaces": ifs, "dynamic": false}),
        );
    }
    json!({"sourceDetail": "", "vlans": vlans})
}

fn show_lldp(st: &DeviceState) -> Value {
    let list: Vec<Value> = st
        .lldp_neighbors()
        .map(|n| json!({"ttl": 120, "neighborDevice": n.system_name, "neighborPort": n.port, "port": n.local_port}))
        .collect();
    json!({"tablesLastChangeTime": 0.0, "tablesAgeOuts": 0, "tablesInserts": list.len(), "lldpNeighbors": list, "tablesDeletes": 0, "tablesDrops": 0})
}

fn show_lldp_detail(st: &DeviceState) -> Value {
    let mut m = Map::new();
    for n in st.lldp_neighbors() {
        let entry = m
            .entry(n.local_port.clone())
            .or_insert_with(|| json!({"lldpNeighborInfo": []}));
        if let Some(list) = entry
            .get_mut("lldpNeighborInfo")
            .and_then(Value::as_array_mut)
        {
            list.push(json!({
                "systemCapabilities": {"bridge": true, "router": true, "wlanAccessPoint": false},
                "lastChangeTime": 0.0,
                "neighborInterfaceInfo": {
                    "portAndProtocolVlanEnabled": {}, "linkAggregationStatus": "capableAndDisabled", "unknownTlvs": [],
                    "interfaceIdType": "interfaceName", "interfaceId": format!("\"{}\"", n.port),
                    "interfaceDescription": "", "autoNegCapability": "notCapable", "autoNegAdvertisedCapabilities": [],
                    "protocolIdentityInfo": [], "portAndProtocolVlanSupported": {}, "operMauType": "Unknown",
                    "vlanNames": {}, "maxFrameSize": 0, "linkAggregationInterfaceId": 0, "unknownOrgDefinedTlvs": []
                },
                "neighborDiscoveryTime": 0.0,
                "lastContactTime": 0.0,
                "chassisId": super::dotted_mac(&n.chassis_id),
                "systemName": n.system_name,
                "systemDescription": "netgw-lab simulated device",
                "ttl": 120,
                "managementAddresses": [],
                "chassisIdType": "macAddress"
            }));
        }
    }
    json!({"lldpNeighbors": m})
}
