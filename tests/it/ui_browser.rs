//! The status page in a real browser (issue 21): headless Chromium against a real `netgw serve`
//! converging a netgw-lab fabric. A wrong token shows the login form again; the right one signs in;
//! a why-run started from a node's page is watched to its end on the run's page, the DOM updated by
//! the event stream without a reload; the node's page and the topology (SVG nodes and links, their
//! colours, before and after a link check) are read from the DOM. Screenshots go to
//! target/ui-screenshots/ (laptop and phone widths).
//!
//! Needs `chromium` (scripts/peers/chromium.sh install); fails loudly without it.

use crate::common;
use crate::common::cdp;
use crate::common::ui_lab;

use cdp::Browser;
use serde_json::json;
use std::path::PathBuf;
use ui_lab::{OPS, UiLab};

/// The elements reaching beyond the screen's right edge, for a failure's message.
const WIDER_THAN_SCREEN: &str = "[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > innerWidth + 1).slice(0, 8).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).join('; ')";

fn shots() -> PathBuf {
    common::root().join("target/ui-screenshots")
}

/// `getComputedStyle(el)[prop]` of the first element matching `sel`.
fn style(b: &mut Browser, sel: &str, prop: &str) -> String {
    let sel = serde_json::to_string(sel).unwrap();
    b.eval(&format!(
        "getComputedStyle(document.querySelector({sel})).getPropertyValue('{prop}')"
    ))
    .as_str()
    .unwrap_or_default()
    .to_owned()
}

fn sign_in(b: &mut Browser, base: &str, token: &str) {
    b.goto(&format!("{base}/ui/runs"));
    b.wait_for("location.pathname === '/ui/login'", "the login form");
    let t = serde_json::to_string(token).unwrap();
    b.eval(&format!("document.getElementById('token').value = {t}"));
    b.click("form.login button[type=submit]");
}

#[test]
fn an_operator_signs_in_watches_a_why_run_live_and_reads_the_topology() {
    // leaf1 answers slowly, so its why-run is still running when its page opens.
    let lab = UiLab::start(vec![("leaf1".into(), "latency-ms".into(), "400".into())]);
    let base = lab.base.clone();
    let mut b = Browser::launch(1280, 900);

    // A wrong token: the login form again, with the error, and no session.
    sign_in(&mut b, &base, "not-the-token");
    b.wait_for(
        "document.getElementById('login-error') !== null",
        "the login error",
    );
    assert_eq!(b.eval("location.pathname"), json!("/ui/login"));
    assert_eq!(
        b.eval("document.querySelector('form.login input[type=password]') !== null"),
        json!(true)
    );
    b.screenshot(&shots().join("login-wrong-token.png"));

    sign_in(&mut b, &base, OPS);
    b.wait_for("location.pathname === '/ui/runs'", "the runs page");
    assert_eq!(
        b.eval("document.cookie"),
        json!(""),
        "the session cookie is HttpOnly"
    );

    // A why-run from leaf1's page, watched on the run's page.
    b.goto(&format!("{base}/ui/nodes/leaf1"));
    b.click("#why-run");
    b.wait_for(
        "location.pathname.startsWith('/ui/runs/') && document.getElementById('run-status') !== null",
        "the run's page",
    );
    let first = b.eval(
        "window.__notReloaded = true; [document.getElementById('run').dataset.live, document.getElementById('run-status').textContent]",
    );
    assert_eq!(
        first[0],
        json!("true"),
        "the run was still going when its page opened: {first}"
    );
    b.wait_for(
        "document.getElementById('run-status').textContent === 'finished' && document.body.dataset.runRefreshed !== undefined",
        "the run to finish on the page",
    );
    assert_eq!(
        b.eval("window.__notReloaded === true"),
        json!(true),
        "updated in place, not reloaded"
    );
    let events: u64 = b
        .eval("Number(document.body.dataset.liveEvents)")
        .as_u64()
        .unwrap();
    assert!(events >= 3, "events received: {events}");
    assert_eq!(
        b.eval(
            "document.querySelector('tr[data-node=leaf1] [data-node-status]').dataset.nodeStatus"
        ),
        json!("drift")
    );
    let report = b.eval("document.querySelector('pre.report').innerText");
    let report = report.as_str().unwrap();
    assert!(
        report.contains("Starting netgw run for leaf1 (why-run)")
            && report.contains("Would create vlan[720]")
            && report.contains("1 node(s), 1 succeeded, 0 failed"),
        "{report}"
    );
    b.screenshot(&shots().join("run.png"));

    // The node's page, opened from the run.
    b.click("tr[data-node=leaf1] a");
    b.wait_for("location.pathname === '/ui/nodes/leaf1'", "leaf1's page");
    assert_eq!(
        b.eval("document.getElementById('node-state').dataset.nodeStatus"),
        json!("drift")
    );
    assert_eq!(
        b.eval("document.querySelectorAll('table.history tbody tr').length"),
        json!(1)
    );
    assert_eq!(
        b.eval("document.getElementById('facts')"),
        json!(null),
        "a why-run saves no facts"
    );

    // A real converge of spine1 from its page: converged, its facts saved and shown.
    b.goto(&format!("{base}/ui/nodes/spine1"));
    b.click("#converge");
    b.wait_for(
        "location.pathname.startsWith('/ui/runs/') && document.getElementById('run-status') !== null && document.getElementById('run-status').textContent === 'finished'",
        "spine1's converge to finish",
    );
    b.click("tr[data-node=spine1] a");
    b.wait_for("location.pathname === '/ui/nodes/spine1'", "spine1's page");
    assert_eq!(
        b.eval("document.getElementById('node-state').textContent"),
        json!("converged: 1 resource(s) updated")
    );
    assert_eq!(
        b.eval("document.getElementById('facts').innerText.includes('hostname')"),
        json!(true),
        "facts shown"
    );
    b.screenshot(&shots().join("node.png"));

    // The topology: every node and link drawn; leaf1 amber (drift), never-run nodes grey; links
    // unknown until a link check, then green (and the undriven host's link grey).
    b.goto(&format!("{base}/ui/topology"));
    assert_eq!(
        b.eval("document.querySelectorAll('svg#topology a.node').length"),
        json!(4)
    );
    assert_eq!(
        b.eval("document.querySelectorAll('svg#topology line.link').length"),
        json!(3)
    );
    assert_eq!(
        b.eval("document.querySelector('svg a.node[data-node=leaf1]').dataset.status"),
        json!("drift")
    );
    assert_eq!(
        style(&mut b, "svg a.node[data-node=leaf1] circle", "fill"),
        "rgb(212, 167, 44)"
    );
    assert_eq!(
        style(&mut b, "svg a.node[data-node=spine1] circle", "fill"),
        "rgb(26, 127, 55)"
    );
    assert_eq!(
        style(&mut b, "svg a.node[data-node=leaf2] circle", "fill"),
        "rgb(175, 184, 193)"
    );
    assert_eq!(
        b.eval(
            "[...document.querySelectorAll('svg line.link')].map(l => l.dataset.state).join(',')"
        ),
        json!("unknown,unknown,unknown")
    );
    b.click("#check-links");
    b.wait_for(
        "location.pathname === '/ui/topology' && document.getElementById('links-checked').textContent.includes('2 up')",
        "the link check",
    );
    let states = b.eval(
        "Object.fromEntries([...document.querySelectorAll('svg line.link')].map(l => [l.dataset.a + ' ' + l.dataset.b, l.dataset.state]))",
    );
    assert_eq!(
        states,
        json!({
            "spine1:Ethernet1 leaf1:Ethernet1": "up",
            "spine1:Ethernet2 leaf2:Ethernet1": "up",
            "leaf2:Ethernet3 host1:eth1": "unchecked"
        }),
        "{states}"
    );
    assert_eq!(
        style(&mut b, "svg line.link[data-state=up]", "stroke"),
        "rgb(26, 127, 55)"
    );
    b.screenshot(&shots().join("topology.png"));

    // Clicking a node opens its page.
    b.mouse_click("svg a.node[data-node=leaf1] circle");
    b.wait_for(
        "location.pathname === '/ui/nodes/leaf1'",
        "leaf1's page from the drawing",
    );

    // A phone's width: nothing wider than the screen but the scrollable tables and the drawing.
    b.viewport(390, 844, true);
    b.goto(&format!("{base}/ui/topology"));
    assert_eq!(
        b.eval("document.documentElement.scrollWidth <= 390"),
        json!(true),
        "too wide at 390 px: {}",
        b.eval(WIDER_THAN_SCREEN)
    );
    b.screenshot(&shots().join("topology-phone.png"));
    b.goto(&format!("{base}/ui/runs"));
    assert_eq!(
        b.eval("document.documentElement.scrollWidth <= 390"),
        json!(true),
        "too wide at 390 px: {}",
        b.eval(WIDER_THAN_SCREEN)
    );
    b.screenshot(&shots().join("runs-phone.png"));
    drop(b);
    assert!(!lab.log().contains(OPS), "the token is never logged");
}

#[test]
fn runs_started_through_the_api_appear_on_the_open_runs_list() {
    // leaf1 answers slowly, so its run is seen in progress before it finishes.
    let lab = UiLab::start(vec![("leaf1".into(), "latency-ms".into(), "300".into())]);
    let base = lab.base.clone();
    let mut b = Browser::launch(1280, 900);
    sign_in(&mut b, &base, OPS);
    b.wait_for("location.pathname === '/ui/runs'", "the runs page");
    assert_eq!(
        b.eval("document.getElementById('no-runs') !== null"),
        json!(true),
        "no run yet"
    );
    // The list's feed is open before anything runs: what it announces from now on is shown.
    b.wait_for(
        "document.body.dataset.liveList === 'open'",
        "the runs list's event stream",
    );
    b.eval("window.__notReloaded = true");

    let first = lab.trigger(json!({"nodes": ["leaf1"], "why_run": true}));
    let first = first["run_id"].as_str().unwrap().to_owned();
    let row = |id: &str| format!("document.querySelector('tr[data-run-id=\"{id}\"]')");
    b.wait_for(
        &format!("{} !== null", row(&first)),
        "the API's run on the list",
    );
    b.wait_for(
        &format!(
            "{} !== null && {}.querySelector('[data-run-status]').textContent === 'finished'",
            row(&first),
            row(&first)
        ),
        "the run to finish on the list",
    );
    assert_eq!(
        b.eval(&format!(
            "{}.querySelector('[data-node=leaf1]').dataset.nodeStatus",
            row(&first)
        )),
        json!("drift")
    );

    // A second one (an atomic converge of spine1): listed first, above the first.
    let second = lab.trigger(json!({"nodes": ["spine1"], "atomic": true}));
    let second = second["run_id"].as_str().unwrap().to_owned();
    b.wait_for(
        &format!(
            "document.querySelector('table#runs tbody tr').dataset.runId === '{second}' && document.querySelector('table#runs tbody tr [data-run-status]').textContent === 'finished'"
        ),
        "the second run first on the list, finished",
    );
    assert_eq!(
        b.eval("[...document.querySelectorAll('table#runs tbody tr')].map(r => r.dataset.runId)"),
        json!([second, first])
    );
    assert_eq!(
        b.eval("window.__notReloaded === true && document.getElementById('no-runs') === null"),
        json!(true),
        "rows added in place, not by a reload"
    );
    b.screenshot(&shots().join("runs-live.png"));
}
