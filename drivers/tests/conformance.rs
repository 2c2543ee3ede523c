//! The shared driver conformance suite: every case under tests/fixtures/conformance/<vendor>/<getter>/<case>/
//! runs the vendor's real parsers on recorded device outputs and must produce expected.json.
//! `NETGW_REGENERATE=1 cargo test --test conformance` rewrites expected.json from the current output
//! (review the diff before committing it).

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

/// (vendor, getter, minimum cases): fewer means a fixture folder moved or emptied, and the run fails.
const MINIMUM: &[(&str, &str, usize)] = &[
    ("eos", "facts", 11),
    ("eos", "links", 4),
    ("eos", "vlans", 2),
    ("f5", "facts", 5),
    ("f5", "links", 3),
    ("f5", "vlans", 3),
    ("ios", "facts", 117),
    ("ios", "links", 17),
    ("ios", "vlans", 6),
    ("junos", "facts", 15),
    ("junos", "links", 4),
    ("junos", "vlans", 6),
    ("nxos", "facts", 58),
    ("nxos", "links", 5),
    ("nxos", "vlans", 7),
];

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

#[test]
fn every_case_matches_its_expected_result() {
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
        let got = match netgw_drivers::conformance::run(&vendor, &getter, &files) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{}: {e}", dir.display()));
                continue;
            }
        };
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
