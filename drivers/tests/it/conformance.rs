//! The shared driver conformance suite: every case under tests/fixtures/conformance/<vendor>/<getter>/<case>/
//! becomes a recorded device and the vendor's real driver runs on it (`netgw_drivers::conformance`):
//! `facts()` for facts cases, `observe()` for vlans and links cases. The result must equal expected.json,
//! netgw's own reviewed output: a regression check. Agreement with the sources' own expected parses is
//! conformance_sources.rs. `NETGW_REGENERATE=1 cargo test --test conformance` rewrites expected.json from
//! the current output (review the diff before committing it).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn cases() -> Vec<(String, String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
    let mut out = Vec::new();
    for vendor in sorted_dirs(&root) {
        for getter in sorted_dirs(&vendor) {
            for case in sorted_dirs(&getter) {
                out.push((name(&vendor), name(&getter), case));
            }
        }
    }
    out
}

fn name(p: &Path) -> String {
    p.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn sorted_dirs(p: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Cases whose recording lacks a read the driver needs for the getter (a source recorded one command, the
/// driver's `observe()` reads two or three): (case path suffix, what is missing). The driver's answer is
/// then the device's refusal, checked below; the case's outputs stay for the facts they can give.
const INCOMPLETE: &[(&str, &str)] = &[
    (
        "eos/links/",
        "observe() reads `show vlan` with `show interfaces`; these recorded one",
    ),
    (
        "eos/vlans/pyeapi_running_config",
        "observe() reads `show vlan` and `show interfaces` JSON, not the running-config",
    ),
    (
        "f5/links/go_bigip_11.5.1",
        "observe() reads net/vlan with its subcollections; not recorded",
    ),
    (
        "f5/vlans/",
        "observe() reads net/interface with net/vlan; not recorded",
    ),
    (
        "ios/links/",
        "observe() reads `show vlan brief` with `show running-config`; these recorded one",
    ),
    (
        "nxos/facts/napalm_nxapi_interfaces_",
        "NAPALM's NX-API mock has no `show version`: the driver's first `| json` is refused, so it reads text, which is not recorded",
    ),
    (
        "nxos/links/napalm_nxapi_interfaces",
        "NAPALM's NX-API mock has no `show version`: the driver's first `| json` is refused, so it reads text, which is not recorded",
    ),
    (
        "nxos/links/genie_switchport",
        "observe() reads `show interface` first; only the switchport table is recorded",
    ),
    (
        "nxos/links/ntc_",
        "observe() reads `show interface` first; only the switchport table is recorded",
    ),
];

fn incomplete(dir: &Path) -> Option<&'static str> {
    let d = dir.display().to_string();
    INCOMPLETE
        .iter()
        .find(|(c, _)| d.contains(&format!("conformance/{c}")))
        .map(|(_, why)| *why)
}

/// (vendor, getter, minimum cases): fewer means a fixture folder moved or emptied, and the run fails.
const MINIMUM: &[(&str, &str, usize)] = &[
    ("eos", "facts", 52),
    ("eos", "links", 4),
    ("eos", "vlans", 1),
    ("f5", "facts", 15),
    ("f5", "links", 3),
    ("f5", "vlans", 3),
    ("ios", "facts", 140),
    ("ios", "links", 17),
    ("junos", "facts", 41),
    ("junos", "links", 4),
    ("junos", "vlans", 3),
    ("nxos", "facts", 65),
    ("nxos", "links", 5),
    ("nxos", "vlans", 7),
];

/// An incomplete facts recording gives facts without what was not recorded, never invented ones.
fn check_without_interfaces(dir: &Path, v: &serde_json::Value, failures: &mut Vec<String>) {
    if v.get("interfaces").is_some() {
        failures.push(format!(
            "{}: interfaces from a recording without a readable interface table: {v}",
            dir.display()
        ));
    }
}

#[test]
fn every_vendor_and_getter_has_its_minimum_of_cases() {
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (vendor, getter, _) in cases() {
        *counts.entry((vendor, getter)).or_default() += 1;
    }
    let short: Vec<String> = MINIMUM
        .iter()
        .filter_map(|(v, g, min)| {
            let n = counts
                .get(&(v.to_string(), g.to_string()))
                .copied()
                .unwrap_or(0);
            (n < *min).then(|| format!("{v}/{g}: {n} case(s), minimum {min}"))
        })
        .collect();
    assert!(short.is_empty(), "{}", short.join("\n"));
}

#[tokio::test]
async fn every_case_matches_its_expected_result() {
    let regenerate = std::env::var_os("NETGW_REGENERATE").is_some();
    let mut failures = Vec::new();
    let mut count = 0;
    for (vendor, getter, dir) in cases() {
        let mut files = BTreeMap::new();
        for entry in fs::read_dir(&dir).unwrap().filter_map(|e| e.ok()) {
            let n = name(&entry.path());
            if n != "expected.json" && entry.path().is_file() {
                files.insert(n, fs::read_to_string(entry.path()).unwrap());
            }
        }
        let expected_path = dir.join("expected.json");
        let got = netgw_drivers::conformance::run(&vendor, &getter, &files).await;
        if let Some(why) = incomplete(&dir) {
            // The driver must refuse (not invent) what it could not read.
            match got {
                Err(e) if e.contains("not in the recording") => {
                    eprintln!("{}: incomplete recording: {why}", dir.display())
                }
                Err(e) => failures.push(format!("{}: {e}", dir.display())),
                Ok(v) if getter == "facts" => check_without_interfaces(&dir, &v, &mut failures),
                Ok(v) if v == serde_json::json!([]) => {
                    eprintln!("{}: incomplete recording: {why}", dir.display())
                }
                Ok(v) => failures.push(format!(
                    "{}: listed as incomplete ({why}) but the driver answered {v}",
                    dir.display()
                )),
            }
            continue;
        }
        let mut got = match got {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{}: {e}", dir.display()));
                continue;
            }
        };
        // EOS uptime is the device's boot time against the wall clock: not a property of the sample.
        if vendor == "eos"
            && let Some(o) = got.as_object_mut()
        {
            o.remove("uptime");
        }
        count += 1;
        if regenerate {
            fs::write(
                &expected_path,
                serde_json::to_string_pretty(&got).unwrap() + "\n",
            )
            .unwrap();
            continue;
        }
        let expected: serde_json::Value = match fs::read_to_string(&expected_path) {
            Ok(t) => serde_json::from_str(&t)
                .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display())),
            Err(e) => {
                failures.push(format!("{}: {e}", expected_path.display()));
                continue;
            }
        };
        if got != expected {
            failures.push(format!(
                "{}: output differs from expected.json\n got: {}\nwant: {}",
                dir.display(),
                serde_json::to_string(&got).unwrap(),
                serde_json::to_string(&expected).unwrap()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} conformance failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{count} conformance cases passed");
}
