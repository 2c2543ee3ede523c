//! The status page over plain HTTP (no browser), against a real `netgw serve` and netgw-lab: the
//! login and its cookie, roles, CSRF on every button, and a device's hostile text (a commit error
//! carrying `<script>`) shown as text; the last link check kept across a restart and fed by an
//! atomic run's `check_links`; containerlab's `topology-data.json` drawn.

use crate::common;
use crate::common::ui_lab;

use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use std::time::{Duration, Instant};
use ui_lab::{OPS, UiLab, UiServe, VIEWER};

const HOSTILE: &str = "<script>alert('pwned')</script><img src=x onerror=alert(1)>";

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// The sign-in form as a browser loads it: its `netgw_login` cookie (`name=value`) and the same
/// value in the form's hidden `login` field.
async fn login_form(base: &str) -> (String, String) {
    let r = client()
        .get(format!("{base}/ui/login"))
        .send()
        .await
        .unwrap();
    let set = r.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    let pair = set.split(';').next().unwrap().to_owned();
    assert!(pair.starts_with("netgw_login="), "{set}");
    let page = r.text().await.unwrap();
    let at = page
        .find(r#"name="login" value=""#)
        .expect("the form's login field")
        + 20;
    let value = page[at..page[at..].find('"').unwrap() + at].to_owned();
    (pair, value)
}

/// POST the sign-in form with `token`, as loaded by [`login_form`].
async fn post_login(base: &str, token: &str) -> reqwest::Response {
    let (pair, value) = login_form(base).await;
    client()
        .post(format!("{base}/ui/login"))
        .header(COOKIE, pair)
        .form(&[("login", value.as_str()), ("token", token)])
        .send()
        .await
        .unwrap()
}

/// Sign in with `token`: the session cookie (`name=value`) and its Set-Cookie header whole.
pub(crate) async fn sign_in(base: &str, token: &str) -> (String, String) {
    let r = post_login(base, token).await;
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()[LOCATION], "/ui/runs");
    let set = r
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .find(|v| v.starts_with("netgw_session="))
        .unwrap();
    let pair = set.split(';').next().unwrap().to_owned();
    (pair, set)
}

pub(crate) async fn get(base: &str, cookie: &str, path: &str) -> (StatusCode, String) {
    let r = client()
        .get(format!("{base}{path}"))
        .header(COOKIE, cookie)
        .send()
        .await
        .unwrap();
    (r.status(), r.text().await.unwrap())
}

pub(crate) async fn post(
    base: &str,
    cookie: &str,
    path: &str,
    form: &[(&str, &str)],
) -> reqwest::Response {
    client()
        .post(format!("{base}{path}"))
        .header(COOKIE, cookie)
        .form(form)
        .send()
        .await
        .unwrap()
}

/// The CSRF token a page's forms carry.
pub(crate) fn csrf(page: &str) -> String {
    let at = page
        .find(r#"name="csrf" value=""#)
        .expect("a form with a CSRF token");
    let rest = &page[at + r#"name="csrf" value=""#.len()..];
    rest[..rest.find('"').unwrap()].to_owned()
}

/// The run's page once the run ended by itself, however its nodes did.
async fn wait_ended(base: &str, cookie: &str, run: &str) -> String {
    let t = Instant::now();
    loop {
        let (s, page) = get(base, cookie, run).await;
        assert_eq!(s, StatusCode::OK, "{page}");
        let ended = ["finished", "finished_with_failures", "failed"]
            .iter()
            .any(|st| page.contains(&format!(r#"class="status st-{st}" id="run-status""#)));
        if ended {
            return page;
        }
        assert!(t.elapsed() < Duration::from_secs(120), "{page}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[test]
fn login_roles_csrf_and_escaping_of_device_text() {
    let lab = UiLab::start(vec![(
        "leaf2".into(),
        "reject-commit".into(),
        HOSTILE.into(),
    )]);
    let base = lab.base.clone();
    lab.rt.block_on(async {
        // Not signed in: to the login form. A wrong token: the form again, 401, no cookie.
        let r = client()
            .get(format!("{base}/ui/runs"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::SEE_OTHER);
        assert_eq!(r.headers()[LOCATION], "/ui/login");
        let r = post_login(&base, "wrong-token").await;
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert!(
            !r.headers()
                .get_all(SET_COOKIE)
                .iter()
                .any(|v| v.to_str().unwrap().starts_with("netgw_session=")),
            "no session for a wrong token"
        );
        let page = r.text().await.unwrap();
        assert!(
            page.contains("That token is not accepted.") && page.contains(r#"name="token""#),
            "{page}"
        );
        // A cookie with no session behind it (a made-up id, or the token itself) is refused too.
        let (s, page) = get(&base, "netgw_session=d3Jvbmc", "/ui/nodes").await;
        assert_eq!(s, StatusCode::UNAUTHORIZED);
        assert!(page.contains("sign in again"), "{page}");
        // Login CSRF: a form posted from another site has the field but not the cookie (SameSite).
        let (_, value) = login_form(&base).await;
        let r = client()
            .post(format!("{base}/ui/login"))
            .form(&[("login", value.as_str()), ("token", OPS)])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        assert!(
            r.text()
                .await
                .unwrap()
                .contains("did not come from this page")
        );

        // The cookie: HttpOnly, SameSite=Strict, scoped to /ui, not Secure on plain HTTP, and not the
        // token in clear.
        let (ops, set) = sign_in(&base, OPS).await;
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict") && set.contains("Path=/ui"),
            "{set}"
        );
        assert!(!set.contains("Secure") && !set.contains(OPS), "{set}");

        // Every page answers, with the headers that keep other origins' code out.
        for path in ["/ui/runs", "/ui/nodes", "/ui/nodes/leaf1", "/ui/topology"] {
            let r = client()
                .get(format!("{base}{path}"))
                .header(COOKIE, &ops)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::OK, "{path}");
            let csp = r.headers()["content-security-policy"]
                .to_str()
                .unwrap()
                .to_owned();
            assert!(
                csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"),
                "{csp}"
            );
            let page = r.text().await.unwrap();
            assert!(!page.contains(OPS), "{path} shows the token");
        }

        // A read-only token sees no button and cannot start a run, even with a valid CSRF token.
        let (viewer, _) = sign_in(&base, VIEWER).await;
        let (_, page) = get(&base, &viewer, "/ui/nodes/leaf2").await;
        // Before any run has saved facts, the page says what the inventory says the device is.
        assert!(
            page.contains(r#"id="node-device">eos at 127.0.0.1:"#),
            "{page}"
        );
        assert!(
            !page.contains(r#"id="why-run""#)
                && page.contains("needs a token with the trigger role"),
            "{page}"
        );
        let token = csrf(&page);
        let r = post(
            &base,
            &viewer,
            "/ui/nodes/leaf2/converge",
            &[("csrf", &token), ("mode", "why-run")],
        )
        .await;
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        assert!(
            r.text()
                .await
                .unwrap()
                .contains("token:viewer lacks the `trigger` role")
        );

        // CSRF: no token, another session's token: refused; this session's: the run starts.
        let (_, page) = get(&base, &ops, "/ui/nodes/leaf2").await;
        assert!(page.contains(r#"id="why-run""#), "{page}");
        let mine = csrf(&page);
        assert_ne!(mine, token, "each session its own CSRF token");
        for form in [
            vec![("mode", "converge")],
            vec![("csrf", token.as_str()), ("mode", "converge")],
        ] {
            let r = post(&base, &ops, "/ui/nodes/leaf2/converge", &form).await;
            assert_eq!(r.status(), StatusCode::FORBIDDEN);
            assert!(r.text().await.unwrap().contains("CSRF"));
        }
        let (_, runs) = get(&base, &ops, "/ui/runs").await;
        assert!(
            runs.contains("No run yet"),
            "refused forms started nothing: {runs}"
        );
        let r = post(
            &base,
            &ops,
            "/ui/nodes/leaf2/converge",
            &[("csrf", &mine), ("mode", "converge")],
        )
        .await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER);
        let run = r.headers()[LOCATION].to_str().unwrap().to_owned();
        assert!(run.starts_with("/ui/runs/"), "{run}");

        // leaf2 refuses the commit with hostile text: shown as text on the run's and node's pages.
        let page = wait_ended(&base, &ops, &run).await;
        assert!(page.contains("netgw run FAILED for leaf2"), "{page}");
        assert!(
            page.contains(r#"class="status st-failed" id="run-status">failed<"#),
            "its only node failed: {page}"
        );
        for page in [page, get(&base, &ops, "/ui/nodes/leaf2").await.1] {
            assert!(
                page.contains(
                    "&lt;script&gt;alert('pwned')&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"
                ),
                "{page}"
            );
            assert!(
                !page.contains("<script>alert") && !page.contains("<img src=x"),
                "{page}"
            );
        }
        let (_, runs) = get(&base, &ops, "/ui/runs").await;
        assert!(
            runs.contains(&run) && runs.contains(r#"data-node-status="failed""#),
            "{runs}"
        );

        // The session's event stream is the API's.
        let r = client()
            .get(format!("{base}{run}/events"))
            .header(COOKIE, &ops)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        let events = r.text().await.unwrap();
        assert!(
            events.contains("event: node_finished") && events.contains("event: run_finished"),
            "{events}"
        );

        // Signing out needs the CSRF token and clears the cookie.
        let r = post(&base, &ops, "/ui/logout", &[]).await;
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        let r = post(&base, &ops, "/ui/logout", &[("csrf", &mine)]).await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER);
        assert!(
            r.headers()[SET_COOKIE]
                .to_str()
                .unwrap()
                .contains("Max-Age=0")
        );
        // Signed out is revoked on the server: the old cookie, replayed, opens nothing.
        let (s, _) = get(&base, &ops, "/ui/nodes").await;
        assert_eq!(s, StatusCode::UNAUTHORIZED);
        // Control: a fresh session works.
        let (again, _) = sign_in(&base, OPS).await;
        assert_eq!(get(&base, &again, "/ui/nodes").await.0, StatusCode::OK);

        // Guessing: after 5 failed sign-ins from one address, each attempt waits (429 and
        // Retry-After), even with the right token, until the wait is over.
        for _ in 0..5 {
            assert_eq!(
                post_login(&base, "guess").await.status(),
                StatusCode::UNAUTHORIZED
            );
        }
        let r = post_login(&base, OPS).await;
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(r.headers().contains_key("retry-after"));
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert_eq!(post_login(&base, OPS).await.status(), StatusCode::SEE_OTHER);
    });
    assert!(
        !lab.log().contains(OPS) && !lab.log().contains(VIEWER),
        "tokens are never logged"
    );
}

/// Each drawn link (`A B`, its ends as the devices name them) and its state, from the topology page.
fn link_states(page: &str) -> std::collections::BTreeMap<String, String> {
    let attr = |tag: &str, name: &str| {
        let at = tag.find(&format!(r#" {name}=""#))? + name.len() + 3;
        Some(tag[at..at + tag[at..].find('"')?].to_owned())
    };
    page.split("<line ")
        .skip(1)
        .filter_map(|rest| {
            let tag = &rest[..rest.find('>')?];
            let ends = format!("{} {}", attr(tag, "data-a")?, attr(tag, "data-b")?);
            Some((ends, attr(tag, "data-state")?))
        })
        .collect()
}

fn expect_links(page: &str, want: &[(&str, &str)]) {
    let want: std::collections::BTreeMap<String, String> = want
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(link_states(page), want, "{page}");
}

const UPLINK: &str = "spine1:Ethernet1 leaf1:Ethernet1";
const UPLINK2: &str = "spine1:Ethernet2 leaf2:Ethernet1";
const HOST_LINK: &str = "leaf2:Ethernet3 host1:eth1";

#[test]
fn link_checks_outlive_a_restart_and_atomic_runs_feed_them() {
    let mut lab = UiLab::start(vec![]);
    let base = lab.base.clone();
    // The button's check, before and after it.
    let ops = lab.rt.block_on(async {
        let (ops, _) = sign_in(&base, OPS).await;
        let (_, page) = get(&base, &ops, "/ui/topology").await;
        assert!(page.contains("Links not checked yet"), "{page}");
        expect_links(
            &page,
            &[
                (UPLINK, "unknown"),
                (UPLINK2, "unknown"),
                (HOST_LINK, "unknown"),
            ],
        );
        let r = post(&base, &ops, "/ui/topology/links", &[("csrf", &csrf(&page))]).await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER);
        ops
    });

    // A new process: the check is read back from the history. Sessions live in the process: the
    // old one ended with it.
    lab.restart();
    let base = lab.base.clone();
    let ops = lab.rt.block_on(async {
        assert_eq!(
            get(&base, &ops, "/ui/topology").await.0,
            StatusCode::UNAUTHORIZED
        );
        sign_in(&base, OPS).await.0
    });
    lab.rt.block_on(async {
        let (s, page) = get(&base, &ops, "/ui/topology").await;
        assert_eq!(s, StatusCode::OK, "{page}");
        expect_links(
            &page,
            &[(UPLINK, "up"), (UPLINK2, "up"), (HOST_LINK, "unchecked")],
        );
        assert!(
            page.contains(r#"data-origin="page""#) && page.contains("Check links, by token:ops"),
            "{page}"
        );
    });

    // An atomic run whose change shuts leaf1's uplink: its check (before confirming) misses the
    // link, the transaction rolls back, and the drawing shows what that check saw.
    common::write(
        lab.dir.path(),
        "repo/nodes/leaf1.json",
        r#"{"name":"leaf1","run_list":["recipe[netdev::vlans]","recipe[netdev::links]"],
            "normal":{"netdev":{"vlans":{"720":{"name":"ui_page"}},"links":{"Ethernet1":{"enabled":false}}}}}"#,
    );
    let run = lab.trigger(serde_json::json!({
        "nodes": ["spine1", "leaf1", "leaf2"], "atomic": true, "check_links": true
    }));
    let run = run["run_id"].as_str().unwrap().to_owned();
    let done = lab.wait_run(&run);
    assert!(
        done["note"]
            .as_str()
            .unwrap_or_default()
            .contains("rolled-back"),
        "{done}"
    );
    lab.rt.block_on(async {
        let (_, page) = get(&base, &ops, "/ui/topology").await;
        expect_links(
            &page,
            &[
                (UPLINK, "missing"),
                (UPLINK2, "up"),
                (HOST_LINK, "unchecked"),
            ],
        );
        assert!(
            page.contains(r#"data-origin="atomic""#)
                && page.contains(&format!(r#"href="/ui/runs/{run}""#)),
            "{page}"
        );
    });
}

/// The nodes the topology page draws.
fn drawn_nodes(page: &str) -> Vec<String> {
    page.split(r#"<a class="node" href="/ui/nodes/"#)
        .skip(1)
        .filter_map(|rest| Some(rest[..rest.find('"')?].to_owned()))
        .collect()
}

async fn topology_page(base: &str) -> String {
    let (ops, _) = sign_in(base, OPS).await;
    let (s, page) = get(base, &ops, "/ui/topology").await;
    assert_eq!(s, StatusCode::OK, "{page}");
    page
}

#[test]
fn containerlabs_topology_data_is_drawn() {
    // containerlab's documentation example (tests/fixtures/containerlab, links as {a, z}: containerlab
    // before 0.73).
    let srl02 = std::fs::read_to_string(common::root().join(
        "tests/fixtures/containerlab/topology-data/docs-manual-inventory/srl02/topology-data.json",
    ))
    .unwrap();
    let gw = UiServe::start(&[("topology-data.json", &srl02)], "topology-data.json");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let page = rt.block_on(topology_page(&gw.base));
    assert!(page.contains("Topology <code>srl02</code>"), "{page}");
    assert_eq!(drawn_nodes(&page), ["srl1", "srl2"], "{page}");
    // SR Linux is not a kind netgw drives: its ports keep containerlab's names.
    expect_links(&page, &[("srl1:e1-1 srl2:e1-1", "unknown")]);
    drop(gw);

    // The fabric as containerlab 0.73 and later write it (links as {endpoints: {a, z}}), rendered by
    // netgw-lab's auto.tmpl rendering, which tests/it/clab_e2e.rs checks against containerlab's own.
    let topo = netgw_models::topology::Topology::parse(ui_lab::FABRIC).unwrap();
    let plan = netgw_labs::clab::ClabPlan::new(
        ui_lab::FABRIC,
        &topo,
        std::path::Path::new("fabric.clab.yml"),
        None,
        None,
    )
    .unwrap();
    let data = netgw_labs::clab::topology_data(&plan, "netgw");
    assert!(data.contains(r#""endpoints": {"#), "{data}");
    let gw = UiServe::start(
        &[
            ("fabric.clab.yml", ui_lab::FABRIC),
            ("clab-uilab/topology-data.json", &data),
        ],
        "clab-uilab/topology-data.json",
    );
    let page = rt.block_on(topology_page(&gw.base));
    assert!(page.contains("Topology <code>uilab</code>"), "{page}");
    assert_eq!(
        drawn_nodes(&page),
        ["host1", "leaf1", "leaf2", "spine1"],
        "{page}"
    );
    expect_links(
        &page,
        &[
            (UPLINK, "unknown"),
            (UPLINK2, "unknown"),
            (HOST_LINK, "unknown"),
        ],
    );
}
