//! Cookbooks synchronized from a Chef server (`--cookbooks server`, src/cookbook/sync.rs) against
//! goiardi, with cookbooks uploaded by a third-party client the way `knife cookbook upload` does it
//! (scripts/peers/chef_upload.py: sandbox, file PUTs, commit, cookbook version PUT). Fails loudly when
//! goiardi or the uploader's venv is missing.

use crate::common;

use common::mem_driver as mem;

use common::Goiardi;
use netgw::cookbook::sync::{CookbookError, CookbookSync};
use netgw::engine::{self, EngineOptions};
use netgw::kind::NodeErrorKind;
use netgw::resolve::{self, ResolveError};
use netgw::store::NodeStore;
use netgw::store::chef::ChefServer;
use netgw::store::local::LocalRepo;
use netgw_labs::lab::{Lab, LabOptions};
use netgw_models::topology::Topology;
use netgw_models::{Environment, Node, NodeName};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

fn uploader() -> PathBuf {
    let root = common::root();
    let py = root.join(".peers/venv-chef-upload/bin/python");
    assert!(
        py.exists(),
        "PEER MISSING: {} does not exist; run `scripts/peers/chef-upload.sh install`",
        py.display()
    );
    py
}

/// Write cookbook NAME VERSION (metadata.json, a recipe, and `files`) and upload it with the
/// third-party client.
fn upload(g: &Goiardi, name: &str, version: &str, deps: Value, files: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    let cb = dir.path().join(name);
    let meta = json!({"name": name, "version": version, "dependencies": deps});
    common::write(&cb, "metadata.json", &meta.to_string());
    common::write(&cb, "recipes/default.yml", "resources: []\n");
    for (path, body) in files {
        common::write(&cb, path, body);
    }
    let script = common::root().join("scripts/peers/chef_upload.py");
    let out = Command::new(uploader())
        .arg(script)
        .args([&g.url, "admin"])
        .arg(&g.admin_key)
        .arg(&cb)
        .arg("--force")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "upload of {name} {version} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn attrs(vlan_name: &str) -> String {
    format!("default:\n  netdev:\n    vlans:\n      '10':\n        name: {vlan_name}\n")
}

async fn node(s: &ChefServer, name: &str, env: &str, run_list: &[&str]) {
    let n = Node::from_json(
        &json!({"name": name, "chef_environment": env, "run_list": run_list}).to_string(),
    )
    .unwrap();
    s.upload_node(&n).await.unwrap();
}

async fn environment(s: &ChefServer, name: &str, constraints: Value) {
    let env = Environment::from_json(
        &json!({"name": name, "cookbook_versions": constraints}).to_string(),
    )
    .unwrap();
    s.upload_environment(&env).await.unwrap();
}

/// An empty cookbook repo: with a sync, nothing may be read from it.
fn empty_repo() -> (tempfile::TempDir, LocalRepo) {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("nodes")).unwrap();
    let repo = LocalRepo::open(d.path()).unwrap();
    (d, repo)
}

fn sync(g: &Goiardi, state: &Path) -> CookbookSync {
    CookbookSync::new(g.server(), state, Duration::from_secs(20), 4)
}

async fn resolve(
    g: &Goiardi,
    sync: &CookbookSync,
    name: &str,
) -> Result<resolve::NodeView, ResolveError> {
    let (_d, repo) = empty_repo();
    let server = g.server();
    let store: &dyn NodeStore = &server;
    resolve::resolve_with(store, &repo, Some(sync), &NodeName::new(name).unwrap()).await
}

/// Converge node sw1 on `dev` with cookbooks from the server, the cache under `state`.
async fn converge_sw1(
    g: &Goiardi,
    state: &Path,
    dev: &Arc<std::sync::Mutex<mem::Device>>,
) -> netgw::report::RunReport {
    let (_d, repo) = empty_repo();
    let opts = EngineOptions {
        cookbook_sync: Some(Arc::new(sync(g, state))),
        ..Default::default()
    };
    let settings = netgw::coordination::Settings {
        state_dir: Some(state.to_owned()),
        ..Default::default()
    };
    let conn = mem::connector(&[("sw1", dev.clone())]);
    let infra = engine::Infra::open(Arc::new(g.server()), repo, conn, &settings);
    engine::converge(&infra, vec![mem::job("sw1")], opts).await
}

fn vlan10(view: &resolve::NodeView) -> Value {
    view.attributes.merged()["netdev"]["vlans"]["10"]["name"].clone()
}

fn versions(sync: &CookbookSync) -> Vec<String> {
    sync.report()
        .versions
        .iter()
        .map(|v| format!("{} {}", v.name, v.version))
        .collect()
}

/// The environment's `cookbook_versions` excludes the newest version; a run-list pin chooses an older
/// one; a dependency arrives through metadata depends and its attribute file loads before the
/// depending cookbook's (Chef's cookbook order).
#[tokio::test(flavor = "multi_thread")]
async fn the_server_chooses_versions_constraints_pins_and_depends() {
    let g = Goiardi::start();
    let s = g.server();
    let base_attrs = "default:\n  base:\n    loaded: true\n  netdev:\n    vlans:\n      '10':\n        name: from-base\n";
    upload(
        &g,
        "base",
        "0.1.0",
        json!({}),
        &[("attributes/default.yml", base_attrs)],
    );
    for (v, vlan) in [
        ("1.0.0", "web-v1"),
        ("1.5.0", "web-v15"),
        ("2.0.0", "web-v2"),
    ] {
        upload(
            &g,
            "net",
            v,
            json!({"base": ">= 0.1.0"}),
            &[("attributes/default.yml", &attrs(vlan))],
        );
    }
    environment(&s, "prod", json!({"net": "< 2.0.0"})).await;
    node(
        &s,
        "constrained",
        "prod",
        &["recipe[net]", "recipe[netdev::vlans]"],
    )
    .await;
    node(&s, "newest", "_default", &["recipe[net]"]).await;
    node(&s, "pinned", "_default", &["recipe[net@1.0.0]"]).await;

    let state = tempfile::tempdir().unwrap();
    let sync = sync(&g, state.path());
    let view = resolve(&g, &sync, "constrained").await.unwrap();
    assert_eq!(vlan10(&view), "web-v15", "newest allowed by < 2.0.0");
    assert_eq!(
        view.attributes.merged()["base"]["loaded"],
        true,
        "dependency's attributes"
    );
    let newest = resolve(&g, &sync, "newest").await.unwrap();
    assert_eq!(vlan10(&newest), "web-v2");
    let pinned = resolve(&g, &sync, "pinned").await.unwrap();
    assert_eq!(vlan10(&pinned), "web-v1");
    assert_eq!(
        versions(&sync),
        ["base 0.1.0", "net 1.0.0", "net 1.5.0", "net 2.0.0"]
    );
    // The cache is in the state directory, never in the repo.
    assert!(sync.cache_dir().starts_with(state.path()));

    // A constraint nothing satisfies: an error naming the environment, a configuration error.
    environment(&s, "impossible", json!({"net": "> 5.0.0"})).await;
    node(&s, "stuck", "impossible", &["recipe[net]"]).await;
    let e = resolve(&g, &sync, "stuck").await.unwrap_err();
    let ResolveError::Cookbooks(c @ CookbookError::Unsatisfiable { .. }) = &e else {
        panic!("{e:?}")
    };
    assert_eq!(c.kind(), NodeErrorKind::Config);
    assert!(e.to_string().contains("environment impossible"), "{e}");
}

/// goiardi's solver applies the environment's constraints only to run-list cookbooks and checks only
/// one constraint per cookbook (src: cookbook/cookbook.go `DependsCookbooks`, `latestMultiConstraint`);
/// Chef Server honours them all. netgw checks the answer and refuses such a choice by name.
#[tokio::test(flavor = "multi_thread")]
async fn a_solution_that_breaks_a_constraint_is_refused() {
    let g = Goiardi::start();
    let s = g.server();
    upload(&g, "base", "0.1.0", json!({}), &[]);
    upload(
        &g,
        "base",
        "0.2.0",
        json!({}),
        &[("attributes/default.yml", "default: {b: 2}\n")],
    );
    upload(&g, "net", "1.0.0", json!({"base": ">= 0.1.0"}), &[]);
    upload(
        &g,
        "net",
        "2.0.0",
        json!({"base": ">= 0.1.0"}),
        &[("attributes/x.yml", "default: {n: 2}\n")],
    );
    environment(&s, "dep", json!({"base": "< 0.2.0"})).await;
    environment(&s, "both", json!({"net": "< 2.0.0"})).await;
    node(&s, "dep1", "dep", &["recipe[net]"]).await;
    node(&s, "both1", "both", &["recipe[net@2.0.0]"]).await;
    let state = tempfile::tempdir().unwrap();
    let sync = sync(&g, state.path());
    let e = resolve(&g, &sync, "dep1").await.unwrap_err().to_string();
    assert!(
        e.contains("chose cookbook base 0.2.0, which the environment's cookbook_versions constraint \"< 0.2.0\" excludes"),
        "{e}"
    );
    let e = resolve(&g, &sync, "both1").await.unwrap_err().to_string();
    assert!(e.contains("chose cookbook net 2.0.0"), "{e}");
    assert_eq!(
        sync.report().files_downloaded,
        0,
        "nothing fetched for a refused answer"
    );
}

/// A whole converge: the device gets the VLAN of the version the environment allows, and the run
/// report lists the cookbook versions used.
#[tokio::test(flavor = "multi_thread")]
async fn a_converge_uses_the_allowed_version_and_reports_it() {
    let g = Goiardi::start();
    let s = g.server();
    upload(
        &g,
        "net",
        "1.0.0",
        json!({}),
        &[("attributes/default.yml", &attrs("web-v1"))],
    );
    upload(
        &g,
        "net",
        "2.0.0",
        json!({}),
        &[("attributes/default.yml", &attrs("web-v2"))],
    );
    environment(&s, "prod", json!({"net": "= 1.0.0"})).await;
    node(&s, "sw1", "prod", &["recipe[net]", "recipe[netdev::vlans]"]).await;
    let state = tempfile::tempdir().unwrap();
    let dev = mem::device();
    let report = converge_sw1(&g, state.path(), &dev).await;
    assert!(!report.any_failed(), "{:?}", report.nodes[0].error);
    let names: Vec<Option<String>> = dev
        .lock()
        .unwrap()
        .vlans
        .iter()
        .map(|v| v.name.clone())
        .collect();
    assert!(names.contains(&Some("web-v1".into())), "{names:?}");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["cookbooks"]["source"], "server");
    assert_eq!(json["nodes"][0]["cookbooks"], json!(["net 1.0.0"]));
    assert_eq!(
        json["cookbooks"]["versions"],
        json!([{"name": "net", "version": "1.0.0", "files": 3}])
    );
    let human = netgw::report::human_summary(&report);
    assert!(human.contains("net 1.0.0"), "{human}");
    // The set this run read is marked used and lists its files' checksums (what pruning keeps).
    let sets = common::walk(state.path());
    assert!(sets.iter().any(|p| p.ends_with(".used")), "{sets:?}");
    assert!(sets.iter().any(|p| p.ends_with(".checksums")), "{sets:?}");
    // `node show` and `expand` with --server see the server's cookbooks as converge does.
    let (repo_dir, _repo) = empty_repo();
    let cli = |args: &[&str]| -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(repo_dir.path())
            .args(["--server", &g.url, "--client-name", "admin", "--client-key"])
            .arg(&g.admin_key)
            .arg("--state-dir")
            .arg(state.path())
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let shown = cli(&["node", "show", "sw1"]);
    assert_eq!(shown["cookbooks"], json!(["net 1.0.0"]), "{shown}");
    assert_eq!(shown["merged"]["netdev"]["vlans"]["10"]["name"], "web-v1");
    let expanded = cli(&["expand", "sw1"]);
    assert_eq!(expanded["cookbooks"], json!(["net 1.0.0"]), "{expanded}");
    assert_eq!(expanded["environment"], "prod");
}

/// The same version re-uploaded with one file changed: the next run downloads that file only.
#[tokio::test(flavor = "multi_thread")]
async fn a_changed_file_is_the_only_one_downloaded_again() {
    let g = Goiardi::start();
    let s = g.server();
    let other = "default:\n  other: 1\n";
    upload(
        &g,
        "net",
        "1.0.0",
        json!({}),
        &[
            ("attributes/default.yml", &attrs("old")),
            ("attributes/other.yml", other),
        ],
    );
    node(&s, "sw1", "_default", &["recipe[net]"]).await;
    let state = tempfile::tempdir().unwrap();

    let first = sync(&g, state.path());
    assert_eq!(vlan10(&resolve(&g, &first, "sw1").await.unwrap()), "old");
    let r = first.report();
    assert_eq!(
        (r.files_downloaded, r.files_cached),
        (4, 0),
        "metadata.json, recipe, 2 attribute files"
    );

    let again = sync(&g, state.path());
    assert_eq!(vlan10(&resolve(&g, &again, "sw1").await.unwrap()), "old");
    let r = again.report();
    assert_eq!(
        (r.files_downloaded, r.files_cached),
        (0, 4),
        "nothing changed"
    );

    upload(
        &g,
        "net",
        "1.0.0",
        json!({}),
        &[
            ("attributes/default.yml", &attrs("new")),
            ("attributes/other.yml", other),
        ],
    );
    let changed = sync(&g, state.path());
    assert_eq!(vlan10(&resolve(&g, &changed, "sw1").await.unwrap()), "new");
    let r = changed.report();
    assert_eq!(
        (r.files_downloaded, r.files_cached),
        (1, 3),
        "only the changed file"
    );
}

/// 100 nodes of one run share every download: half in an environment that keeps net 1.0.0, half on
/// net 2.0.0, so two cookbook sets share files (base, and the recipe all three versions have).
#[tokio::test(flavor = "multi_thread")]
async fn a_hundred_nodes_download_each_file_once() {
    let g = Goiardi::start();
    let s = g.server();
    upload(&g, "base", "0.1.0", json!({}), &[]);
    for (v, vlan) in [("1.0.0", "web-v1"), ("2.0.0", "web-v2")] {
        upload(
            &g,
            "net",
            v,
            json!({"base": "= 0.1.0"}),
            &[("attributes/default.yml", &attrs(vlan))],
        );
    }
    environment(&s, "old", json!({"net": "= 1.0.0"})).await;
    let names: Vec<String> = (0..100).map(|i| format!("sw{i:03}")).collect();
    for (i, n) in names.iter().enumerate() {
        let env = if i % 2 == 0 { "old" } else { "_default" };
        node(&s, n, env, &["recipe[net]"]).await;
    }
    let state = tempfile::tempdir().unwrap();
    let sync = Arc::new(sync(&g, state.path()));
    let views = futures::future::join_all(names.iter().map(|n| {
        let (g, sync) = (&g, sync.clone());
        async move { resolve(g, &sync, n).await }
    }))
    .await;
    for (i, v) in views.into_iter().enumerate() {
        let want = if i % 2 == 0 { "web-v1" } else { "web-v2" };
        assert_eq!(vlan10(&v.unwrap()), want);
    }
    let r = sync.report();
    // Distinct checksums: base's metadata.json; the recipe (the same bytes in all three); each net
    // version's metadata.json and attribute file.
    assert_eq!(r.files_downloaded, 6);
    assert_eq!(r.files_cached, 0);
    assert_eq!(versions(&sync), ["base 0.1.0", "net 1.0.0", "net 2.0.0"]);
}

/// Two runs at once on one cache (two syncs: what two processes share is the directory): both get
/// every file right, and no temporary is left behind.
#[tokio::test(flavor = "multi_thread")]
async fn two_runs_at_once_share_the_cache_safely() {
    let g = Goiardi::start();
    let s = g.server();
    let big = format!("default:\n  pad: '{}'\n", "x".repeat(200_000));
    upload(
        &g,
        "net",
        "1.0.0",
        json!({}),
        &[
            ("attributes/default.yml", &attrs("web")),
            ("attributes/pad.yml", &big),
        ],
    );
    let names: Vec<String> = (0..10).map(|i| format!("sw{i}")).collect();
    for n in &names {
        node(&s, n, "_default", &["recipe[net]"]).await;
    }
    let state = tempfile::tempdir().unwrap();
    let (a, b) = (sync(&g, state.path()), sync(&g, state.path()));
    let (ra, rb) = tokio::join!(
        futures::future::join_all(names.iter().map(|n| resolve(&g, &a, n))),
        futures::future::join_all(names.iter().map(|n| resolve(&g, &b, n)))
    );
    for v in ra.into_iter().chain(rb) {
        let v = v.unwrap();
        assert_eq!(vlan10(&v), "web");
        assert_eq!(
            v.attributes.merged()["pad"].as_str().map(str::len),
            Some(200_000)
        );
    }
    let (da, db) = (a.report().files_downloaded, b.report().files_downloaded);
    assert!((4..=8).contains(&(da + db)), "{da} + {db}");
    let leftovers: Vec<PathBuf> = common::walk(state.path())
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A file whose stored content no longer matches its checksum, and a file the server lost: errors
/// naming cookbook, version and file, raised before any device is contacted.
#[tokio::test(flavor = "multi_thread")]
async fn bad_or_missing_files_are_named_and_never_used() {
    let g = Goiardi::start();
    let s = g.server();
    let body = attrs("web");
    upload(
        &g,
        "net",
        "1.0.0",
        json!({}),
        &[("attributes/default.yml", &body)],
    );
    node(
        &s,
        "sw1",
        "_default",
        &["recipe[net]", "recipe[netdev::vlans]"],
    )
    .await;
    let sum = md5_hex(body.as_bytes());
    let stored = g.dir.path().join("files").join(&sum);
    assert!(
        stored.exists(),
        "goiardi keeps file contents in its file store dir"
    );

    std::fs::write(&stored, "default: {}\n").unwrap();
    let state = tempfile::tempdir().unwrap();
    let dev = mem::device();
    let report = converge_sw1(&g, state.path(), &dev).await;
    let n = &report.nodes[0];
    let e = n.error.clone().unwrap_or_default();
    assert!(
        e.contains("cookbook net 1.0.0, file attributes/default.yml"),
        "{e}"
    );
    assert!(e.contains("checksum mismatch"), "{e}");
    assert_eq!(n.error_kind, Some(NodeErrorKind::Server));
    assert_eq!(dev.lock().unwrap().commits, 0);
    assert!(
        !state.path().join("cookbooks").exists()
            || !common::walk(&state.path().join("cookbooks"))
                .iter()
                .any(|p| p.ends_with(&sum)),
        "a mismatching file is never cached"
    );

    std::fs::remove_file(&stored).unwrap();
    let e = resolve(&g, &sync(&g, state.path()), "sw1")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cookbook net 1.0.0, file attributes/default.yml"),
        "{e}"
    );
    assert!(e.contains("HTTP 404"), "{e}");
}

fn md5_hex(bytes: &[u8]) -> String {
    use md5::Digest;
    md5::Md5::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `netgw node show --server` under `umask 000`: the cookbook cache it creates is 0700/0600 all
/// through; a cache another user owns or others can write is refused naming it, before anything of
/// it is read. (Another user injecting attributes into a umask-made cache was the attack.)
#[tokio::test(flavor = "multi_thread")]
async fn the_cache_is_private_whatever_the_umask_and_a_writable_one_is_refused() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let g = Goiardi::start();
    let s = g.server();
    upload(
        &g,
        "net",
        "1.0.0",
        json!({}),
        &[("attributes/default.yml", &attrs("from-server"))],
    );
    node(&s, "sw1", "_default", &["recipe[net]"]).await;
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("state");
    std::fs::create_dir_all(d.path().join("repo/nodes")).unwrap();
    let show = || {
        let o = Command::new("sh")
            .arg("-c")
            .arg("umask 000; exec \"$@\"")
            .arg("sh")
            .arg(env!("CARGO_BIN_EXE_netgw"))
            .args([
                "node", "show", "sw1", "--format", "json", "--server", &g.url,
            ])
            .args(["--client-name", "admin", "--client-key"])
            .arg(&g.admin_key)
            .arg("--state-dir")
            .arg(&state)
            .arg("--repo")
            .arg(d.path().join("repo"))
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (out, err) = show();
    assert!(out.contains("from-server"), "{out}\n{err}");
    let mut seen = 0;
    let mut todo = vec![state.clone()];
    while let Some(p) = todo.pop() {
        let m = std::fs::symlink_metadata(&p).unwrap();
        let want = if m.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(m.mode() & 0o777, want, "{}", p.display());
        seen += 1;
        if m.is_dir() {
            todo.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        }
    }
    assert!(seen > 8, "{seen}");
    // The attack's precondition: a cache directory others can write into. Refused, naming it.
    let cache = std::fs::read_dir(state.join("cookbooks"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::set_permissions(cache.join("sets"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let (out, err) = show();
    assert!(!out.contains("from-server"), "{out}");
    assert!(
        err.contains(&format!("{}: mode 0777", cache.join("sets").display())),
        "{err}"
    );
    // Control: made private again, the same cache is used.
    std::fs::set_permissions(cache.join("sets"), std::fs::Permissions::from_mode(0o700)).unwrap();
    let (out, err) = show();
    assert!(out.contains("from-server"), "{out}\n{err}");
}

/// Store data bag item `item` in `bag` with the third-party client, as `knife data bag from file`.
fn data_bag_item(g: &Goiardi, bag: &str, item: Value) {
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "item.json", &item.to_string());
    let out = Command::new(uploader())
        .arg(common::root().join("scripts/peers/chef_upload.py"))
        .args([&g.url, "admin"])
        .arg(&g.admin_key)
        .args(["--data-bag", bag])
        .arg(dir.path().join("item.json"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "data bag item {bag}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// With cookbooks from the server, recipes read the server's data bags (stored by a third-party
/// client), not the local repo's: the device gets the item's VLANs; a missing bag or item and an
/// encrypted item are refused naming them and the recipe's line.
#[tokio::test(flavor = "multi_thread")]
async fn recipes_read_the_servers_data_bags() {
    let g = Goiardi::start();
    let s = g.server();
    let vlans = "item = data_bag_item('vlans', 'sw1')\n\
                 item['vlans'].each do |v|\n  netdev_vlan v['name'] do\n    vlan_id v['id']\n  end\nend\n\
                 names = data_bag('vlans')\n\
                 netdev_vlan names.join('-') do\n  vlan_id 300 + data_bag('vlans').length\nend\n";
    upload(
        &g,
        "net",
        "1.0.0",
        json!({}),
        &[
            ("recipes/vlans.rb", vlans),
            ("recipes/no_item.rb", "x = data_bag_item('vlans', 'sw9')\n"),
            ("recipes/no_bag.rb", "x = data_bag('nosuch')\n"),
            ("recipes/secret.rb", "x = data_bag_item('creds', 'sw1')\n"),
        ],
    );
    let item =
        json!({"id": "sw1", "vlans": [{"id": 210, "name": "blue"}, {"id": 220, "name": "green"}]});
    data_bag_item(&g, "vlans", item);
    data_bag_item(&g, "vlans", json!({"id": "sw2", "vlans": []}));
    let secret = json!({"id": "sw1", "password": {"encrypted_data": "abc", "iv": "x", "version": 1, "cipher": "aes-256-cbc"}});
    data_bag_item(&g, "creds", secret);
    node(&s, "sw1", "_default", &["recipe[net::vlans]"]).await;
    let state = tempfile::tempdir().unwrap();
    let dev = mem::device();
    let report = converge_sw1(&g, state.path(), &dev).await;
    assert!(!report.any_failed(), "{:?}", report.nodes[0].error);
    let got: Vec<(u16, Option<String>)> = dev
        .lock()
        .unwrap()
        .vlans
        .iter()
        .map(|v| (v.id.get(), v.name.clone()))
        .collect();
    for want in [(210, "blue"), (220, "green"), (302, "sw1-sw2")] {
        assert!(got.contains(&(want.0, Some(want.1.into()))), "{got:?}");
    }
    // Nothing of the items' values is kept on disk.
    for p in common::walk(state.path()) {
        let text = std::fs::read(&p).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&text).contains("green"), "{p:?}");
    }
    // The binary with --server converges a netgw-lab EOS switch from the same item.
    let topo =
        Topology::parse("name: databags\ntopology:\n  nodes:\n    eos1: {kind: arista_ceos}\n")
            .unwrap();
    let lab = Lab::start(&topo, LabOptions::default()).await.unwrap();
    let d = tempfile::tempdir().unwrap();
    lab.write_inventory(&d.path().join("inventory.yml"))
        .unwrap();
    std::fs::create_dir_all(d.path().join("repo/nodes")).unwrap();
    node(&s, "eos1", "_default", &["recipe[net::vlans]"]).await;
    let mut cli = Command::new(env!("CARGO_BIN_EXE_netgw"));
    cli.arg("--repo")
        .arg(d.path().join("repo"))
        .args(["--server", &g.url, "--client-name", "admin", "--client-key"])
        .arg(&g.admin_key)
        .arg("--state-dir")
        .arg(d.path().join("state"))
        .args(["converge", "--format", "json", "--inventory"])
        .arg(d.path().join("inventory.yml"));
    let out = tokio::task::spawn_blocking(move || cli.output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let on_lab = format!("{:?}", lab.node("eos1").unwrap().device.state().vlans);
    assert!(
        on_lab.contains("\"blue\"") && on_lab.contains("\"green\""),
        "{on_lab}"
    );
    let refused = [
        (
            "no_item",
            "no_item.rb:1",
            "no data bag item vlans/sw9 on the Chef server",
        ),
        (
            "no_bag",
            "no_bag.rb:1",
            "no data bag \"nosuch\" on the Chef server",
        ),
        ("secret", "secret.rb:1", "is an encrypted data bag item"),
    ];
    for (recipe, line, why) in refused {
        node(&s, "sw2", "_default", &[&format!("recipe[net::{recipe}]")]).await;
        let sync = sync(&g, state.path());
        let e = resolve(&g, &sync, "sw2").await.unwrap_err().to_string();
        assert!(e.contains(line) && e.contains(why), "{recipe}: {e}");
    }
}

/// Encrypted items on the Chef server, made by Chef's own encryptor in its formats 1, 2 and 3 and
/// stored as `knife data bag from file --secret-file` stores them: the binary with --server and
/// --encrypted-data-bag-secret converges a netgw-lab switch from their decrypted values; with a
/// wrong secret it fails naming the item and key (and the URL), never the secret.
#[tokio::test(flavor = "multi_thread")]
async fn recipes_decrypt_the_servers_encrypted_data_bag_items() {
    let g = Goiardi::start();
    let s = g.server();
    let recipe = "[data_bag_item('creds', 'v1'), data_bag_item('creds', 'v2'),\n\
                  Chef::EncryptedDataBagItem.load('creds', 'v3')].each do |item|\n\
                  netdev_vlan item['name'] do\n    vlan_id item['vlan']\n  end\nend\n";
    upload(&g, "net", "1.0.0", json!({}), &[("recipes/enc.rb", recipe)]);
    let d = tempfile::tempdir().unwrap();
    let (secret, wrong) = (d.path().join("secret"), d.path().join("wrong"));
    std::fs::write(&secret, "server-Secret-42\n").unwrap();
    std::fs::write(&wrong, "server-Secret-43\n").unwrap();
    for v in 1..=3u16 {
        let item = json!({"id": format!("v{v}"), "name": format!("srv_{v}"), "vlan": 400 + v});
        data_bag_item(&g, "creds", common::chef_encrypt(v as u8, &secret, &item));
    }
    let topo =
        Topology::parse("name: encbags\ntopology:\n  nodes:\n    eos1: {kind: arista_ceos}\n")
            .unwrap();
    let lab = Lab::start(&topo, LabOptions::default()).await.unwrap();
    lab.write_inventory(&d.path().join("inventory.yml"))
        .unwrap();
    std::fs::create_dir_all(d.path().join("repo/nodes")).unwrap();
    node(&s, "eos1", "_default", &["recipe[net::enc]"]).await;
    let converge = |secret: &Path| {
        let mut cli = Command::new(env!("CARGO_BIN_EXE_netgw"));
        cli.arg("--repo")
            .arg(d.path().join("repo"))
            .args(["--server", &g.url, "--client-name", "admin", "--client-key"])
            .arg(&g.admin_key)
            .arg("--state-dir")
            .arg(d.path().join("state"))
            .arg("--encrypted-data-bag-secret")
            .arg(secret)
            .args(["converge", "--format", "json", "--inventory"])
            .arg(d.path().join("inventory.yml"));
        tokio::task::spawn_blocking(move || {
            let o = cli.output().unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            (o.status.success(), text)
        })
    };
    let (ok, text) = converge(&secret).await.unwrap();
    assert!(ok, "{text}");
    let vlans = lab.node("eos1").unwrap().device.state().vlans.clone();
    for v in 1..=3u16 {
        assert_eq!(
            vlans.get(&(400 + v)),
            Some(&format!("srv_{v}")),
            "{vlans:?}"
        );
    }
    assert!(!text.contains("server-Secret"), "{text}");
    for p in common::walk(&d.path().join("state")) {
        let body = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
        assert!(!body.contains("server-Secret"), "{p:?}");
    }
    let (ok, text) = converge(&wrong).await.unwrap();
    assert!(!ok, "{text}");
    assert!(
        text.contains("enc.rb:1")
            && text.contains("/data/creds/v1")
            && text.contains("data bag item creds/v1, key ")
            && text.contains("cannot decrypt"),
        "{text}"
    );
    assert!(!text.contains("server-Secret"), "{text}");
}
