//! Upgrading from netgw 0.3: today's netgw over the state and databases netgw 0.3's own binaries wrote
//! (tests/fixtures/release-0.3, README.md there: the commands that made them). The devices are today's
//! netgw-lab with the fixture's topology, each rebuilt to the configuration its simulated device had
//! when 0.3's gateway was killed (`devices/NODE.cfg`, read from the device then).
//!
//! * a half-applied change (a converge SIGKILLed between two lines of its commit) is restored: the
//!   device ends exactly as before the change;
//! * an open network-wide transaction (record `staged`, one member committed, one committing) is
//!   undone on every member, as its record says, and closed;
//! * the current state 0.3 saved is read (`node show`, `drift`) and rewritten in today's format;
//! * the SQLite and PostgreSQL serve histories are migrated and their runs listed by the API; retention
//!   on the migrated PostgreSQL history keeps exactly the newest run it is told to, and by age none;
//! * an entry in a format newer than this netgw reads is refused, and its device left alone.

use crate::common;

use netgw_labs::lab::{Lab, LabOptions};
use netgw_labs::sim::state::{ConfigSession, Dialect};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "upgrade-test-token";

/// The fixture's runs are as old as the fixture: kept whenever the test runs.
const KEEP_ALL: &str = "retention_days: 36500\n";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/release-0.3")
}

fn fixture(rel: &str) -> String {
    std::fs::read_to_string(fixtures().join(rel)).unwrap()
}

/// The lines of a device's configuration that its state holds (what `show running-config` prints
/// around them, its header, is not configuration).
fn config_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim_end)
        .skip_while(|l| !l.starts_with("hostname"))
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

fn running(lab: &Lab, node: &str) -> Vec<String> {
    let n = lab.node(node).unwrap();
    config_lines(&n.device.state().running_config(Dialect::Ios))
}

/// Put `node` in the state 0.3's lab had at the kill: its saved configuration applied line by line,
/// as a console would, then checked line for line.
fn rebuild(lab: &Lab, node: &str) {
    let saved = config_lines(&fixture(&format!("devices/{node}.cfg")));
    {
        let n = lab.node(node).unwrap();
        let mut st = n.device.state();
        let mut session = ConfigSession::new(Dialect::Ios);
        for line in saved.iter().filter(|l| *l != "end") {
            session
                .apply(&mut st, line)
                .unwrap_or_else(|e| panic!("{node}: {line:?}: {e:?}"));
        }
    }
    assert_eq!(
        running(lab, node),
        saved,
        "{node} rebuilt as 0.3's lab had it"
    );
}

struct Env {
    _rt: tokio::runtime::Runtime,
    lab: Lab,
    dir: tempfile::TempDir,
}

impl Env {
    /// The fixture's lab, repo and state directory (0.3's files where a run keeps them for this repo).
    fn start() -> Env {
        let rt = common::runtime();
        let (lab, dir) = rt.block_on(common::start_lab(
            &fixture("lab.clab.yml"),
            LabOptions::default(),
        ));
        let repo = dir.path().join("repo");
        copy_dir(&fixtures().join("repo"), &repo);
        let state = netgw::state::repo_dir(&dir.path().join("state"), &repo);
        copy_dir(&fixtures().join("state"), &state);
        Env { _rt: rt, lab, dir }
    }

    fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    fn state(&self) -> PathBuf {
        netgw::state::repo_dir(&self.dir.path().join("state"), &self.repo())
    }

    /// `netgw ARGS [--inventory] --format json` on the fixture's repo and state: (exit code, report).
    fn netgw(&self, args: &[&str]) -> (i32, Value) {
        let d = self.dir.path();
        let mut c = Command::new(env!("CARGO_BIN_EXE_netgw"));
        c.arg("--repo").arg(self.repo()).args(args);
        // Every command but `node show` reaches devices.
        if args[0] != "node" {
            c.arg("--inventory").arg(d.join("inventory.yml"));
        }
        c.args(["--format", "json"])
            .env("NETGW_STATE_DIR", d.join("state"))
            .env_remove("NETGW_LOCK_DIR")
            .stdin(Stdio::null());
        let (code, v, err) = common::run_json(&mut c);
        assert!(v.is_object(), "{args:?}: no JSON report: {err}");
        (code, v)
    }
}

/// Copy a tree, private as netgw keeps its state (directories 0700, files 0600).
fn copy_dir(from: &Path, to: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(to).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o700)).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
            std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
    }
}

#[test]
fn a_half_applied_change_of_0_3_is_restored_exactly() {
    let env = Env::start();
    let before = running(&env.lab, "ios1");
    rebuild(&env.lab, "ios1");
    let killed = running(&env.lab, "ios1");
    let entry: Value = serde_json::from_str(&fixture("state/journal/ios1.json")).unwrap();
    assert!(entry.get("format").is_none(), "0.3 wrote no format field");
    let vlans = entry["vlans"].as_array().unwrap().len();
    let landed = entry["vlans"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| killed.iter().any(|l| l == &format!("vlan {}", v[0])))
        .count();
    assert!(
        killed != before && landed < vlans,
        "the fixture is half-applied: {landed} of {vlans} VLANs\n{killed:#?}"
    );
    let (code, report) = env.netgw(&["converge", "--why-run", "ios1"]);
    assert_eq!(code, 0, "{report:#}");
    let node = &report["nodes"][0];
    assert_eq!(node["recovered"]["found"], "partial", "{report:#}");
    assert_eq!(node["recovered"]["run_id"], entry["run_id"], "{report:#}");
    assert_eq!(
        running(&env.lab, "ios1"),
        before,
        "exactly as before the change"
    );
    assert!(!env.state().join("journal/ios1.json").exists());
}

#[test]
fn an_open_transaction_of_0_3_is_undone_on_every_member_and_closed() {
    let env = Env::start();
    let before = [running(&env.lab, "ios2"), running(&env.lab, "ios3")];
    rebuild(&env.lab, "ios2");
    rebuild(&env.lab, "ios3");
    let tx_dir = env.state().join("journal/tx");
    let record_file = std::fs::read_dir(&tx_dir).unwrap().next().unwrap().unwrap();
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(record_file.path()).unwrap()).unwrap();
    assert_eq!(record["phase"], "staged", "{record:#}");
    assert_eq!(record["members"], serde_json::json!(["ios2", "ios3"]));
    assert!(running(&env.lab, "ios2") != before[0], "ios2 had committed");
    // A why-run over one member recovers the whole transaction.
    let (code, report) = env.netgw(&["converge", "--why-run", "ios2"]);
    assert_eq!(code, 0, "{report:#}");
    let tx = &report["nodes"][0]["recovered"]["transaction"];
    assert_eq!(tx["id"], record["id"], "{report:#}");
    assert_eq!(tx["direction"], "back", "{report:#}");
    for (i, n) in ["ios2", "ios3"].iter().enumerate() {
        assert_eq!(running(&env.lab, n), before[i], "{n} exactly as before");
        assert!(
            !env.state().join(format!("journal/{n}.json")).exists(),
            "{n}"
        );
    }
    assert!(!record_file.path().exists(), "the transaction is closed");
}

#[test]
fn current_state_of_0_3_is_read_and_rewritten_in_todays_format() {
    let env = Env::start();
    rebuild(&env.lab, "ios4");
    let file = env.state().join("current/ios4.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(saved.get("format").is_none(), "0.3 wrote no format field");
    let (code, shown) = env.netgw(&["node", "show", "ios4"]);
    assert_eq!(code, 0, "{shown:#}");
    assert_eq!(
        shown["current"]["automatic"], saved["automatic"],
        "node show reads 0.3's current state as it is"
    );
    let (code, drift) = env.netgw(&["drift", "ios4"]);
    assert_eq!(code, 0, "no drift: {drift:#}");
    let (code, report) = env.netgw(&["converge", "ios4"]);
    assert_eq!(code, 0, "{report:#}");
    let now: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(now["format"], 2, "rewritten in today's format");
    assert_eq!(now["name"], "ios4");
}

/// `netgw serve` on `history` (a config line: `db: ...` or `database: ...`) with the fixture's repo.
fn serve(env: &Env, history: &str, extra: &str) -> (std::process::Child, String) {
    let d = env.dir.path();
    common::write(
        d,
        "serve.yml",
        &format!(
            "inventory: inventory.yml\nrepo: repo\n{history}\n{extra}shutdown_grace_secs: 5\ntokens:\n  - {{name: ci, sha256: {}, roles: [read]}}\n",
            netgw::api::auth::token_hash_hex(TOKEN),
        ),
    );
    common::spawn_serve(&d.join("serve.yml"), &[], &d.join("serve.log"))
}

fn get(base: &str, path: &str) -> Value {
    let rt = common::runtime();
    rt.block_on(async {
        let r = reqwest::Client::new()
            .get(format!("{base}{path}"))
            .bearer_auth(TOKEN)
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{path}: {}", r.status());
        r.json().await.unwrap()
    })
}

fn stop(mut child: std::process::Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The runs a history dump holds, newest first (their ids, from its `INSERT INTO runs` lines).
fn dumped_runs(dump: &str, table_prefix: &str) -> Vec<String> {
    let mut ids: Vec<String> = dump
        .lines()
        .filter(|l| l.starts_with(table_prefix))
        .filter_map(|l| l.split('\'').nth(1).map(str::to_owned))
        .collect();
    ids.reverse();
    ids
}

/// The runs serve lists, and each one's node results.
fn listed(base: &str) -> Vec<String> {
    let runs = get(base, "/v1/runs?limit=100");
    let runs = runs["runs"]
        .as_array()
        .unwrap_or_else(|| panic!("{runs:#}"));
    runs.iter()
        .map(|r| {
            let id = r["run_id"]
                .as_str()
                .unwrap_or_else(|| panic!("{r:#}"))
                .to_owned();
            let one = get(base, &format!("/v1/runs/{id}"));
            assert_eq!(one["nodes"], serde_json::json!(["ios4"]), "{one:#}");
            assert!(one["report"]["nodes"][0]["status"].is_string(), "{one:#}");
            id
        })
        .collect()
}

#[test]
fn the_sqlite_history_of_0_3_is_migrated_and_its_runs_listed() {
    let env = Env::start();
    let dump = fixture("history.sqlite.sql");
    assert!(dump.starts_with("PRAGMA user_version = 1;"), "0.3's schema");
    let db = env.dir.path().join("history.db");
    {
        // As the sqlite3 shell restores a dump: tables in its order, foreign keys checked after.
        let c = rusqlite::Connection::open(&db).unwrap();
        c.pragma_update(None, "foreign_keys", false).unwrap();
        c.execute_batch(&dump).unwrap();
    }
    let want = dumped_runs(&dump, "INSERT INTO \"runs\"");
    assert_eq!(want.len(), 3, "{dump}");
    let (child, base) = serve(&env, &format!("db: {}", db.display()), KEEP_ALL);
    assert_eq!(listed(&base), want);
    stop(child);
    let c = rusqlite::Connection::open(&db).unwrap();
    let v: i64 = c
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, 2);
}

#[test]
fn the_postgres_history_of_0_3_is_migrated_its_runs_listed_and_retention_keeps_the_newest() {
    let env = Env::start();
    let pg = common::Postgres::start();
    let dump = fixture("postgres.sql");
    let restore = Command::new("psql")
        .args(["-v", "ON_ERROR_STOP=1", "-q", "-d", &pg.url, "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        restore
            .stdin
            .as_ref()
            .unwrap()
            .write_all(dump.as_bytes())
            .unwrap();
    }
    let out = restore.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = dumped_runs(&dump, "INSERT INTO public.runs ");
    assert_eq!(want.len(), 3, "{dump}");
    let database = format!("database: {}", pg.url);
    let (child, base) = serve(&env, &database, KEEP_ALL);
    assert_eq!(listed(&base), want);
    stop(child);
    let (child, base) = serve(&env, &database, &format!("retention: 1\n{KEEP_ALL}"));
    assert_eq!(
        listed(&base),
        want[..1],
        "retention at start keeps the newest run only"
    );
    stop(child);
    // By age: the run ended long before the last 10 seconds.
    let (child, base) = serve(&env, &database, "retention_days: 0.0001\n");
    assert!(listed(&base).is_empty(), "retention by age at start");
    stop(child);
    let psql = |sql: &str| {
        let out = Command::new("psql")
            .args(["-tA", "-d", &pg.url, "-c", sql])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    assert_eq!(
        psql("SELECT max(version) FROM netgw_schema_migrations"),
        "8"
    );
}

/// A journal entry a newer netgw wrote is refused, naming the file and both versions; the device is
/// left as it is (never recovered from a misread entry).
#[test]
fn a_journal_entry_of_a_newer_netgw_is_refused_and_the_device_left_alone() {
    let env = Env::start();
    rebuild(&env.lab, "ios1");
    let killed = running(&env.lab, "ios1");
    let path = env.state().join("journal/ios1.json");
    let mut entry: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    entry["format"] = 99.into();
    std::fs::write(&path, entry.to_string()).unwrap();
    let (code, report) = env.netgw(&["converge", "--why-run", "ios1"]);
    assert_ne!(code, 0, "{report:#}");
    let text = report.to_string();
    for want in [
        path.display().to_string().as_str(),
        "intent journal entry format 99",
        "this netgw reads (format 2)",
        "upgrade netgw",
    ] {
        assert!(text.contains(want), "{want:?} missing: {report:#}");
    }
    assert_eq!(running(&env.lab, "ios1"), killed, "the device is untouched");
    assert!(
        path.exists(),
        "the entry is kept for the netgw that reads it"
    );
}
