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
//! the napalm `nxos_ssh` / NX-API samples (`TABLE_vlanbriefxbrief`, `TABLE_interface`).

use super::fault::{ConnCtl, Step};
use super::state::{ConfigSession, Context, DeviceState, Dialect, Mode};
use super::{Device, dotted_mac};
use russh::server::Msg;
use russh::{Channel, ChannelMsg};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::Arc;

/// One IOS or NX-OS device's CLI.
#[derive(Debug)]
pub struct CliSim {
    pub dev: Arc<Device>,
}

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
        Arc::new(CliSim { dev })
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
            while let Some(pos) = buf.iter().position(|&b| b == b'\n' || b == b'\r') {
                let line: Vec<u8> = buf.drain(..=pos).collect();
                // CRLF: the LF after a CR is part of the same line end.
                if line.last() == Some(&b'\r') && buf.first() == Some(&b'\n') {
                    buf.remove(0);
                }
                let text = String::from_utf8_lossy(&line[..line.len() - 1]).into_owned();
                if !matches!(sh.mode, CliMode::EnablePassword) {
                    tracing::trace!(device = %self.dev.name, line = %text, "cli line");
                }
                self.dev.faults.delay().await;
                if sh.changed
                    && sh.mode == CliMode::Config
                    && let Some(d) = self.dev.faults.slow_commit
                    && leaves_config(&sh, &text)
                {
                    tokio::time::sleep(d).await;
                }
                let (out, action) = self.line(&mut sh, &text);
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
            (CliMode::Enable, ["write", ..] | ["copy", "running-config", "startup-config"]) => {
                if self.dev.faults.on_read() {
                    return (None, Action::Reset);
                }
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
        // Configuration mode. `end` (and `exit` at top level) is where IOS and NX-OS changes are done:
        // the named commit steps of the fault table happen there.
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
            return (Some(format!("% {msg}\n")), Action::None);
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
                if !matches!(words.as_slice(), ["exit"]) {
                    sh.changed = true;
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
            (["vlan", "brief"] | ["vlan"], false) => return Some(show_vlan_brief(st, d)),
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
            (["running-config"], false) => {
                let c = st.running_config(d);
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
    if f.trunk_allowed.is_all() {
        "ALL".into()
    } else if f.trunk_allowed.is_empty() {
        "NONE".into()
    } else {
        f.trunk_allowed.to_range_string()
    }
}

fn show_switchport(st: &DeviceState, d: Dialect, only: Option<&str>) -> String {
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
        let _ = write!(
            s,
            "Name: {}\nSwitchport: Enabled\nAdministrative Mode: {admin}\nOperational Mode: {oper}\n\
             Administrative Trunking Encapsulation: dot1q\nOperational Trunking Encapsulation: {}\nNegotiation of Trunking: Off\n\
             Access Mode VLAN: {} ({})\nTrunking Native Mode VLAN: {} ({})\nAdministrative Native VLAN tagging: enabled\nVoice VLAN: none\n\
             Administrative private-vlan host-association: none\nAdministrative private-vlan mapping: none\n\
             Operational private-vlan: none\nTrunking VLANs Enabled: {}\nPruning VLANs Enabled: 2-1001\nCapture Mode Disabled\nCapture VLANs Allowed: ALL\n\n\
             Protected: false\nAppliance trust: none\n\n",
            short_name(d, n),
            if f.mode == Mode::Trunk {
                "dot1q"
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
        let _ = writeln!(
            s,
            "  Hardware is {}, address is {mac} (bia {mac})",
            if d == Dialect::Nxos {
                "100/1000/10000 Ethernet"
            } else {
                "AmdP2"
            }
        );
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
