//! Cisco IOS and NX-OS over an interactive SSH shell (PTY + shell), as scrapli and Netmiko drive them.
//!
//! Prompts `host>` / `host#` / `host(config)#` / `host(config-if)#` / `host(config-vlan)#`; input is
//! echoed, lines end in CRLF. `enable` asks `Password:` in user mode (the enable secret is the login
//! password); the shell opens in privileged mode, as containerlab's IOL and n9kv nodes do (`disable`
//! drops to user mode). Errors are the devices': IOS `% Invalid input detected at '^' marker.` under a
//! caret, NX-OS `% Invalid command at '^' marker.`.
//!
//! Output shapes follow the ntc-templates raw samples (IOS `show version`, `show vlan brief`, `show
//! interfaces`, `show interfaces switchport`, `show running-config interface`) and, for NX-OS `| json`,
//! the napalm `nxos_ssh` / NX-API samples (`TABLE_vlanbriefxbrief`, `TABLE_interface`). Aggregates'
//! and addresses' show commands are in [`super::cli_lag`].
//!
//! NX-OS configuration checkpoints (the NX-OS driver's transaction, Cisco Nexus "Configuring
//! Rollback"):
//!
//! ```text
//!   checkpoint NAME [description TEXT]      snapshot of the running configuration: `Done`
//!   rollback running-config checkpoint NAME [atomic|verbose|best-effort|stop-at-first-failure]
//!                                           the running configuration becomes the snapshot again
//!                                           (hostname, VLANs, every interface; SVIs made since go)
//!   no checkpoint NAME / clear checkpoint database
//!   show checkpoint summary [user] | show checkpoint NAME
//! ```
//!
//! Checkpoints belong to the device, not the session (a new session rolls back to a checkpoint an
//! earlier, dead one made), at most ten user checkpoints, names unique, without spaces, up to 80
//! characters, not starting with `system`. Successful answers follow what NX-OS prints (`Done`; the
//! rollback's patch/verification lines ending in `Rollback completed successfully.`; the summary's
//! `N) NAME:` blocks, as genieparser's `show checkpoint summary` sample); refusals start with `ERROR:`,
//! as NX-OS' checkpoint errors do (genielibs checks for `ERROR` after these commands), but their exact
//! wording is ours: no captured sample of them was found.

use super::archive::Archive;
use super::cli_lag;
use super::fault::{ConnCtl, Step, StepFault};
use super::state::{ConfigSession, Context, DeviceState, Dialect, Mode};
use super::{Device, dotted_mac};
use russh::server::Msg;
use russh::{Channel, ChannelMsg};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};

/// One IOS or NX-OS device's CLI.
#[derive(Debug)]
pub struct CliSim {
    pub dev: Arc<Device>,
    /// NX-OS user checkpoints, oldest first (device-wide, like the device's checkpoint database).
    checkpoints: Mutex<Vec<Checkpoint>>,
    /// IOS configuration archive and its revert timer (`archive.rs`).
    pub archive: Archive,
}

/// One NX-OS user checkpoint: the configuration it captured.
#[derive(Debug, Clone)]
struct Checkpoint {
    name: String,
    description: Option<String>,
    created: f64,
    state: DeviceState,
}

/// NX-OS keeps at most ten user checkpoints.
pub const MAX_CHECKPOINTS: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq)]
enum CliMode {
    User,
    Enable,
    EnablePassword,
    Config,
}

/// One shell session's state.
struct Shell {
    mode: CliMode,
    cfg: ConfigSession,
    /// Configuration lines applied since `configure terminal` (a commit step for faults).
    changed: bool,
}

/// The short name IOS prints in tables (`Et0/1`, `Gi0/1`, `Eth1/1`).
pub fn short_name(dialect: Dialect, name: &str) -> String {
    let split = name
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(name.len());
    let (p, n) = name.split_at(split);
    let sp = match (dialect, p) {
        (Dialect::Nxos, "Ethernet") => "Eth",
        (_, "Ethernet") => "Et",
        (_, "GigabitEthernet") => "Gi",
        (_, "FastEthernet") => "Fa",
        (_, "TenGigabitEthernet") => "Te",
        (_, "Loopback") => "Lo",
        (_, "Vlan") => "Vl",
        _ => p,
    };
    format!("{sp}{n}")
}

impl CliSim {
    pub fn new(dev: Arc<Device>) -> Arc<CliSim> {
        let archive = Archive::new(dev.faults.archive_path.clone(), dev.faults.revert_minute);
        Arc::new(CliSim {
            dev,
            checkpoints: Mutex::new(Vec::new()),
            archive,
        })
    }

    fn checkpoint_db(&self) -> MutexGuard<'_, Vec<Checkpoint>> {
        self.checkpoints.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Names of the NX-OS user checkpoints the device holds, oldest first (tests read them).
    pub fn checkpoints(&self) -> Vec<String> {
        self.checkpoint_db()
            .iter()
            .map(|c| c.name.clone())
            .collect()
    }

    fn prompt(&self, sh: &Shell) -> String {
        let host = self.dev.state().hostname.clone();
        match sh.mode {
            CliMode::User => format!("{host}>"),
            CliMode::Enable => format!("{host}#"),
            CliMode::EnablePassword => "Password: ".into(),
            CliMode::Config => match &sh.cfg.context {
                Context::Top => format!("{host}(config)#"),
                Context::Interface(_) => format!("{host}(config-if)#"),
                Context::Vlan(_) => format!("{host}(config-vlan)#"),
            },
        }
    }

    /// Serve one shell on an SSH channel.
    pub async fn serve_shell(self: Arc<Self>, mut channel: Channel<Msg>, ctl: Arc<ConnCtl>) {
        let mut sh = Shell {
            mode: CliMode::Enable,
            cfg: ConfigSession::new(self.dev.dialect),
            changed: false,
        };
        // Like a real device: the first prompt ends the banner, with no newline after it.
        let banner = format!("\r\n{}", self.prompt(&sh));
        if channel.data(banner.as_bytes()).await.is_err() {
            return;
        }
        let mut buf: Vec<u8> = Vec::new();
        // Bytes of the line being typed already echoed. A real PTY echoes each character as it
        // arrives, and scrapli waits for the echo of a command before it sends the return.
        let mut echoed = 0usize;
        while let Some(msg) = channel.wait().await {
            let data = match msg {
                ChannelMsg::Data { data } => data,
                ChannelMsg::Eof | ChannelMsg::Close => break,
                _ => continue,
            };
            buf.extend_from_slice(&data);
            // Every message gets one reply (its lines answered, or the echo of what was typed), but
            // for a secret typed in part: one round trip, whatever number of lines it holds.
            let complete = buf.iter().any(|&b| b == b'\n' || b == b'\r');
            if !data.is_empty() && (complete || sh.mode != CliMode::EnablePassword) {
                self.dev.exchanges.round_trip();
                self.dev.faults.delay().await;
            }
            // Lines after the first of one message were written with it (the benchmark's floors
            // send them the same way: tests/it/bench_floor.rs).
            let mut joined = false;
            while let Some(pos) = buf.iter().position(|&b| b == b'\n' || b == b'\r') {
                let line: Vec<u8> = buf.drain(..=pos).collect();
                // CRLF: the LF after a CR is part of the same line end.
                if line.last() == Some(&b'\r') && buf.first() == Some(&b'\n') {
                    buf.remove(0);
                }
                let text = String::from_utf8_lossy(&line[..line.len() - 1]).into_owned();
                if !matches!(sh.mode, CliMode::EnablePassword) {
                    tracing::trace!(device = %self.dev.name, line = %text, joined, "cli line");
                }
                joined = true;
                self.dev.exchanges.command();
                if sh.changed
                    && sh.mode == CliMode::Config
                    && let Some(d) = self.dev.faults.slow_commit
                    && leaves_config(&sh, &text)
                {
                    tokio::time::sleep(d).await;
                }
                let forced = match self.confirm_fault(&sh, &text).await {
                    Some(StepFault::Reset) => {
                        ctl.kill();
                        return;
                    }
                    Some(StepFault::Reject(m)) => Some((Some(self.refusal(&m)), Action::None)),
                    None => None,
                };
                let (out, action) = forced.unwrap_or_else(|| self.line(&mut sh, &text));
                let mut reply = String::new();
                // Echo the line, never the secret typed at `Password:`.
                let echo = if matches!(action, Action::SecretTyped) {
                    String::new()
                } else {
                    text.get(std::mem::take(&mut echoed)..)
                        .unwrap_or_default()
                        .to_owned()
                };
                echoed = 0;
                reply.push_str(&echo);
                reply.push_str("\r\n");
                if let Some(o) = out {
                    for l in o.lines() {
                        reply.push_str(l);
                        reply.push_str("\r\n");
                    }
                }
                match action {
                    Action::Reset => {
                        ctl.kill();
                        return;
                    }
                    Action::Close => {
                        let _ = channel.data(reply.as_bytes()).await;
                        let _ = channel.eof().await;
                        let _ = channel.close().await;
                        return;
                    }
                    _ => {}
                }
                reply.push_str(&self.prompt(&sh));
                if channel.data(reply.as_bytes()).await.is_err() {
                    return;
                }
            }
            if buf.len() > 64 * 1024 {
                buf.clear();
                echoed = 0;
            }
            // Echo what was typed of the next line so far (never a secret at `Password:`).
            if sh.mode != CliMode::EnablePassword && buf.len() > echoed {
                let part = String::from_utf8_lossy(&buf[echoed..]).into_owned();
                echoed = buf.len();
                if channel.data(part.as_bytes()).await.is_err() {
                    return;
                }
            }
        }
    }

    /// The confirm of the fault table: what the IOS and NX-OS drivers send at confirm (`configure
    /// confirm` or `write memory`; `no checkpoint NAME` or `copy running-config startup-config`).
    /// Neither stages anything on the device, so there is no stage step here.
    async fn confirm_fault(&self, sh: &Shell, line: &str) -> Option<StepFault> {
        if sh.mode != CliMode::Enable {
            return None;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let confirm = match self.dev.dialect {
            Dialect::Ios => matches!(
                words.as_slice(),
                ["configure", "confirm"] | ["write", "memory"]
            ),
            Dialect::Nxos => matches!(
                words.as_slice(),
                ["no", "checkpoint", _] | ["copy", "running-config", "startup-config"]
            ),
            _ => false,
        };
        if !confirm {
            return None;
        }
        self.dev.faults.at_step(Step::Confirm).await
    }

    /// A refused command, in the form the platform's failure strings catch.
    fn refusal(&self, msg: &str) -> String {
        if self.dev.dialect == Dialect::Nxos {
            format!("ERROR: {msg}\n")
        } else {
            format!("% Failed to confirm: {msg}\n")
        }
    }

    fn invalid(&self, line: &str) -> String {
        let col = self.prompt_len() + line.len().saturating_sub(line.trim_start().len());
        let msg = if self.dev.dialect == Dialect::Nxos {
            "% Invalid command at '^' marker."
        } else {
            "% Invalid input detected at '^' marker."
        };
        format!("{}^\n{msg}\n", " ".repeat(col))
    }

    fn prompt_len(&self) -> usize {
        self.dev.state().hostname.len() + 1
    }

    /// One line typed at the prompt: output, and what happens to the session.
    fn line(&self, sh: &mut Shell, raw: &str) -> (Option<String>, Action) {
        let line = raw.trim();
        if sh.mode == CliMode::EnablePassword {
            if line == self.dev.password {
                sh.mode = CliMode::Enable;
                return (None, Action::SecretTyped);
            }
            sh.mode = CliMode::User;
            return (Some("% Bad secrets\n".into()), Action::SecretTyped);
        }
        if line.is_empty() {
            return (None, Action::None);
        }
        let (cmd, pipe_json) = match line.rsplit_once('|') {
            Some((c, p)) if p.trim() == "json" => (c.trim(), true),
            _ => (line, false),
        };
        let words: Vec<&str> = cmd.split_whitespace().collect();
        match (&sh.mode, words.as_slice()) {
            (_, ["terminal", ..]) => return (None, Action::None),
            (_, ["exit"] | ["logout"] | ["quit"]) if sh.mode != CliMode::Config => {
                return (None, Action::Close);
            }
            (CliMode::User, ["enable"]) => {
                sh.mode = CliMode::EnablePassword;
                return (None, Action::None);
            }
            (CliMode::Enable, ["enable"]) => return (None, Action::None),
            (CliMode::Enable, ["disable"]) => {
                sh.mode = CliMode::User;
                return (None, Action::None);
            }
            (CliMode::Enable, ["configure", "terminal"] | ["conf", "t"] | ["configure"]) => {
                sh.mode = CliMode::Config;
                sh.cfg = ConfigSession::new(self.dev.dialect);
                return (
                    Some("Enter configuration commands, one per line.  End with CNTL/Z.\n".into()),
                    Action::None,
                );
            }
            (CliMode::Enable, ["configure", "terminal", "revert", "timer", minutes])
                if self.dev.dialect == Dialect::Ios =>
            {
                return match self.archive.arm(&self.dev, minutes) {
                    Ok(out) => {
                        sh.mode = CliMode::Config;
                        sh.cfg = ConfigSession::new(self.dev.dialect);
                        (Some(out), Action::None)
                    }
                    Err(out) => (Some(out), Action::None),
                };
            }
            // The device restarts from its startup configuration and the session ends with it (no
            // `[confirm]` prompt: a lab control, not a dialogue).
            (CliMode::Enable, ["reload"]) => {
                self.dev.reload();
                return (None, Action::Reset);
            }
            (CliMode::Enable, ["configure", "confirm"]) if self.dev.dialect == Dialect::Ios => {
                return (Some(self.archive.confirm()), Action::None);
            }
            (CliMode::Enable, ["configure", "revert", "now"])
                if self.dev.dialect == Dialect::Ios =>
            {
                return (Some(self.archive.revert_now(&self.dev)), Action::None);
            }
            (CliMode::Enable, ["checkpoint", ..] | ["no", "checkpoint", ..])
            | (CliMode::Enable, ["rollback", "running-config", ..])
            | (CliMode::Enable, ["clear", "checkpoint", ..])
                if self.dev.dialect == Dialect::Nxos =>
            {
                return (
                    Some(
                        self.checkpoint_command(&words)
                            .unwrap_or_else(|| self.invalid(line)),
                    ),
                    Action::None,
                );
            }
            (CliMode::Enable, ["write", ..] | ["copy", "running-config", "startup-config"]) => {
                if self.dev.faults.on_read() {
                    return (None, Action::Reset);
                }
                self.dev.save_startup();
                return (
                    Some("Building configuration...\n[OK]\n".into()),
                    Action::None,
                );
            }
            (_, ["show", rest @ ..])
                if sh.mode != CliMode::Config || rest.first() == Some(&"running-config") =>
            {
                if self.dev.faults.on_read() {
                    return (None, Action::Reset);
                }
                let st = self.dev.state().clone();
                return match self.show(&st, rest, pipe_json) {
                    Some(o) => (Some(o), Action::None),
                    None => (Some(self.invalid(line)), Action::None),
                };
            }
            (CliMode::Config, ["do", rest @ ..]) if rest.first() == Some(&"show") => {
                let st = self.dev.state().clone();
                return (
                    Some(
                        self.show(&st, &rest[1..], pipe_json)
                            .unwrap_or_else(|| self.invalid(line)),
                    ),
                    Action::None,
                );
            }
            (CliMode::Config, _) => {}
            _ => return (Some(self.invalid(line)), Action::None),
        }
        self.config_line(sh, line, &words)
    }

    /// A line in configuration mode. `end` (and `exit` at top level) is where IOS and NX-OS changes
    /// are done: the named commit steps of the fault table happen there.
    fn config_line(&self, sh: &mut Shell, line: &str, words: &[&str]) -> (Option<String>, Action) {
        let leaving = leaves_config(sh, line);
        if leaving && sh.changed {
            let faults = &self.dev.faults;
            if faults.reset_now(Step::BeforeCommit) {
                return (None, Action::Reset);
            }
        }
        let mut st = self.dev.state();
        if let Some(msg) = &self.dev.faults.reject_commit
            && !leaving
        {
            drop(st);
            // NX-OS refuses semantically wrong configuration with `ERROR: ...` lines.
            let out = if self.dev.dialect == Dialect::Nxos {
                format!("ERROR: {msg}\n")
            } else {
                format!("% {msg}\n")
            };
            return (Some(out), Action::None);
        }
        match sh.cfg.apply(&mut st, line) {
            Ok(true) => {
                drop(st);
                sh.mode = CliMode::Enable;
                let changed = std::mem::take(&mut sh.changed);
                if changed && self.dev.faults.after_commit() {
                    return (None, Action::Reset);
                }
                (None, Action::None)
            }
            Ok(false) => {
                if !matches!(words, ["exit"]) {
                    sh.changed = true;
                }
                if self.dev.faults.line_applied() {
                    return (None, Action::Reset);
                }
                (None, Action::None)
            }
            Err(e) => {
                drop(st);
                if e.message.contains("'^' marker") {
                    (Some(self.invalid(line)), Action::None)
                } else {
                    (Some(format!("{}\n", e.message)), Action::None)
                }
            }
        }
    }

    fn show(&self, st: &DeviceState, rest: &[&str], json: bool) -> Option<String> {
        let d = self.dev.dialect;
        let v = match (rest, json) {
            (["version"], false) => return Some(self.show_version(st)),
            (["version"], true) => self.nx_version(st),
            (["inventory"], true) if d == Dialect::Nxos => self.nx_inventory(),
            (["archive"], false) if d == Dialect::Ios => return Some(self.archive.show()),
            (["archive", "config", "rollback", "timer"], false) if d == Dialect::Ios => {
                return Some(self.archive.show_timer());
            }
            (["checkpoint", ..], false) if d == Dialect::Nxos => {
                return self.show_checkpoint(&rest[1..]);
            }
            (["lldp", "neighbors", "detail"], false) => return Some(show_lldp_detail(st, d)),
            (["ip", "interface"], false) if d == Dialect::Ios => {
                return Some(cli_lag::ios_show_ip_interface(st));
            }
            (["ipv6", "interface"], false) if d == Dialect::Ios => {
                return Some(cli_lag::ios_show_ipv6_interface(st));
            }
            (["ip", "interface", "vrf", "all"] | ["ip", "interface"], false)
                if d == Dialect::Nxos =>
            {
                return Some(cli_lag::nx_show_ip_interface(st));
            }
            (["ipv6", "interface", "vrf", "all"] | ["ipv6", "interface"], false)
                if d == Dialect::Nxos =>
            {
                return Some(cli_lag::nx_show_ipv6_interface(st));
            }
            (["vlan", "brief"] | ["vlan"], false) => return Some(show_vlan_brief(st, d)),
            (["etherchannel", "summary"], false) if d == Dialect::Ios => {
                return Some(super::bundles::show_summary(st, d));
            }
            (["port-channel", "summary"], false) if d == Dialect::Nxos => {
                return Some(super::bundles::show_summary(st, d));
            }
            (["vlan", "brief"] | ["vlan"], true) => nx_vlan_brief(st),
            (["interfaces" | "interface", "switchport"], false) => {
                return Some(show_switchport(st, d, None));
            }
            (["interfaces" | "interface", "switchport"], true) => nx_switchport(st),
            (["interfaces" | "interface", name, "switchport"], false) => {
                let n = st.resolve_iface(name)?;
                return Some(show_switchport(st, d, Some(&n)));
            }
            (["interfaces" | "interface"], false) => return Some(show_interfaces(st, d, None)),
            (["interfaces" | "interface"], true) => nx_interfaces(st),
            (["interfaces" | "interface", name], false) => {
                let n = st.resolve_iface(name)?;
                return Some(show_interfaces(st, d, Some(&n)));
            }
            (["startup-config"], false) => {
                let c = self.dev.startup().running_config(d);
                return Some(format!("Using {} out of 2097152 bytes\n!\n{c}", c.len()));
            }
            (["running-config"], false) => {
                let mut c = st.running_config(d);
                if let Some(body) = c.strip_suffix("end\n") {
                    c = format!("{body}{}end\n", self.archive.running_config());
                }
                return Some(format!(
                    "Building configuration...\n\nCurrent configuration : {} bytes\n!\n{c}",
                    c.len()
                ));
            }
            (["running-config", "interface", name @ ..], false) if !name.is_empty() => {
                let n = st.resolve_iface(&name.join(""))?;
                let body = st.render_interface(d, &n)?;
                return Some(format!(
                    "Building configuration...\n\nCurrent configuration : {} bytes\n!\n{body}end\n",
                    body.len() + 4
                ));
            }
            (["running-config", "vlan", id], false) => {
                let id: u16 = id.parse().ok()?;
                let name = st.vlans.get(&id)?;
                return Some(format!(
                    "Building configuration...\n\nCurrent configuration:\n!\nvlan {id}\n name {name}\nend\n"
                ));
            }
            _ => return None,
        };
        Some(serde_json::to_string_pretty(&v).unwrap_or_default())
    }

    /// NX-OS `checkpoint ...`, `no checkpoint NAME`, `clear checkpoint database` and `rollback
    /// running-config checkpoint NAME ...` (exec mode). `None`: not a form NX-OS knows (`% Invalid`).
    fn checkpoint_command(&self, words: &[&str]) -> Option<String> {
        let err = |m: String| Some(format!("ERROR: {m}\n"));
        match words {
            ["checkpoint", rest @ ..] => {
                let (name, desc) = match rest {
                    [] => (None, None),
                    ["description", d @ ..] if !d.is_empty() => (None, Some(d.join(" "))),
                    ["file", ..] => return err("checkpoint files are not simulated".into()),
                    [n] => (Some(*n), None),
                    [n, "description", d @ ..] if !d.is_empty() => (Some(*n), Some(d.join(" "))),
                    _ => return None,
                };
                let mut db = self.checkpoint_db();
                let name = match name {
                    Some(n) => n.to_owned(),
                    // As NX-OS names unnamed checkpoints.
                    None => (1..=MAX_CHECKPOINTS)
                        .map(|i| format!("user-checkpoint-{i}"))
                        .find(|n| !db.iter().any(|c| &c.name == n))
                        .unwrap_or_else(|| "user-checkpoint-1".into()),
                };
                if name.len() > 80 || name.starts_with("system") {
                    return err(format!(
                        "Invalid checkpoint name {name}: up to 80 characters, not starting with system"
                    ));
                }
                if db.iter().any(|c| c.name == name) {
                    return err(format!("Checkpoint name {name} already exists"));
                }
                if db.len() >= MAX_CHECKPOINTS {
                    return err(format!(
                        "Maximum number of user checkpoints ({MAX_CHECKPOINTS}) reached; delete one with `no checkpoint NAME`"
                    ));
                }
                let state = self.dev.state().clone();
                db.push(Checkpoint {
                    name,
                    description: desc,
                    created: super::now(),
                    state,
                });
                Some("...........Done\n".into())
            }
            ["no", "checkpoint", name] => {
                let mut db = self.checkpoint_db();
                let before = db.len();
                db.retain(|c| c.name != *name);
                if db.len() == before {
                    return err(format!("Checkpoint {name} does not exist"));
                }
                Some(String::new())
            }
            ["clear", "checkpoint", "database"] => {
                self.checkpoint_db().clear();
                Some(String::new())
            }
            ["rollback", "running-config", "checkpoint", name, opts @ ..] => {
                if opts.len() > 1
                    || opts.first().is_some_and(|o| {
                        !matches!(
                            *o,
                            "atomic" | "verbose" | "best-effort" | "stop-at-first-failure"
                        )
                    })
                {
                    return None;
                }
                let Some(snapshot) = self
                    .checkpoint_db()
                    .iter()
                    .find(|c| c.name == *name)
                    .map(|c| c.state.clone())
                else {
                    return err(format!("Checkpoint {name} does not exist"));
                };
                {
                    let mut st = self.dev.state();
                    // A checkpoint holds configuration: LLDP neighbours are the topology's, kept.
                    let neighbors = std::mem::take(&mut st.neighbors);
                    *st = snapshot;
                    st.neighbors = neighbors;
                }
                Some(
                    "Note: Applying config parallelly may fail Rollback verification\n\
                     Collecting Running-Config\n\
                     #Generating Rollback Patch\n\
                     Executing Rollback Patch\n\
                     #Generating Running-config for verification\n\
                     Generating Patch for verification\n\
                     Verification is Successful.\n\n\
                     Rollback completed successfully.\n\n"
                        .into(),
                )
            }
            _ => None,
        }
    }

    /// `show checkpoint summary [user]` and `show checkpoint NAME` (the saved configuration).
    fn show_checkpoint(&self, rest: &[&str]) -> Option<String> {
        let db = self.checkpoint_db();
        match rest {
            ["summary"] | ["summary", "user"] => {
                let mut s = String::from(
                    "User Checkpoint Summary\n--------------------------------------------------------------------------------\n",
                );
                for (i, c) in db.iter().enumerate() {
                    let size = c.state.running_config(self.dev.dialect).len();
                    let _ = write!(
                        s,
                        "{}) {}:\nCreated by {}\nCreated at {}\nSize is {} bytes\nDescription: {}\n\n",
                        i + 1,
                        c.name,
                        self.dev.username,
                        checkpoint_time(c.created),
                        thousands(size),
                        c.description.as_deref().unwrap_or("None")
                    );
                }
                Some(s)
            }
            [name] => {
                let c = db.iter().find(|c| c.name == *name)?;
                Some(format!(
                    "\n!Command: Checkpoint cmd vdc 1\n!Time: {}\n\nversion 10.3(3) Bios:version\n{}",
                    checkpoint_time(c.created),
                    c.state.running_config(self.dev.dialect)
                ))
            }
            _ => None,
        }
    }

    fn show_version(&self, st: &DeviceState) -> String {
        let up = (super::now() - self.dev.boot_time).max(0.0) as u64;
        let uptime = format!("{} hours, {} minutes", up / 3600, (up / 60) % 60);
        if self.dev.dialect == Dialect::Nxos {
            return format!(
                "Cisco Nexus Operating System (NX-OS) Software\nTAC support: http://www.cisco.com/tac\n\nSoftware\n  BIOS: version \n  NXOS: version 10.3(3) [Feature Release]\n\
                 \nHardware\n  cisco Nexus9000 C9300v Chassis \n  Intel(R) Xeon(R) CPU  with 16391876 kB of memory.\n  Processor Board ID {}\n\n  Device name: {}\n  bootflash: 4287040 kB\n\
                 Kernel uptime is 0 day(s), {}\n",
                self.dev.serial(),
                st.hostname,
                uptime
            );
        }
        format!(
            "Cisco IOS Software [Cupertino], Linux Software (X86_64BI_LINUX_L2-ADVENTERPRISEK9-M), Version 17.12.1, RELEASE SOFTWARE (fc5)\n\
             Technical Support: http://www.cisco.com/techsupport\nCopyright (c) 1986-2023 by Cisco Systems, Inc.\nCompiled Thu 27-Jul-23 22:33 by mcpre\n\n\
             ROM: Bootstrap program is Linux\n\n{} uptime is {}\nSystem returned to ROM by reload at 0\nSystem image file is \"unix:/iol/iol.bin\"\n\n\
             Linux Unix (Intel-x86) processor with 727227K bytes of memory.\nProcessor board ID {}\n{} Ethernet interfaces\n\
             256K bytes of NVRAM.\n\nConfiguration register is 0x0\n",
            st.hostname,
            uptime,
            self.dev.serial(),
            st.interfaces.len()
        )
    }

    /// `show inventory | json` of a Nexus 9000v: the chassis row (NX-API `TABLE_inv`/`ROW_inv`, as
    /// napalm's nxos driver reads it).
    fn nx_inventory(&self) -> Value {
        json!({"TABLE_inv": {"ROW_inv": [{
            "name": "Chassis",
            "desc": "Nexus9000 C9300v Chassis",
            "productid": "N9K-C9300v",
            "vendorid": "V02",
            "serialnum": self.dev.serial()
        }]}})
    }

    fn nx_version(&self, st: &DeviceState) -> Value {
        json!({
            "header_str": "Cisco Nexus Operating System (NX-OS) Software",
            "bios_ver_str": "",
            "kickstart_ver_str": "10.3(3) [Feature Release]",
            "nxos_ver_str": "10.3(3) [Feature Release]",
            "chassis_id": "Nexus9000 C9300v Chassis",
            "proc_board_id": self.dev.serial(),
            "host_name": st.hostname,
            "kern_uptm_days": 0,
            "kern_uptm_hrs": 0,
            "kern_uptm_mins": 0,
            "kern_uptm_secs": 0
        })
    }
}

/// `show lldp neighbors detail` as IOS-XE 17 (IOL) and NX-OS 10 print it: IOS starts each record
/// with a dashed line and `Local Intf:`, NX-OS with `Chassis id:` and names the local port in `Local
/// Port id:` (ntc-templates and genieparser captures, docs/fixture-sources.md).
fn show_lldp_detail(st: &DeviceState, d: Dialect) -> String {
    let mut out = String::new();
    let mut count = 0;
    if d == Dialect::Nxos {
        out.push_str(
            "Capability codes:\n  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device\n  \
             (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other\n\
             Device ID            Local Intf      Hold-time  Capability  Port ID  \n\n",
        );
    }
    for n in st.lldp_neighbors() {
        count += 1;
        let chassis = super::dotted_mac(&n.chassis_id);
        let local = short_name(d, &n.local_port);
        if d == Dialect::Nxos {
            let _ = write!(
                out,
                "Chassis id: {chassis}\nPort id: {port}\nLocal Port id: {local}\nPort Description: {port}\n\
                 System Name: {name}\nSystem Description: netgw-lab simulated device\n\
                 Time remaining: 97 seconds\nSystem Capabilities: B, R\nEnabled Capabilities: B, R\n\
                 Management Address: not advertised\nVlan ID: not advertised\n\n\n",
                port = n.port,
                name = n.system_name,
            );
        } else {
            let _ = write!(
                out,
                "------------------------------------------------\nLocal Intf: {local}\nChassis id: {chassis}\n\
                 Port id: {port}\nPort Description: {port}\nSystem Name: {name}\n\n\
                 System Description: \nnetgw-lab simulated device\n\n\
                 Time remaining: 97 seconds\nSystem Capabilities: B,R\nEnabled Capabilities: B,R\n\
                 Management Addresses - not advertised\nAuto Negotiation - not supported\n\
                 Physical media capabilities - not advertised\nMedia Attachment Unit type - not advertised\n\
                 Vlan ID: - not advertised\n\n",
                port = n.port,
                name = n.system_name,
            );
        }
    }
    let _ = writeln!(out, "Total entries displayed: {count}");
    out
}

/// `Mon, 07:37:22 29 Sep 2014` (UTC), as `show checkpoint summary` prints a creation time.
fn checkpoint_time(unix: f64) -> String {
    let t = super::utc(unix);
    format!(
        "{}, {:02}:{:02}:{:02} {} {} {}",
        super::abbrev(t.weekday()),
        t.hour(),
        t.minute(),
        t.second(),
        t.day(),
        super::abbrev(t.month()),
        t.year()
    )
}

/// `26,154`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Whether `line` ends configuration mode (where IOS / NX-OS changes are "committed").
fn leaves_config(sh: &Shell, line: &str) -> bool {
    let w: Vec<&str> = line.split_whitespace().collect();
    w == ["end"] || (w == ["exit"] && sh.cfg.context == Context::Top)
}

enum Action {
    None,
    SecretTyped,
    Close,
    Reset,
}

fn status_word(f: &super::state::Iface) -> (&'static str, &'static str) {
    if !f.enabled {
        ("administratively down", "down")
    } else if f.oper_up {
        ("up", "up")
    } else {
        ("down", "down")
    }
}

fn show_vlan_brief(st: &DeviceState, d: Dialect) -> String {
    let mut s = String::from(
        "\nVLAN Name                             Status    Ports\n---- -------------------------------- --------- -------------------------------\n",
    );
    for (id, name) in &st.vlans {
        // Access ports only, as IOS lists them (trunks are not VLAN members in this table).
        let ports: Vec<String> = st
            .interfaces
            .iter()
            .filter(|(_, f)| f.mode == Mode::Access && f.access_vlan == *id)
            .map(|(n, _)| short_name(d, n))
            .collect();
        let chunks: Vec<String> = ports.chunks(6).map(|c| c.join(", ")).collect();
        let _ = writeln!(
            s,
            "{:<4} {:<32} {:<9} {}",
            id,
            name,
            "active",
            chunks.first().map(String::as_str).unwrap_or("")
        );
        for c in chunks.iter().skip(1) {
            let _ = writeln!(s, "{:48}{c}", "");
        }
    }
    if d == Dialect::Ios {
        for (id, n) in [
            (1002, "fddi-default"),
            (1003, "token-ring-default"),
            (1004, "fddinet-default"),
            (1005, "trnet-default"),
        ] {
            let _ = writeln!(s, "{id:<4} {n:<32} act/unsup ");
        }
    }
    s
}

fn vname(st: &DeviceState, id: u16) -> String {
    st.vlans
        .get(&id)
        .cloned()
        .unwrap_or_else(|| format!("VLAN{id:04}"))
}

fn trunk_text(f: &super::state::Iface) -> String {
    f.trunk_allowed.text("ALL", "NONE")
}

/// NX-OS `show interface switchport`, as a Nexus prints it (genieparser and ntc-templates samples):
/// the full port name, indented lines, the configured mode as the operational mode, `Trunking VLANs
/// Allowed` as a range list.
fn nx_show_switchport(st: &DeviceState, only: Option<&str>) -> String {
    let mut s = String::new();
    for (n, f) in &st.interfaces {
        if only.is_some_and(|o| o != n)
            || f.mode == Mode::Routed
            || Some(n.as_str()) == st.mgmt_interface.as_deref()
        {
            continue;
        }
        let mode = if f.mode == Mode::Trunk {
            "trunk"
        } else {
            "access"
        };
        let allowed = f.trunk_allowed.text("1-4094", "none");
        let _ = write!(
            s,
            "Name: {n}\n  Switchport: Enabled\n  Switchport Monitor: Not enabled\n  Operational Mode: {mode}\n\
             \x20 Access Mode VLAN: {} ({})\n  Trunking Native Mode VLAN: {} ({})\n  Trunking VLANs Allowed: {allowed}\n\
             \x20 Administrative private-vlan primary host-association: none\n  Administrative private-vlan secondary host-association: none\n\
             \x20 Administrative private-vlan primary mapping: none\n  Administrative private-vlan secondary mapping: none\n\
             \x20 Administrative private-vlan trunk native VLAN: none\n  Administrative private-vlan trunk encapsulation: dot1q\n\
             \x20 Administrative private-vlan trunk normal VLANs: none\n  Administrative private-vlan trunk private VLANs: none\n\
             \x20 Operational private-vlan: none\n",
            f.access_vlan,
            vname(st, f.access_vlan),
            f.native_vlan,
            vname(st, f.native_vlan),
        );
    }
    s
}

fn show_switchport(st: &DeviceState, d: Dialect, only: Option<&str>) -> String {
    if d == Dialect::Nxos {
        return nx_show_switchport(st, only);
    }
    let mut s = String::new();
    for (n, f) in &st.interfaces {
        if only.is_some_and(|o| o != n)
            || f.mode == Mode::Routed
            || Some(n.as_str()) == st.mgmt_interface.as_deref()
        {
            continue;
        }
        let (admin, oper) = match f.mode {
            Mode::Trunk => ("trunk", "trunk"),
            _ => (
                "static access",
                if f.status_up() {
                    "static access"
                } else {
                    "down"
                },
            ),
        };
        // The simulated IOL L2 is ISL-capable: `negotiate` until an encapsulation is configured.
        // NX-OS trunks are 802.1Q only.
        let admin_encap = match (d, f.trunk_encapsulation.as_deref()) {
            (Dialect::Ios, None) => "negotiate",
            (Dialect::Ios, Some(e)) => e,
            _ => "dot1q",
        };
        let _ = write!(
            s,
            "Name: {}\nSwitchport: Enabled\nAdministrative Mode: {admin}\nOperational Mode: {oper}\n\
             Administrative Trunking Encapsulation: {admin_encap}\nOperational Trunking Encapsulation: {}\nNegotiation of Trunking: Off\n\
             Access Mode VLAN: {} ({})\nTrunking Native Mode VLAN: {} ({})\nAdministrative Native VLAN tagging: enabled\nVoice VLAN: none\n\
             Administrative private-vlan host-association: none\nAdministrative private-vlan mapping: none\n\
             Operational private-vlan: none\nTrunking VLANs Enabled: {}\nPruning VLANs Enabled: 2-1001\nCapture Mode Disabled\nCapture VLANs Allowed: ALL\n\n\
             Protected: false\nAppliance trust: none\n\n",
            short_name(d, n),
            if f.mode == Mode::Trunk {
                admin_encap
            } else {
                "native"
            },
            f.access_vlan,
            vname(st, f.access_vlan),
            f.native_vlan,
            vname(st, f.native_vlan),
            trunk_text(f)
        );
    }
    s
}

fn show_interfaces(st: &DeviceState, d: Dialect, only: Option<&str>) -> String {
    if d == Dialect::Nxos {
        return nx_show_interface(st, only);
    }
    let mut s = String::new();
    for (n, f) in &st.interfaces {
        if only.is_some_and(|o| o != n) {
            continue;
        }
        let (admin, proto) = status_word(f);
        let mac = dotted_mac(&f.mac);
        let _ = writeln!(
            s,
            "{n} is {admin}, line protocol is {proto}{}",
            if f.status_up() {
                " (connected)"
            } else {
                " (notconnect)"
            }
        );
        let _ = writeln!(s, "  Hardware is AmdP2, address is {mac} (bia {mac})");
        if !f.description.is_empty() {
            let _ = writeln!(s, "  Description: {}", f.description);
        }
        let _ = writeln!(
            s,
            "  MTU {} bytes, BW {} Kbit/sec, DLY 10 usec,",
            f.mtu,
            f.speed_mbps * 1000
        );
        s.push_str(
            "     reliability 255/255, txload 1/255, rxload 1/255\n  Encapsulation ARPA, loopback not set\n  Keepalive set (10 sec)\n\
             \x20 Full-duplex, Auto-speed, media type is unknown\n  ARP type: ARPA, ARP Timeout 04:00:00\n  Last input never, output never, output hang never\n\
             \x20 Last clearing of \"show interface\" counters never\n  Input queue: 0/75/0/0 (size/max/drops/flushes); Total output drops: 0\n\
             \x20 Queueing strategy: fifo\n  Output queue: 0/40 (size/max)\n  5 minute input rate 0 bits/sec, 0 packets/sec\n  5 minute output rate 0 bits/sec, 0 packets/sec\n\
             \x20    0 packets input, 0 bytes, 0 no buffer\n     Received 0 broadcasts (0 multicasts)\n     0 runts, 0 giants, 0 throttles\n\
             \x20    0 input errors, 0 CRC, 0 frame, 0 overrun, 0 ignored\n     0 packets output, 0 bytes, 0 underruns\n     0 output errors, 0 collisions, 0 interface resets\n",
        );
    }
    s
}

/// NX-OS `show interface` text, line for line as a Nexus 9000 prints it (ntc-templates'
/// `cisco_nxos_show_interface` samples): the state in the header, `admin state` on its own line at
/// column 0, `Hardware:` with a colon, the port mode.
fn nx_show_interface(st: &DeviceState, only: Option<&str>) -> String {
    let mut s = String::new();
    for (n, f) in &st.interfaces {
        if only.is_some_and(|o| o != n) {
            continue;
        }
        let mac = dotted_mac(&f.mac);
        let (state, why) = match (f.enabled, f.status_up()) {
            (false, _) => ("down", " (Administratively down)"),
            (true, true) => ("up", ""),
            (true, false) => ("down", " (Link not connected)"),
        };
        let _ = writeln!(s, "{n} is {state}{why}");
        let admin = if f.enabled { "up" } else { "down" };
        let _ = writeln!(s, "admin state is {admin}, Dedicated Interface");
        let _ = writeln!(
            s,
            "  Hardware: 100/1000/10000 Ethernet, address: {mac} (bia {mac})"
        );
        if !f.description.is_empty() {
            let _ = writeln!(s, "  Description: {}", f.description);
        }
        let _ = writeln!(
            s,
            "  MTU {} bytes, BW {} Kbit, DLY 10 usec",
            f.mtu,
            f.speed_mbps * 1000
        );
        let mode = match f.mode {
            super::state::Mode::Access => "access",
            super::state::Mode::Trunk => "trunk",
            super::state::Mode::Routed => "routed",
        };
        let _ = writeln!(
            s,
            "  reliability 255/255, txload 1/255, rxload 1/255\n  Encapsulation ARPA, medium is broadcast\n  Port mode is {mode}"
        );
        if f.status_up() {
            let _ = writeln!(s, "  full-duplex, {} Gb/s", f.speed_mbps / 1000);
        } else {
            s.push_str("  auto-duplex, auto-speed\n");
        }
        s.push_str(
            "  Beacon is turned off\n  Auto-Negotiation is turned on\n  Input flow-control is off, output flow-control is off\n\
             \x20 Auto-mdix is turned off\n  Rate mode is dedicated\n  Switchport monitor is off\n  EtherType is 0x8100\n\
             \x20 Last link flapped never\n  Last clearing of \"show interface\" counters never\n  0 interface resets\n\
             \x20 30 seconds input rate 0 bits/sec, 0 packets/sec\n  30 seconds output rate 0 bits/sec, 0 packets/sec\n\
             \x20 RX\n    0 unicast packets  0 multicast packets  0 broadcast packets\n    0 input packets  0 bytes\n\
             \x20 TX\n    0 unicast packets  0 multicast packets  0 broadcast packets\n    0 output packets  0 bytes\n\n",
        );
    }
    s
}

fn nx_vlan_brief(st: &DeviceState) -> Value {
    let rows: Vec<Value> = st
        .vlans
        .iter()
        .map(|(id, name)| {
            json!({
                "vlanshowbr-vlanid": id.to_string(),
                "vlanshowbr-vlanid-utf": id.to_string(),
                "vlanshowbr-vlanname": name,
                "vlanshowbr-vlanstate": "active",
                "vlanshowbr-shutstate": "noshutdown",
                "vlanshowplist-ifidx": st.members(*id).join(",")
            })
        })
        .collect();
    json!({"TABLE_vlanbriefxbrief": {"ROW_vlanbriefxbrief": rows}})
}

fn nx_interfaces(st: &DeviceState) -> Value {
    let rows: Vec<Value> = st
        .interfaces
        .iter()
        .map(|(n, f)| {
            let mut r = json!({
                "interface": n,
                "state": if f.status_up() { "up" } else { "down" },
                "admin_state": if f.enabled { "up" } else { "down" },
                "share_state": "Dedicated",
                "eth_hw_desc": "100/1000/10000 Ethernet",
                "eth_hw_addr": dotted_mac(&f.mac),
                "eth_bia_addr": dotted_mac(&f.mac),
                "eth_mtu": f.mtu.to_string(),
                "eth_bw": f.speed_mbps * 1000,
                "eth_dly": 10,
                "medium": "broadcast",
                "eth_mode": match f.mode { Mode::Routed => "routed", Mode::Trunk => "trunk", Mode::Access => "access" },
                "eth_duplex": "full",
                "eth_speed": format!("{} Mb/s", f.speed_mbps),
                "eth_autoneg": "on",
                "eth_link_flapped": "never"
            });
            if !f.description.is_empty()
                && let Some(m) = r.as_object_mut()
            {
                m.insert("desc".into(), Value::String(f.description.clone()));
            }
            r
        })
        .collect();
    json!({"TABLE_interface": {"ROW_interface": rows}})
}

fn nx_switchport(st: &DeviceState) -> Value {
    let rows: Vec<Value> = st
        .interfaces
        .iter()
        .filter(|(n, f)| f.mode != Mode::Routed && Some(n.as_str()) != st.mgmt_interface.as_deref())
        .map(|(n, f)| {
            json!({
                "interface": n,
                "switchport": "Enabled",
                "switchport_monitor": "Not enabled",
                "oper_mode": if f.mode == Mode::Trunk { "trunk" } else { "access" },
                "access_vlan": f.access_vlan.to_string(),
                "access_vlan_name": vname(st, f.access_vlan),
                "native_vlan": f.native_vlan.to_string(),
                "native_vlan_name": vname(st, f.native_vlan),
                "trunk_vlans": if f.trunk_allowed.is_all() { "1-4094".to_owned() } else { f.trunk_allowed.to_range_string() }
            })
        })
        .collect();
    json!({"TABLE_interface": {"ROW_interface": rows}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::fault::Faults;

    fn nxos() -> (Arc<CliSim>, Shell) {
        let dev = Device::new(
            "nx1",
            Dialect::Nxos,
            1,
            4,
            "admin",
            "admin",
            Faults::default(),
        );
        (CliSim::new(Arc::new(dev)), shell())
    }

    fn shell() -> Shell {
        Shell {
            mode: CliMode::Enable,
            cfg: ConfigSession::new(Dialect::Nxos),
            changed: false,
        }
    }

    /// Type each line; the output of the last.
    fn run(sim: &CliSim, sh: &mut Shell, lines: &[&str]) -> String {
        let mut last = String::new();
        for l in lines {
            last = sim.line(sh, l).0.unwrap_or_default();
        }
        last
    }

    /// `copy running-config startup-config` saves what `show startup-config` then shows and a
    /// `reload` boots from; what was configured after the save is gone after the reload.
    #[test]
    fn a_reload_boots_from_the_saved_startup_configuration() {
        let (sim, mut sh) = nxos();
        let config = |sh: &mut Shell, lines: &[&str]| {
            let mut all = vec!["configure terminal"];
            all.extend_from_slice(lines);
            all.push("end");
            run(&sim, sh, &all);
        };
        config(&mut sh, &["vlan 10", "name saved"]);
        assert!(!run(&sim, &mut sh, &["show startup-config"]).contains("saved"));
        run(&sim, &mut sh, &["copy running-config startup-config"]);
        config(
            &mut sh,
            &[
                "vlan 20",
                "name unsaved",
                "interface Ethernet1/1",
                "shutdown",
            ],
        );
        let startup = run(&sim, &mut sh, &["show startup-config"]);
        assert!(
            startup.contains("name saved") && !startup.contains("unsaved"),
            "{startup}"
        );
        assert!(!sim.dev.state().iface("Ethernet1/1").unwrap().enabled);
        let (out, action) = sim.line(&mut sh, "reload");
        assert!(
            out.is_none() && matches!(action, Action::Reset),
            "the session ends with the reload"
        );
        let st = sim.dev.state().clone();
        assert_eq!(st.vlans.get(&10).map(String::as_str), Some("saved"));
        assert!(!st.vlans.contains_key(&20), "{:?}", st.vlans);
        assert!(st.iface("Ethernet1/1").unwrap().enabled);
        assert_eq!(sim.dev.reloads.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn rollback_restores_the_checkpoint_exactly() {
        let (sim, mut sh) = nxos();
        sim.dev
            .state()
            .neighbors
            .push(super::super::state::Neighbor {
                local_port: "Ethernet1/1".into(),
                system_name: "spine1".into(),
                port: "Ethernet1".into(),
                chassis_id: "0200.0000.0001".into(),
                local_up: Default::default(),
                peer_up: Default::default(),
            });
        run(
            &sim,
            &mut sh,
            &[
                "configure terminal",
                "vlan 10",
                "name web",
                "interface Ethernet1/1",
                "description uplink",
                "switchport mode trunk",
                "switchport trunk allowed vlan 10",
                "end",
            ],
        );
        let snapshot = sim.dev.state().clone();
        let out = run(
            &sim,
            &mut sh,
            &["checkpoint netgw-1 description before run 1"],
        );
        assert!(out.ends_with("Done\n"), "{out:?}");
        run(
            &sim,
            &mut sh,
            &[
                "configure terminal",
                "hostname renamed",
                "no vlan 10",
                "vlan 20-21",
                "name app",
                "interface Ethernet1/1",
                "no description",
                "switchport trunk allowed vlan add 20",
                "interface Ethernet1/2",
                "description changed",
                "switchport access vlan 20",
                "shutdown",
                "mtu 9216",
                "interface Vlan20",
                "end",
            ],
        );
        assert_ne!(*sim.dev.state(), snapshot);
        assert_eq!(sim.prompt(&sh), "renamed#");
        let out = run(
            &sim,
            &mut sh,
            &["rollback running-config checkpoint netgw-1"],
        );
        assert!(out.contains("Rollback completed successfully."), "{out}");
        assert_eq!(*sim.dev.state(), snapshot, "rolled back exactly");
        assert_eq!(sim.prompt(&sh), "nx1#");
        assert_eq!(
            sim.dev.state().neighbors.len(),
            1,
            "neighbours are not config"
        );
        // The checkpoint stays until deleted; a second rollback to it is a no-op that succeeds.
        assert_eq!(sim.checkpoints(), ["netgw-1"]);
        let out = run(
            &sim,
            &mut sh,
            &["rollback running-config checkpoint netgw-1 atomic"],
        );
        assert!(out.contains("Rollback completed successfully."), "{out}");
        assert_eq!(*sim.dev.state(), snapshot);
        let summary = run(&sim, &mut sh, &["show checkpoint summary"]);
        assert!(
            summary.starts_with("User Checkpoint Summary\n")
                && summary.contains("1) netgw-1:\nCreated by admin\nCreated at ")
                && summary.contains("Description: before run 1"),
            "{summary}"
        );
        let saved = run(&sim, &mut sh, &["show checkpoint netgw-1"]);
        assert!(saved.contains("vlan 10\n name web"), "{saved}");
        assert_eq!(run(&sim, &mut sh, &["no checkpoint netgw-1"]), "");
        assert!(sim.checkpoints().is_empty());
    }

    #[test]
    fn checkpoints_belong_to_the_device_not_the_session() {
        let (sim, mut a) = nxos();
        run(&sim, &mut a, &["checkpoint netgw-2"]);
        let before = sim.dev.state().clone();
        run(&sim, &mut a, &["configure terminal", "vlan 30", "end"]);
        // The session that made the checkpoint is gone; another one rolls back to it.
        drop(a);
        let mut b = shell();
        let out = run(
            &sim,
            &mut b,
            &["rollback running-config checkpoint netgw-2"],
        );
        assert!(out.contains("Rollback completed successfully."), "{out}");
        assert_eq!(*sim.dev.state(), before);
    }

    #[test]
    fn checkpoint_errors_are_nxos_errors() {
        let (sim, mut sh) = nxos();
        assert!(run(&sim, &mut sh, &["checkpoint a"]).contains("Done"));
        let dup = run(&sim, &mut sh, &["checkpoint a"]);
        assert!(
            dup.starts_with("ERROR: ") && dup.contains("already exists"),
            "{dup}"
        );
        let missing = run(&sim, &mut sh, &["rollback running-config checkpoint nope"]);
        assert!(
            missing.starts_with("ERROR: ") && missing.contains("nope"),
            "{missing}"
        );
        assert!(run(&sim, &mut sh, &["no checkpoint nope"]).starts_with("ERROR: "));
        assert!(run(&sim, &mut sh, &["checkpoint system-x"]).starts_with("ERROR: "));
        let bad = run(
            &sim,
            &mut sh,
            &["rollback running-config checkpoint a sideways"],
        );
        assert!(bad.contains("% Invalid command"), "{bad}");
        // Ten user checkpoints at most; unnamed ones are numbered.
        for i in 1..MAX_CHECKPOINTS {
            assert!(run(&sim, &mut sh, &[&format!("checkpoint c{i}")]).contains("Done"));
        }
        let full = run(&sim, &mut sh, &["checkpoint one-too-many"]);
        assert!(
            full.starts_with("ERROR: ") && full.contains("(10)"),
            "{full}"
        );
        run(&sim, &mut sh, &["clear checkpoint database"]);
        assert!(sim.checkpoints().is_empty());
        run(&sim, &mut sh, &["checkpoint"]);
        assert_eq!(sim.checkpoints(), ["user-checkpoint-1"]);
        // Not an IOS command.
        let dev = Device::new(
            "r1",
            Dialect::Ios,
            2,
            4,
            "admin",
            "admin",
            Faults::default(),
        );
        let ios = CliSim::new(Arc::new(dev));
        let mut sh = shell();
        let out = run(&ios, &mut sh, &["checkpoint a"]);
        assert!(out.contains("% Invalid input"), "{out}");
    }

    #[test]
    fn nxos_reject_commit_answers_with_an_nxos_error() {
        let mut faults = Faults::default();
        faults.set("reject-commit", "change window closed").unwrap();
        let dev = Device::new("nx1", Dialect::Nxos, 1, 4, "admin", "admin", faults);
        let sim = CliSim::new(Arc::new(dev));
        let mut sh = shell();
        let out = run(&sim, &mut sh, &["configure terminal", "vlan 10"]);
        assert_eq!(out, "ERROR: change window closed\n");
        assert!(!sim.dev.state().vlans.contains_key(&10));
    }

    #[test]
    fn summary_times_and_sizes() {
        assert_eq!(checkpoint_time(0.0), "Thu, 00:00:00 1 Jan 1970");
        // genieparser's `show checkpoint summary` sample: `Wed, 12:56:56 31 May 2017`.
        assert_eq!(
            checkpoint_time(1_496_235_416.0),
            "Wed, 12:56:56 31 May 2017"
        );
        assert_eq!(checkpoint_time(951_782_400.0), "Tue, 00:00:00 29 Feb 2000");
        assert_eq!(thousands(26_154), "26,154");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }

    fn ios(archive: Option<&str>) -> (Arc<CliSim>, Shell) {
        let mut f = Faults::default();
        if let Some(p) = archive {
            f.set("archive-path", p).unwrap();
        }
        f.set("revert-minute-ms", "100").unwrap();
        let dev = Device::new("r1", Dialect::Ios, 1, 4, "admin", "admin", f);
        (CliSim::new(Arc::new(dev)), shell())
    }

    /// Every answer, not only the last.
    fn run_all(sim: &CliSim, sh: &mut Shell, lines: &[&str]) -> String {
        lines
            .iter()
            .map(|l| sim.line(sh, l).0.unwrap_or_default())
            .collect()
    }

    fn has_vlan(sim: &CliSim, id: u16) -> bool {
        sim.dev.state().vlans.contains_key(&id)
    }

    #[tokio::test]
    async fn without_an_archive_the_revert_timer_is_refused() {
        let (sim, mut sh) = ios(None);
        let out = run_all(&sim, &mut sh, &["show archive"]);
        assert!(out.contains(" Archive feature not enabled"), "{out}");
        let out = run_all(&sim, &mut sh, &["configure terminal revert timer 2"]);
        assert!(out.contains(crate::sim::archive::NO_ARCHIVE), "{out}");
        assert!(sh.mode == CliMode::Enable, "stays in exec mode");
        let out = run_all(&sim, &mut sh, &["show running-config"]);
        assert!(!out.contains("archive"), "{out}");
    }

    #[tokio::test]
    async fn the_timer_reverts_by_itself_unless_confirmed() {
        let (sim, mut sh) = ios(Some("flash:netgw"));
        let out = run_all(&sim, &mut sh, &["show archive config rollback timer"]);
        assert!(
            out.contains("%No Rollback Confirmed Change pending"),
            "{out}"
        );
        let out = run_all(
            &sim,
            &mut sh,
            &[
                "configure terminal revert timer 2",
                "vlan 30",
                "exit",
                "end",
            ],
        );
        assert!(
            out.contains(
                "Rollback Confirmed Change: Backing up current running config to flash:netgw-"
            ),
            "{out}"
        );
        assert!(has_vlan(&sim, 30) && sim.archive.pending());
        let out = run_all(&sim, &mut sh, &["show archive config rollback timer"]);
        assert!(out.contains("Timer value: 2 min"), "{out}");
        // The session that armed it is gone: the device reverts at 2 x 100 ms on its own.
        drop(sh);
        let t = std::time::Instant::now();
        while has_vlan(&sim, 30) && t.elapsed() < std::time::Duration::from_secs(10) {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert!(!has_vlan(&sim, 30) && !sim.archive.pending());
        let mut sh = shell();
        let out = run_all(&sim, &mut sh, &["configure confirm"]);
        assert!(
            out.contains("%No Rollback Confirmed Change pending"),
            "{out}"
        );
        let out = run_all(&sim, &mut sh, &["show archive", "show running-config"]);
        assert!(
            out.contains("There are currently 1 archive configurations saved."),
            "{out}"
        );
        assert!(out.contains("archive\n path flash:netgw\n"), "{out}");
    }

    #[tokio::test]
    async fn confirm_keeps_and_revert_now_restores() {
        let (sim, mut sh) = ios(Some("flash:netgw"));
        run_all(
            &sim,
            &mut sh,
            &[
                "configure terminal revert timer 1",
                "vlan 40",
                "exit",
                "end",
                "configure confirm",
            ],
        );
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(
            has_vlan(&sim, 40) && !sim.archive.pending(),
            "confirmed: kept past the timer"
        );
        let out = run_all(&sim, &mut sh, &["configure terminal revert timer 1"]);
        assert!(out.contains("Backing up"), "{out}");
        let out = run_all(
            &sim,
            &mut sh,
            &["no vlan 40", "end", "configure terminal revert timer 1"],
        );
        assert!(
            out.contains("already pending"),
            "a second arming is refused: {out}"
        );
        assert!(!has_vlan(&sim, 40));
        let out = run_all(&sim, &mut sh, &["configure revert now"]);
        assert!(!out.contains('%'), "{out}");
        assert!(has_vlan(&sim, 40) && !sim.archive.pending());
    }
}
