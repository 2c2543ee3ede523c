//! The CLI text IOS and NX-OS print alike, parsed once for both facts parsers (`ios/facts.rs`,
//! `nxos/facts.rs`): the `show version` summary and its uptime list, the `show inventory` table, the
//! interface blocks of `show interface(s)` and their common lines, and the one-record-per-neighbour
//! layout of `show lldp`/`cdp neighbors detail`. What each platform prints its own way (headers,
//! hardware lines, the System Description) stays in its module.

use std::collections::BTreeMap;

use netgw_models::facts::{DeviceFacts, InterfaceFacts, LldpNeighbor, split_hostname};

/// What `show version` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShowVersion {
    pub hostname: Option<String>,
    pub version: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub uptime: Option<u64>,
    /// IOS-XE (the software line or an `IOS XE Version` / `IOS-XE` mention); never set on NX-OS.
    pub xe: bool,
}

impl ShowVersion {
    /// Into the facts: hostname and FQDN (when the name reads as one), version, model, serial, uptime.
    pub fn fill(self, f: &mut DeviceFacts) {
        if let Some((h, fq)) = self.hostname.as_deref().and_then(split_hostname) {
            f.hostname = Some(h);
            f.fqdn = Some(fq);
        }
        f.platform_version = self.version;
        f.model = self.model;
        f.serial = self.serial;
        f.uptime = self.uptime;
    }
}

/// `N unit, N unit, ...` -> seconds. Each part's unit, less its `plural` ending, is looked up in
/// `units` (seconds each); parts that do not read are passed over; `None` when none reads.
pub fn uptime(s: &str, plural: &str, units: &[(&str, u64)]) -> Option<u64> {
    let mut total: u64 = 0;
    let mut any = false;
    for part in s.split(',') {
        let mut it = part.split_whitespace();
        let (Some(n), Some(unit)) = (it.next(), it.next()) else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        let unit = unit.trim_end_matches(plural);
        let Some((_, mult)) = units.iter().find(|(u, _)| *u == unit) else {
            continue;
        };
        total = total.saturating_add(n.saturating_mul(*mult));
        any = true;
    }
    any.then_some(total)
}

/// One `show inventory` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InventoryItem {
    pub name: String,
    pub descr: String,
    pub pid: Option<String>,
    pub vid: Option<String>,
    pub sn: Option<String>,
}

/// Parse `show inventory` (`NAME: "..", DESCR: ".."` then `PID: .. , VID: .. , SN: ..`).
pub fn parse_show_inventory(text: &str) -> Vec<InventoryItem> {
    let mut out: Vec<InventoryItem> = Vec::new();
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with("NAME:") {
            let name = quoted_after(line, "NAME:").unwrap_or_default();
            let descr = quoted_after(line, "DESCR:").unwrap_or_default();
            out.push(InventoryItem {
                name,
                descr,
                ..Default::default()
            });
        } else if line.starts_with("PID:")
            && let Some(item) = out.last_mut()
        {
            for field in line.split(',') {
                let Some((k, val)) = field.split_once(':') else {
                    continue;
                };
                let val = val.trim();
                let val = (!val.is_empty()).then(|| val.to_owned());
                match k.trim() {
                    "PID" => item.pid = val,
                    "VID" => item.vid = val,
                    "SN" => item.sn = val,
                    _ => {}
                }
            }
        }
    }
    out
}

/// The chassis of a `show inventory`: the item named `Chassis` (ISR, ASR, Nexus), else the first
/// item, which IOS always prints first (`WS-C6503-E` on a Catalyst 6500, whose item `"1"` is the
/// slot-1 supervisor; the stack or member 1 on a Catalyst 2960/3750/9300).
pub fn chassis_item(items: &[InventoryItem]) -> Option<&InventoryItem> {
    items
        .iter()
        .find(|it| it.name.eq_ignore_ascii_case("chassis"))
        .or_else(|| items.first())
}

/// The chassis' product id and serial number of a `show inventory` text.
pub fn chassis_pid_and_serial(text: &str) -> (Option<String>, Option<String>) {
    let items = parse_show_inventory(text);
    let c = chassis_item(&items);
    (c.and_then(|c| c.pid.clone()), c.and_then(|c| c.sn.clone()))
}

/// The inventory's chassis where `show version` named no model or serial (`show version`'s own
/// lines first, as NAPALM reads them).
pub fn fill_from_inventory(f: &mut DeviceFacts, pid: Option<String>, serial: Option<String>) {
    if f.model.is_none() {
        f.model = pid;
    }
    if f.serial.is_none() {
        f.serial = serial;
    }
}

fn quoted_after(line: &str, key: &str) -> Option<String> {
    let rest = &line[line.find(key)? + key.len()..];
    let start = rest.find('"')? + 1;
    let end = rest[start..].find('"')? + start;
    Some(rest[start..end].trim().to_owned())
}

/// `NAME is STATUS[, line protocol is ...]`: the interface name (one word, or any with the line protocol) and the status text up to
/// the first comma, when STATUS is an interface state (`up`, `down`, `administratively down`, ...).
pub(crate) fn interface_header(raw: &str) -> Option<(&str, &str)> {
    // Called on every line of the output: one prebuilt searcher, not one set up per line.
    static IS: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(" is "));
    let line = raw.trim();
    let at = IS.find(line.as_bytes())?;
    let (name, rest) = (&line[..at], &line[at + 4..]);
    let status = rest.split(',').next().unwrap_or("").trim();
    let state = [
        "up",
        "down",
        "administratively down",
        "deleted",
        "reset",
        "testing",
    ]
    .iter()
    .any(|s| {
        status
            .strip_prefix(s)
            .is_some_and(|r| r.is_empty() || r.starts_with(' '))
    });
    // A name with spaces only in the full IOS form (`Control Plane Interface is down, line protocol is`).
    let one_word = !name.contains(' ') || line.contains(", line protocol is ");
    (!name.is_empty() && one_word && state).then_some((name, status))
}

/// The blocks of a `show interface(s)` text: `header` reads a line that starts an interface (its
/// name and first facts), `detail` every later line into the facts of the interface above it; lines
/// before the first header are passed over.
pub(crate) fn interface_blocks(
    text: &str,
    mut header: impl FnMut(&str) -> Option<(String, InterfaceFacts)>,
    mut detail: impl FnMut(&str, &mut InterfaceFacts),
) -> BTreeMap<String, InterfaceFacts> {
    let mut out = BTreeMap::new();
    let mut cur: Option<(String, InterfaceFacts)> = None;
    for raw in text.lines() {
        if let Some(next) = header(raw) {
            if let Some((n, f)) = cur.replace(next) {
                out.insert(n, f);
            }
        } else if let Some((_, f)) = cur.as_mut() {
            detail(raw, f);
        }
    }
    if let Some((n, f)) = cur {
        out.insert(n, f);
    }
    out
}

/// The detail lines both platforms print alike (`line` trimmed): `Description: X` and the
/// `MTU 1500 bytes, BW 1000000 Kbit...` line. False when `line` is neither.
pub(crate) fn interface_detail(line: &str, f: &mut InterfaceFacts) -> bool {
    if let Some(d) = line.strip_prefix("Description: ") {
        f.description = Some(d.trim_end().to_owned());
    } else if let Some(rest) = line.strip_prefix("MTU ") {
        mtu_and_bandwidth(rest, f);
    } else {
        return false;
    }
    true
}

/// The `MTU 1500 bytes, BW 1000000 Kbit/sec, ...` line (after `MTU `): the MTU, and the bandwidth as
/// the speed in bit/s.
fn mtu_and_bandwidth(rest: &str, f: &mut InterfaceFacts) {
    f.mtu = rest.split_whitespace().next().and_then(|m| m.parse().ok());
    if let Some(pos) = rest.find("BW ") {
        f.speed = rest[pos + 3..]
            .split_whitespace()
            .next()
            .and_then(|k| k.parse::<u64>().ok())
            .map(|kbit| kbit.saturating_mul(1000));
    }
}

/// The value of a neighbour field line `KEY value` (`line` trimmed), unless empty or `not advertised`.
pub(crate) fn neighbor_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let v = line.strip_prefix(key)?.trim();
    (!v.is_empty() && !v.contains("not advertised")).then_some(v)
}

/// The neighbour fields both platforms print alike: `Chassis id:`, `Port id:`, `Port Description:`,
/// `System Name:`, each read by `value` (a [`neighbor_value`] the platform may narrow). False when
/// `line` holds none of them.
pub(crate) fn neighbor_field(n: &mut LldpNeighbor, value: impl Fn(&str) -> Option<String>) -> bool {
    if let Some(v) = value("Chassis id:") {
        n.remote_chassis_id = Some(v);
    } else if let Some(v) = value("Port id:") {
        n.remote_port = Some(v);
    } else if let Some(v) = value("Port Description:") {
        n.remote_port_description = Some(v);
    } else if let Some(v) = value("System Name:") {
        n.remote_system_name = Some(v);
    } else {
        return false;
    }
    true
}

/// Neighbour records by local port, read one at a time: a record is started, its lines name its
/// local port and fill it, and it is kept when the next one starts or at the end, if it named a port.
#[derive(Default)]
pub(crate) struct PortRecords {
    done: BTreeMap<String, Vec<LldpNeighbor>>,
    open: Option<(Option<String>, LldpNeighbor)>,
}

impl PortRecords {
    pub(crate) fn start(&mut self, n: LldpNeighbor) {
        self.close();
        self.open = Some((None, n));
    }

    /// The open record's local port and neighbour; `None` before the first record.
    pub(crate) fn open(&mut self) -> Option<(&mut Option<String>, &mut LldpNeighbor)> {
        self.open.as_mut().map(|(p, n)| (p, n))
    }

    pub(crate) fn finish(mut self) -> BTreeMap<String, Vec<LldpNeighbor>> {
        self.close();
        self.done
    }

    fn close(&mut self) {
        if let Some((Some(port), n)) = self.open.take() {
            self.done.entry(port).or_default().push(n);
        }
    }
}

/// A file of a facts conformance case (`tests/fixtures/conformance/PLATFORM/facts/CASE/FILE`).
#[cfg(test)]
pub(crate) fn facts_fixture(platform: &str, case: &str, file: &str) -> String {
    let p = format!(
        "{}/tests/fixtures/conformance/{platform}/facts/{case}/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uptime_lists() {
        let units = [("day", 86400), ("hour", 3600), ("minute", 60)];
        assert_eq!(
            uptime("2 days, 1 hour, 3 minutes", "s", &units),
            Some(176_580)
        );
        assert_eq!(uptime("1 day(s), 2 minute(s)", "(s)", &units), Some(86_520));
        assert_eq!(uptime("3 fortnights, x days", "s", &units), None);
    }

    #[test]
    fn records_without_a_local_port_are_dropped() {
        let mut r = PortRecords::default();
        assert!(r.open().is_none());
        r.start(LldpNeighbor::default());
        *r.open().unwrap().0 = Some("Ethernet1/1".into());
        r.start(LldpNeighbor::default());
        let m = r.finish();
        assert_eq!(m.len(), 1);
        assert_eq!(m["Ethernet1/1"].len(), 1);
    }
}
