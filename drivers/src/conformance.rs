//! The shared driver conformance suite's entry point (in the spirit of NAPALM's getter tests): the
//! recorded outputs of one case become a recorded device ([`crate::transport::replay`]) and the
//! vendor's real driver, opened by [`crate::registry::replay`], runs on it exactly as on the network.
//!
//! Cases live in `drivers/tests/fixtures/conformance/<vendor>/<getter>/<case>/`; file names say which
//! request they answer, as in NAPALM's mocked data:
//!
//! | vendor | file | answers |
//! |---|---|---|
//! | ios, nxos | `show_version.txt`, `show_inventory___json.txt` | `show version`, `show inventory \| json` |
//! | ios, nxos | `show_interface.json` (NX-API) | `show interface \| json` |
//! | eos | `show_interfaces.json` | eAPI `show interfaces` |
//! | junos | `get-interface-information.xml` | `<get-interface-information/>` (with or without arguments) |
//! | f5 | `net_vlan.json`, `shared_device-info.json` | `GET /mgmt/tm/net/vlan`, `GET /mgmt/shared/device-info` |
//!
//! and a few aliases where a source recorded a close variant of what the driver asks: an IOS
//! `show vlan` answers `show vlan brief` (one parser reads both), an IOS `show running-config interface`
//! answers `show running-config`, a Junos `get-configuration` (the Junos RPC) answers `get-config`.
//! The sources' own expectations in a case are not part of the recording. Getters: `facts`
//! (`Driver::facts`), `vlans` and `links` (`Driver::observe`), `lags` (`Driver::lag_members`: IOS
//! `show_etherchannel_summary.txt`, NX-OS and EOS `show_port-channel_summary.txt`, Junos
//! `get-lacp-interface-information.xml`).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::driver::Platform;
use crate::target::DeviceTarget;
use crate::transport::replay::Recording;

/// Every file called `file` in the conformance cases of `vendor`, as (its path, its text): the real
/// answers the drivers' unit tests hold their projections to.
#[cfg(test)]
pub(crate) fn captures(vendor: &str, file: &str) -> Vec<(String, String)> {
    fn walk(dir: &std::path::Path, file: &str, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, file, out);
            } else if path.file_name().is_some_and(|n| n == file) {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path.display().to_string(), text));
            }
        }
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/conformance")
        .join(vendor);
    let mut out = Vec::new();
    walk(&dir, file, &mut out);
    out
}

/// Files of a case that hold a source's expectation, never a device's answer.
fn is_expectation(name: &str) -> bool {
    name == "expected.json"
        || name.starts_with("ntc_parsed.")
        || name.starts_with("napalm_expected")
        || name.ends_with("_expected.json")
        || name == "facts.yml"
        || name.ends_with(".md")
}

/// The request a file answers on `platform`, and its aliases.
fn requests(platform: Platform, name: &str) -> Vec<String> {
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    let main = match (platform, ext) {
        // NAPALM's NX-API mocks hold what `| json` prints over SSH.
        (Platform::Ios | Platform::Nxos, "json") => format!("{stem} | json"),
        _ => stem.to_owned(),
    };
    let alias = match (platform, stem) {
        (Platform::Ios, "show_vlan") => Some("show vlan brief"),
        (Platform::Ios, "show_running_config_interface") => Some("show running-config"),
        (Platform::Junos, "get-configuration") => Some("get-config"),
        _ => None,
    };
    std::iter::once(main)
        .chain(alias.map(str::to_owned))
        .collect()
}

/// pyeapi records a command's answer as the `result` list of its runCmds reply (one entry): the
/// answer is that entry.
fn one_result(platform: Platform, text: &str) -> String {
    if platform == Platform::Eos
        && let Ok(Value::Array(mut a)) = serde_json::from_str::<Value>(text)
        && a.len() == 1
    {
        return a.remove(0).to_string();
    }
    text.to_owned()
}

/// The recorded device of one case (file name -> content). An alias never hides a file recorded
/// under the request's own name.
pub fn recording(platform: Platform, files: &BTreeMap<String, String>) -> Recording {
    let rec = Recording::new();
    let own: Vec<String> = files
        .keys()
        .map(|n| crate::transport::replay::key(n.rsplit_once('.').map_or(n.as_str(), |p| p.0)))
        .collect();
    for (name, text) in files.iter().filter(|(n, _)| !is_expectation(n)) {
        let text = one_result(platform, text);
        for (i, request) in requests(platform, name).into_iter().enumerate() {
            if i == 0 || !own.contains(&crate::transport::replay::key(&request)) {
                rec.add(&request, text.clone());
            }
        }
    }
    rec
}

/// Run `getter` of `vendor`'s driver on the recorded device of one case.
pub async fn run(
    vendor: &str,
    getter: &str,
    files: &BTreeMap<String, String>,
) -> Result<Value, String> {
    let platform = Platform::parse(vendor).ok_or(format!("unknown vendor {vendor:?}"))?;
    let mut target = DeviceTarget::new(format!("replay-{vendor}"), platform, "127.0.0.1");
    target.username = "replay".into();
    target.password = Some(netgw_models::secret::Secret::new("replay"));
    let rec = recording(platform, files);
    let mut driver = crate::registry::replay(&target, rec)
        .await
        .map_err(|e| e.to_string())?;
    let value = match getter {
        "facts" => serde_json::to_value(driver.facts().await.map_err(|e| e.to_string())?),
        "vlans" => serde_json::to_value(driver.observe().await.map_err(|e| e.to_string())?.vlans),
        "links" => serde_json::to_value(driver.observe().await.map_err(|e| e.to_string())?.links),
        "lags" => serde_json::to_value(driver.lag_members().await.map_err(|e| e.to_string())?),
        other => {
            return Err(format!(
                "no conformance getter {other:?} (facts, vlans, links, lags)"
            ));
        }
    };
    let _ = driver.close().await;
    value.map_err(|e| e.to_string())
}
