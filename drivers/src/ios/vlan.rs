//! IOS VLANs: `show vlan brief` / `show vlan` parsing, `vlan N` / `name X` / `no vlan N` rendering, and
//! the IOS limits on VLAN resources.
//!
//! `show vlan brief` is a fixed-width table whose header names the columns (`VLAN Name ... Status
//! Ports`); port lists wrap onto continuation lines that start with blanks. `show vlan` prints the same
//! table first, then more tables after a blank line, which are ignored.

use netgw_models::plan::{Action, VlanChange};
use netgw_models::resource::{Vlan, VlanId, VlanSet};

use super::RenderError;

/// Longest VLAN name IOS keeps (`name` truncates silently beyond it; fake-switches does too).
pub const MAX_NAME_LEN: usize = 32;

/// VLAN 1 and the legacy FDDI / Token Ring VLANs 1002-1005: they cannot be deleted or renamed.
pub fn reserved_vlans() -> VlanSet {
    let mut s = VlanSet::new();
    for id in [1, 1002, 1003, 1004, 1005] {
        if let Ok(v) = VlanId::new(id) {
            s.insert(v);
        }
    }
    s
}

/// The name IOS gives a reserved VLAN (and which a declaration may repeat harmlessly).
fn reserved_default_names(id: u16) -> &'static [&'static str] {
    match id {
        1 => &["default"],
        1002 => &["fddi-default"],
        1003 => &["token-ring-default", "trcrf-default"],
        1004 => &["fddinet-default"],
        1005 => &["trnet-default", "trbrf-default"],
        _ => &[],
    }
}

/// One VLAN row of `show vlan brief`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlanRow {
    pub id: VlanId,
    pub name: String,
    pub status: String,
    /// Port names as printed (short forms such as `Gi0/1`).
    pub ports: Vec<String>,
}

/// Parse `show vlan brief` (or the first table of `show vlan`). Lines that are not VLAN rows are
/// skipped; an empty output (a device without VLAN support) is no VLANs.
pub fn parse_show_vlan_brief(text: &str) -> Vec<VlanRow> {
    let mut rows: Vec<VlanRow> = Vec::new();
    // Column starts from the header, when present.
    let mut status_col: Option<usize> = None;
    let mut ports_col: Option<usize> = None;
    let mut in_table = false;
    for raw in text.lines() {
        let line = raw.trim_end();
        if line.starts_with("VLAN Name") {
            status_col = line.find("Status");
            ports_col = line.find("Ports");
            in_table = true;
            continue;
        }
        if line.starts_with("VLAN Type")
            || line.starts_with("Remote SPAN")
            || line.starts_with("Primary")
        {
            // The later tables of `show vlan`.
            in_table = false;
            continue;
        }
        if !in_table && status_col.is_some() {
            continue;
        }
        if line.trim().is_empty() || line.starts_with("----") {
            continue;
        }
        if line.starts_with(' ') {
            // Continuation of the previous row: its status and ports when its name ran over the
            // Status column, else more of its port list.
            if let Some(last) = rows.last_mut() {
                match status_col {
                    Some(sc)
                        if last.status.is_empty() && line.trim_start().len() + sc >= line.len() =>
                    {
                        let (status, ports) =
                            status_and_ports(line.get(sc..).unwrap_or_default(), sc, ports_col);
                        last.status = status;
                        last.ports.extend(ports);
                    }
                    _ => last.ports.extend(split_ports(line)),
                }
            }
            continue;
        }
        let Some(first) = line.split_whitespace().next() else {
            continue;
        };
        let Ok(id) = first.parse::<i64>() else {
            continue;
        };
        let Ok(id) = VlanId::new(id) else { continue };
        let (name, status, ports) = match (status_col, ports_col) {
            // A name longer than its column runs into Status; IOS then prints the status and
            // ports on the next line, under their columns.
            (Some(sc), _)
                if line.len() > sc
                    && line.is_char_boundary(sc)
                    && first.len() < sc
                    && !line[..sc].ends_with(' ')
                    && line[sc..].split_whitespace().count() == 1 =>
            {
                (
                    line[first.len()..].trim().to_owned(),
                    String::new(),
                    Vec::new(),
                )
            }
            (Some(sc), pc) if line.len() > sc && line.is_char_boundary(sc) && first.len() < sc => {
                let name = line[first.len()..sc].trim().to_owned();
                let (status, ports) = status_and_ports(&line[sc..], sc, pc);
                (name, status, ports)
            }
            _ => {
                // No header (or a short line): whitespace-separated id, name, status, ports.
                let mut it = line.split_whitespace().skip(1);
                let name = it.next().unwrap_or("").to_owned();
                let status = it.next().unwrap_or("").to_owned();
                let rest: Vec<&str> = it.collect();
                (name, status, split_ports(&rest.join(" ")))
            }
        };
        rows.push(VlanRow {
            id,
            name,
            status,
            ports,
        });
    }
    rows
}

/// Status and ports from the text at the Status column (`rest`), the Ports column at `pc`.
fn status_and_ports(rest: &str, sc: usize, pc: Option<usize>) -> (String, Vec<String>) {
    match pc.map(|p| p.saturating_sub(sc)) {
        Some(off) if rest.len() > off && rest.is_char_boundary(off) => {
            (rest[..off].trim().to_owned(), split_ports(&rest[off..]))
        }
        _ => {
            let mut it = rest.trim_start().splitn(2, char::is_whitespace);
            let status = it.next().unwrap_or("").trim().to_owned();
            (status, split_ports(it.next().unwrap_or("")))
        }
    }
}

fn split_ports(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

/// VLAN resources from `show vlan brief` rows (IOS VLANs have a name and no description).
pub fn vlans_from_rows(rows: &[VlanRow]) -> Vec<Vlan> {
    rows.iter()
        .map(|r| Vlan {
            id: r.id,
            name: (!r.name.is_empty()).then(|| r.name.clone()),
            description: None,
            state: Default::default(),
        })
        .collect()
}

/// A desired VLAN IOS cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VlanUnfit {
    #[error(transparent)]
    Model(#[from] netgw_models::error::ModelError),
    #[error("VLAN name {0:?} is longer than {MAX_NAME_LEN} characters (IOS would truncate it)")]
    NameTooLong(String),
    #[error("VLAN {0} is reserved on IOS and cannot be renamed")]
    Reserved(u16),
    #[error("IOS VLANs have no description (use the name)")]
    Description,
}

/// IOS limits, checked before anything is sent.
pub fn validate_vlan(v: &Vlan) -> Result<(), VlanUnfit> {
    v.validate()?;
    if let Some(n) = &v.name {
        if n.len() > MAX_NAME_LEN {
            return Err(VlanUnfit::NameTooLong(n.clone()));
        }
        let id = v.id.get();
        if reserved_vlans().contains(v.id) && !reserved_default_names(id).contains(&n.as_str()) {
            return Err(VlanUnfit::Reserved(id));
        }
    }
    if v.description.is_some() {
        return Err(VlanUnfit::Description);
    }
    Ok(())
}

/// The configuration lines of one VLAN change (global configuration mode).
pub fn render_vlan_change(c: &VlanChange) -> Result<Vec<String>, RenderError> {
    let mut out = Vec::new();
    match c.action {
        Action::Delete => out.push(format!("no vlan {}", c.id)),
        Action::Create | Action::Update => {
            out.push(format!("vlan {}", c.id));
            if let Some(after) = &c.after {
                let renamed = c.before.as_ref().map(|b| &b.name) != Some(&after.name);
                if let (Some(name), true) = (&after.name, renamed) {
                    out.push(format!("name {}", name_arg(name)?));
                }
            }
            out.push("exit".into());
        }
    }
    Ok(out)
}

/// The lines that bring VLAN `id` back to `name` (restoring a renamed or deleted VLAN).
pub fn render_vlan_restore(id: VlanId, name: Option<&str>) -> Result<Vec<String>, RenderError> {
    let mut out = vec![format!("vlan {id}")];
    if let Some(n) = name {
        out.push(format!("name {}", name_arg(n)?));
    }
    out.push("exit".into());
    Ok(out)
}

/// A VLAN name as a single CLI word. Names read back from a device may hold characters the models
/// refuse for new names; those are sent only if the CLI cannot misread them.
fn name_arg(name: &str) -> Result<&str, RenderError> {
    if name.is_empty()
        || name.len() > MAX_NAME_LEN
        || name.chars().any(|c| {
            c.is_whitespace()
                || c.is_control()
                || !c.is_ascii()
                || matches!(c, ';' | '|' | '?' | '"' | '!')
        })
    {
        return Err(RenderError {
            line: format!("name {name}"),
            reason: "the VLAN name is not one safe CLI word",
        });
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_longer_than_its_column_keeps_the_status_and_ports_of_the_next_line() {
        // genieparser iosxe ShowVlan golden_output_vlan_5 (a Catalyst 9300).
        let t = [
            "VLAN Name                             Status    Ports",
            "---- -------------------------------- --------- -------------------------------",
            "2    Test                             active    ",
            "1006 fddinet-fdnet-trbrf-default-Test-long",
            "                                      act/unsup Gi0/0/0",
        ]
        .join("\n");
        let rows = parse_show_vlan_brief(&t);
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[1].name, "fddinet-fdnet-trbrf-default-Test-long");
        assert_eq!(rows[1].status, "act/unsup");
        assert_eq!(rows[1].ports, vec!["Gi0/0/0".to_owned()]);
        assert_eq!(rows[0].status, "active");
    }
    use serde_json::json;

    const FAKE: &str = "\nVLAN Name                             Status    Ports\n---- -------------------------------- --------- -------------------------------\n1    default                          active    Fa0/1, Fa0/3, Fa0/4, Fa0/5\n                                                Fa0/6, Fa0/7\n10   web                              active    Fa0/2\n20   VLAN20                           active\n30   a_very_long_vlan_name_that_excee active\n";

    #[test]
    fn parses_fake_switches_and_continuations() {
        let rows = parse_show_vlan_brief(FAKE);
        assert_eq!(rows.len(), 4);
        assert_eq!(
            rows[0].ports,
            ["Fa0/1", "Fa0/3", "Fa0/4", "Fa0/5", "Fa0/6", "Fa0/7"]
        );
        assert_eq!(rows[1].name, "web");
        assert_eq!(rows[2].ports, Vec::<String>::new());
        assert_eq!(rows[3].name, "a_very_long_vlan_name_that_excee");
        assert_eq!(rows[3].status, "active");
    }

    #[test]
    fn glued_status_and_later_tables() {
        let t = "VLAN Name                             Status    Ports\n---- -------------------------------- --------- -------\n1005 trnet-default                    act/unsup\n\nVLAN Type  SAID       MTU\n---- ----- ---------- -----\n1    enet  100001     1500\n";
        let rows = parse_show_vlan_brief(t);
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].name.as_str(), rows[0].status.as_str()),
            ("trnet-default", "act/unsup")
        );
        assert!(parse_show_vlan_brief("").is_empty());
    }

    #[test]
    fn validation() {
        let v: Vlan =
            serde_json::from_value(json!({"id": 10, "name": "a23456789012345678901234567890123"}))
                .unwrap();
        assert!(validate_vlan(&v).unwrap_err().to_string().contains("32"));
        let v: Vlan = serde_json::from_value(json!({"id": 1, "name": "users"})).unwrap();
        assert_eq!(validate_vlan(&v), Err(VlanUnfit::Reserved(1)));
        let v: Vlan = serde_json::from_value(json!({"id": 1, "name": "default"})).unwrap();
        assert!(validate_vlan(&v).is_ok());
        let v: Vlan = serde_json::from_value(json!({"id": 10, "description": "x"})).unwrap();
        assert!(validate_vlan(&v).is_err());
        let v: Vlan = serde_json::from_value(json!({"id": 10, "name": "two words"})).unwrap();
        assert!(validate_vlan(&v).is_err());
    }

    #[test]
    fn render_restore_refuses_unsafe_names() {
        let id = VlanId::new(5).unwrap();
        assert_eq!(
            render_vlan_restore(id, Some("web")).unwrap(),
            ["vlan 5", "name web", "exit"]
        );
        assert!(render_vlan_restore(id, Some("a b")).is_err());
        assert!(render_vlan_restore(id, Some("a\nb")).is_err());
    }
}
