//! Harnesses for the parsers of device output, one per vendor (plus SNMP). Each feeds the same input to
//! every parser of its vendor, so every parser sees every execution: a target's exec count is each of
//! its parsers' exec count. The oracle is "no panic, no arithmetic overflow (debug assertions), no
//! hang"; parsers are pure, so results are only consumed (`black_box`) to keep the calls alive.

use std::collections::BTreeMap;
use std::hint::black_box;

use netgw_transport::netconf::reply::parse_document;
use netgw_transport::snmp::collector;
use netgw_transport::snmp::{Oid, parse_snmprec};
use netgw_transport::ssh::shell::clean;
use netgw_transport::ssh::{CliPlatform, PlatformKind};
use netgw_drivers::{eos, f5, ios, junos, nxos};
use serde_json::Value;

/// JSON the way the drivers receive it: one command's object, or pyeapi's one-element `runCmds` list
/// (what the conformance suites unwrap).
fn json(data: &[u8]) -> Option<Value> {
    let v: Value = serde_json::from_slice(data).ok()?;
    Some(match v {
        Value::Array(mut a) if a.len() == 1 => a.remove(0),
        other => other,
    })
}

/// Every Junos parser on one XML document (`get-*-information` replies and the configuration).
pub fn junos_xml(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    // Cheap string helpers see the raw text.
    black_box(junos::facts::parse_speed(s));
    black_box(junos::config::Style::parse(s));
    black_box(junos::config::style_from_model(s));
    black_box(junos::link::validate_interface_name(s));
    black_box(junos::vlan::validate_vlan_name(s));
    let Ok(root) = parse_document(s) else {
        return;
    };
    use junos::{config, facts, link, vlan};
    black_box(facts::parse_software_information(&root));
    black_box(facts::parse_chassis_inventory(&root));
    black_box(facts::parse_interface_information(&root));
    black_box(facts::parse_lldp_neighbors(&root));
    black_box(config::configuration(&root));
    black_box(config::detect_style_xml(&root));
    let cfg = config::parse_config(&root);
    black_box(config::detect_style(&cfg));
    black_box(cfg.ids_by_name());
    for v in vlan::parse_vlans(&cfg) {
        black_box(cfg.vlan_by_id(v.id.get()));
    }
    let names = link::parse_interface_names(&root);
    let links = link::parse_links(&cfg, &names);
    for l in &links {
        if let Some(set) = &l.trunk_vlans {
            black_box(link::member_strings(set));
        }
    }
    let info = vlan::parse_vlan_information(&root);
    black_box(vlan::vlans_from_information(&info));
    let inputs = facts::FactsInputs {
        software: Some(&root),
        chassis: Some(&root),
        interfaces: Some(&root),
        lldp: Some(&root),
        vlans: Some(&root),
        config: Some(&cfg),
    };
    let f = facts::build_facts(&inputs);
    black_box(f.to_automatic());
}

/// Every EOS parser: eAPI JSON (`show version`, `show interfaces`, ..., and the `runCmds` envelope)
/// and running-config text.
pub fn eos(data: &[u8]) {
    use eos::{facts, link, vlan};
    if let Ok(s) = std::str::from_utf8(data) {
        black_box(facts::parse_release(s));
        black_box(netgw_models::facts::normalize_mac_short_groups(s));
        black_box(netgw_models::facts::normalize_mac(s));
        black_box(link::parse_allowed(s));
        black_box(vlan::config_sections(s));
        black_box(vlan::parse_running_config_vlans(s));
        black_box(link::parse_running_config_interfaces(s));
        let mut links = link::parse_running_config_links(s);
        link::apply_running_config(&mut links, s);
        for l in &links {
            black_box(link::validate_link(l).is_ok());
            black_box(link::as_desired(l));
        }
    }
    let Some(v) = json(data) else {
        return;
    };
    black_box(facts::parse_show_version(&v, Some(1_700_000_000.0)));
    black_box(facts::parse_show_hostname(&v));
    black_box(facts::parse_interfaces_facts(&v));
    black_box(facts::parse_lldp_neighbors_detail(&v));
    black_box(facts::parse_lldp_neighbors(&v));
    let inputs = facts::FactsInputs {
        show_version: Some(&v),
        show_hostname: Some(&v),
        show_interfaces: Some(&v),
        show_vlan: Some(&v),
        show_lldp_neighbors_detail: Some(&v),
        show_lldp_neighbors: Some(&v),
    };
    black_box(facts::build_facts(&inputs, Some(1_700_000_000.0)).to_automatic());
    black_box(facts::build_facts(&inputs, None));
    let mut links = link::parse_show_interfaces(&v);
    link::apply_switchports(&mut links, &v);
    for l in &links {
        black_box(link::validate_link(l).is_ok());
    }
    for vl in vlan::parse_show_vlan(&v) {
        black_box(vlan::validate_vlan(&vl).is_ok());
    }
    let cmds = ["show version".to_owned(), "show vlan".to_owned()];
    // The reply's own decoding is serde_json's; what netgw does with it starts here.
    if let Ok(reply) = serde_json::from_slice::<eos::eapi::Reply>(data) {
        black_box(
            eos::eapi::parse_reply("fuzz", "1", &cmds, eos::eapi::Format::Json, reply)
                .map_err(|e| e.to_string())
                .err(),
        );
    }
    let answers = ["show interfaces", "show interfaces switchport", "show vlan"];
    let shapes = answers.iter().map(|c| (*c).to_owned()).collect::<Vec<_>>();
    let wrapped = format!("{{\"result\": [{{}}, {0}, {0}, {0}]}}", String::from_utf8_lossy(data));
    if let Ok(reply) = serde_json::from_str::<eos::eapi::Reply>(&wrapped) {
        black_box(
            eos::eapi::parse_reply("fuzz", "1", &shapes, eos::eapi::Format::Json, reply)
                .map_err(|e| e.to_string())
                .err(),
        );
    }
}

/// Every F5 BIG-IP iControl REST parser: `sys/*`, `net/interface`, `net/trunk` (and its stats),
/// `net/vlan` (with `interfacesReference` expanded), `net/self`, LLDP, error bodies, login and
/// transaction replies.
pub fn f5(data: &[u8]) {
    use f5::{error, facts, lag, link, rest, vlan};
    // Error bodies arrive as bytes with a status code; the first byte picks one.
    let status =
        [400u16, 401, 404, 409, 500, 200][usize::from(data.first().copied().unwrap_or(0) % 6)];
    if let Some(e) = error::parse_error_body(status, data) {
        black_box(e.mcpd_id());
        black_box(e.is_auth_failure());
        black_box(e.is_not_found());
        black_box(e.to_string());
    }
    if let Ok(s) = std::str::from_utf8(data) {
        black_box(error::mcpd_id(s));
        black_box(facts::media_speed(s));
        black_box(vlan::local_name(s));
        black_box(vlan::vlan_path(s));
        black_box(vlan::validate_f5_name(s).is_ok());
    }
    let Some(v) = json(data) else {
        return;
    };
    black_box(error::parse_error_value(status, &v).map(|e| e.to_string()));
    black_box(facts::parse_sys_version(&v));
    black_box(facts::parse_sys_hardware(&v));
    black_box(facts::parse_global_settings(&v));
    black_box(facts::parse_device_info(&v));
    black_box(facts::parse_interface_facts(&v));
    black_box(facts::parse_lldp_neighbors(&v));
    let inputs = facts::FactsInputs {
        sys_version: Some(&v),
        sys_hardware: Some(&v),
        global_settings: Some(&v),
        device_info: Some(&v),
        interfaces: Some(&v),
        vlans: Some(&v),
        lldp_neighbors: Some(&v),
    };
    black_box(facts::build_facts(&inputs).to_automatic());
    let trunks = lag::parse_trunks(&v);
    let selfs = lag::parse_selfs(&v);
    black_box(lag::parse_trunk_stats(&v));
    black_box(lag::l3_to_model(&selfs, &vlan::parse_vlans(&v)));
    black_box(lag::lags_to_model(&trunks, &[]));
    let mut f5_links = link::parse_interfaces(&v);
    f5_links.extend(link::parse_trunks(&v));
    black_box(vlan::parse_vlan_interfaces(&v));
    let f5_vlans = vlan::parse_vlans(&v);
    black_box(link::memberships(&f5_vlans));
    for vl in vlan::to_model(&f5_vlans) {
        black_box(vlan::validate_vlan(&vl).is_ok());
    }
    for l in link::to_model(&f5_links, &f5_vlans) {
        black_box(link::validate_link(&l).is_ok());
        black_box(link::target_membership(&l));
    }
    black_box(rest::parse_login(&v).is_ok());
    black_box(rest::parse_token_item(&v).is_ok());
    black_box(rest::parse_transaction(&v).is_ok());
}

/// Cisco IOS / IOS-XE CLI text, the way the SSH shell hands it over: `clean` (ANSI, backspaces,
/// CR) first, then every `show` parser on it. Also the prompt matchers of every CLI platform on its
/// last line, as the shell does.
pub fn ios(data: &[u8]) {
    use ios::{facts, link, vlan};
    let text = clean(data);
    shell_prompts(&text);
    // Parsers see what the shell returns: cleaned text.
    {
        let s = text.as_str();
        black_box(facts::parse_show_version(s));
        black_box(facts::parse_uptime(s));
        black_box(facts::parse_show_inventory(s));
        black_box(facts::parse_show_interfaces(s));
        black_box(facts::parse_show_lldp_neighbors_detail(s, Some(s)));
        black_box(facts::parse_show_cdp_neighbors_detail(s));
        let inputs = facts::FactsInputs {
            show_version: Some(s),
            show_inventory: Some(s),
            show_interfaces: Some(s),
            show_vlan_brief: Some(s),
            show_lldp_neighbors_detail: Some(s),
            show_lldp_neighbors: Some(s),
            show_cdp_neighbors_detail: Some(s),
            show_running_config: Some(s),
        };
        black_box(facts::build_facts(&inputs).to_automatic());
        let ifs = link::parse_running_config_interfaces(s);
        let sps = link::parse_show_interfaces_switchport(s);
        let rows = vlan::parse_show_vlan_brief(s);
        for v in vlan::vlans_from_rows(&rows) {
            black_box(vlan::validate_vlan(&v).is_ok());
        }
        let state = ios::config::DeviceState::new(&rows, ifs);
        let mut observed = state.observed(&rows, &BTreeMap::new());
        for l in &mut observed.links {
            for sp in &sps {
                sp.apply_to(l);
            }
            black_box(link::validate_link(l).is_ok());
        }
    }
}

/// The shell's prompt and failure matching on the last line of cleaned output, for every platform.
fn shell_prompts(text: &str) {
    let last = text.lines().last().unwrap_or("").trim();
    for kind in PlatformKind::ALL {
        let p = CliPlatform::get(kind);
        black_box(p.prompt_mode(last));
        black_box(p.failure_in(text));
    }
}

/// Cisco NX-OS: `| json` answers and the text fallbacks (after `clean`, as the shell returns them).
pub fn nxos(data: &[u8]) {
    use nxos::facts::{self, Answer};
    use nxos::{link, vlan};
    let text = clean(data);
    shell_prompts(&text);
    {
        let s = text.as_str();
        black_box(facts::parse_show_version_text(s));
        black_box(facts::parse_nxos_uptime(s));
        black_box(facts::parse_show_interface_text(s));
        black_box(facts::parse_show_lldp_neighbors_detail(s));
        let mut links = link::links_from_interface_text(s);
        let sps = ios::link::parse_show_interfaces_switchport(s);
        link::apply_switchports(&mut links, &sps);
        for l in &links {
            black_box(link::validate_link(l).is_ok());
        }
        let inputs = facts::FactsInputs {
            show_version: Some(Answer::Text(s)),
            show_hostname: Some(s),
            show_inventory: Some(Answer::Text(s)),
            show_interface: Some(Answer::Text(s)),
            show_vlan_brief: Some(Answer::Text(s)),
            show_lldp_neighbors_detail: Some(s),
        };
        black_box(facts::build_facts(&inputs).to_automatic());
    }
    let Some(v) = json(data) else {
        return;
    };
    black_box(facts::rows(&v, "TABLE_interface", "ROW_interface"));
    black_box(facts::text(&v, "host_name"));
    black_box(facts::parse_show_version_json(&v));
    black_box(facts::parse_show_interface_json(&v));
    black_box(facts::parse_show_inventory_json(&v));
    let mut links = link::parse_show_interface_json(&v);
    let sps = link::parse_show_interface_switchport_json(&v);
    link::apply_switchports(&mut links, &sps);
    for l in &links {
        black_box(link::validate_link(l).is_ok());
    }
    for vl in vlan::parse_show_vlan_brief_json(&v) {
        black_box(vlan::validate_vlan(&vl).is_ok());
    }
    let inputs = facts::FactsInputs {
        show_version: Some(Answer::Json(&v)),
        show_hostname: std::str::from_utf8(data).ok(),
        show_inventory: Some(Answer::Json(&v)),
        show_interface: Some(Answer::Json(&v)),
        show_vlan_brief: Some(Answer::Json(&v)),
        show_lldp_neighbors_detail: None,
    };
    black_box(facts::build_facts(&inputs).to_automatic());
}

/// SNMP: an snmprec recording (`OID|TYPE|VALUE`, the format labs replay) read into varbinds, then the
/// collector's varbinds -> facts mapping (sysDescr per vendor, ifTable/ifXTable, LLDP-MIB, ...).
pub fn snmp(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    black_box(
        s.parse::<Oid>()
            .ok()
            .map(|o| collector::enterprise_number(&o)),
    );
    for vendor in [
        None,
        Some("cisco"),
        Some("juniper"),
        Some("arista"),
        Some("f5"),
    ] {
        black_box(collector::parse_sys_descr(vendor, s));
    }
    let Ok(varbinds) = parse_snmprec(s) else {
        return;
    };
    for vb in &varbinds {
        black_box(vb.value.as_text());
        black_box(vb.value.as_u64());
        if let Some(o) = vb.value.as_oid() {
            black_box(collector::enterprise_number(o).map(collector::vendor_from_enterprise));
        }
    }
    black_box(collector::facts_from_varbinds(&varbinds).to_automatic());
}
