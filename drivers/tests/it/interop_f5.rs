//! The F5 BIG-IP driver against a BIG-IP test server on 127.0.0.1:0.
//!
//! No third-party BIG-IP simulator exists, so the server lives here. It answers in the shapes of the real
//! iControl REST samples (loaded from `tests/fixtures/f5/` and `tests/fixtures/conformance/f5/`), keeps
//! VLANs, memberships, interfaces and trunks as state, checks the token of every request, and implements
//! transactions: requests with `X-F5-REST-Coordination-Id` are queued; `PATCH {"state":"VALIDATING"}`
//! applies all of them to a copy and keeps it only if every one succeeds and the result is valid (an
//! interface untagged in at most one VLAN); otherwise nothing changes. One injected failure mode
//! (`Sim::reject_next_commit`) rejects the next transaction with a given message.
//! `f5_test_server_speaks_real_shapes` feeds the real samples and the server's answers to the same
//! parsers, so the server cannot drift from the real shapes.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use netgw_drivers::driver::{CommitOptions, Driver, ErrorKind, Platform};
use netgw_drivers::f5::F5Driver;
use netgw_drivers::f5::{error, facts, link, rest, vlan};
use netgw_drivers::target::{ConnectionOptions, DeviceTarget};
use netgw_models::plan::{Plan, Policy, plan};
use netgw_models::resource::{Link, LinkMode, Vlan};
use netgw_models::secret::Secret;
use serde_json::{Value, json};

const PASSWORD: &str = "s3cret-Pw!";

fn fixture(rel: &str) -> Value {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const GENIE: &str = "conformance/f5/facts/genieparser_ve_14.1.2.1";

/// The configuration the server holds (what a transaction copies and replaces).
#[derive(Debug, Clone, PartialEq)]
struct Data {
    /// VLAN objects as the device shows them (without membership), in creation order.
    vlans: Vec<Value>,
    /// fullPath -> members: (name, tagged).
    members: BTreeMap<String, Vec<(String, bool)>>,
    interfaces: Vec<Value>,
    trunks: Vec<Value>,
}

#[derive(Debug)]
struct Txn {
    ops: Vec<(Method, String, Value)>,
    state: &'static str,
}

#[derive(Debug)]
struct Sim {
    data: Data,
    tokens: BTreeSet<String>,
    token_lifetime: Duration,
    next: u64,
    txns: BTreeMap<u64, Txn>,
    reject_next_commit: Option<String>,
    logins: u32,
    logouts: u32,
    unauthorized: u32,
    saves: u32,
    /// Answer `device-info` (f5-conx-core's 15.1.0.4 recording); else 404, as a release without it.
    device_info: bool,
    /// `METHOD path [txn]` of every request, for assertions on what was sent.
    log: Vec<String>,
}

type Shared = Arc<Mutex<Sim>>;

fn lock(s: &Shared) -> MutexGuard<'_, Sim> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

fn initial_data() -> Data {
    let vlans: Vec<Value> = fixture(&format!("{GENIE}/net_vlan.json"))["items"]
        .as_array()
        .unwrap()
        .clone();
    let mut members = BTreeMap::new();
    members.insert(
        "/Common/External".to_owned(),
        vec![("1.1".to_owned(), false)],
    );
    members.insert(
        "/Common/Internal".to_owned(),
        vec![("1.2".to_owned(), false), ("1.3".to_owned(), true)],
    );
    members.insert(
        "/Common/Services".to_owned(),
        vec![("1.3".to_owned(), true)],
    );
    members.insert("/Common/HA".to_owned(), vec![]);
    Data {
        vlans,
        members,
        interfaces: fixture(&format!("{GENIE}/net_interface.json"))["items"]
            .as_array()
            .unwrap()
            .clone(),
        trunks: fixture("conformance/f5/links/genieparser_ve_14.1.2.1/net_trunk.json")["items"]
            .as_array()
            .unwrap()
            .clone(),
    }
}

fn json_resp(status: u16, v: &Value) -> Response {
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        [(
            axum::http::header::CONTENT_TYPE,
            "application/json;charset=utf-8",
        )],
        v.to_string(),
    )
        .into_response()
}

/// mcpd-shaped error (`{"code","message","errorStack","apiError"}`), as in the real 404/409 samples.
fn mcpd(code: u16, message: String) -> (u16, Value) {
    (
        code,
        json!({"code": code, "message": message, "errorStack": [], "apiError": 3}),
    )
}

fn not_found(kind: &str, full_path: &str) -> (u16, Value) {
    mcpd(
        404,
        format!("01020036:3: The requested {kind} ({full_path}) was not found."),
    )
}

fn now_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// `~Common~web` -> `/Common/web`.
fn full_path(seg: &str) -> String {
    seg.replace('~', "/")
}

fn member_items(d: &Data, fp: &str) -> Vec<Value> {
    d.members
        .get(fp)
        .into_iter()
        .flatten()
        .map(|(n, tagged)| {
            let mut o = json!({"kind": "tm:net:vlan:interfaces:interfacesstate", "name": n, "fullPath": n, "generation": 1,
                "selfLink": format!("https://localhost/mgmt/tm/net/vlan/{}/interfaces/{n}?ver=14.1.2.1", fp.replace('/', "~"))});
            o[if *tagged { "tagged" } else { "untagged" }] = json!(true);
            o
        })
        .collect()
}

fn vlan_collection(d: &Data, expand: bool) -> Value {
    let items: Vec<Value> = d
        .vlans
        .iter()
        .map(|v| {
            let mut v = v.clone();
            let fp = v["fullPath"].as_str().unwrap_or_default().to_owned();
            let mut r = json!({"link": format!("https://localhost/mgmt/tm/net/vlan/{}/interfaces?ver=14.1.2.1", fp.replace('/', "~")),
                "isSubcollection": true});
            if expand {
                r["items"] = Value::Array(member_items(d, &fp));
            }
            v["interfacesReference"] = r;
            v
        })
        .collect();
    json!({"kind": "tm:net:vlan:vlancollectionstate", "selfLink": "https://localhost/mgmt/tm/net/vlan?ver=14.1.2.1", "items": items})
}

fn parse_members(d: &Data, body: &Value) -> Result<Vec<(String, bool)>, (u16, Value)> {
    let mut out = Vec::new();
    for m in body.as_array().into_iter().flatten() {
        let name = m["name"].as_str().unwrap_or_default().to_owned();
        let known = d
            .interfaces
            .iter()
            .chain(&d.trunks)
            .any(|i| i["name"] == json!(name));
        if !known {
            return Err(not_found("interface", &name));
        }
        out.push((name, m["tagged"] == json!(true)));
    }
    out.sort();
    Ok(out)
}

/// Apply one configuration request to `d`.
fn apply(d: &mut Data, method: &Method, path: &str, body: &Value) -> Result<Value, (u16, Value)> {
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match (method.as_str(), segs.as_slice()) {
        ("POST", ["mgmt", "tm", "net", "vlan"]) => {
            let name = body["name"].as_str().unwrap_or_default().to_owned();
            let partition = body["partition"].as_str().unwrap_or("Common").to_owned();
            let fp = format!("/{partition}/{name}");
            if name.is_empty() {
                return Err(mcpd(
                    400,
                    "01070734:3: Configuration error: a VLAN needs a name".into(),
                ));
            }
            if d.vlans.iter().any(|v| v["fullPath"] == json!(fp)) {
                return Err(mcpd(
                    409,
                    format!(
                        "01020066:3: The requested VLAN ({fp}) already exists in partition {partition}."
                    ),
                ));
            }
            let members = parse_members(d, &body["interfaces"])?;
            let mut o = json!({"kind": "tm:net:vlan:vlanstate", "name": name, "partition": partition, "fullPath": fp,
                "generation": 1, "selfLink": format!("https://localhost/mgmt/tm/net/vlan/{}?ver=14.1.2.1", fp.replace('/', "~")),
                "autoLasthop": "default", "mtu": 1500, "tag": 4094});
            for (k, v) in body.as_object().into_iter().flatten() {
                if !["interfaces", "name", "partition"].contains(&k.as_str()) {
                    o[k] = v.clone();
                }
            }
            d.vlans.push(o.clone());
            d.members.insert(fp, members);
            Ok(o)
        }
        ("PATCH", ["mgmt", "tm", "net", "vlan", seg]) => {
            let fp = full_path(seg);
            let members = if body.get("interfaces").is_some() {
                Some(parse_members(d, &body["interfaces"])?)
            } else {
                None
            };
            let v = d
                .vlans
                .iter_mut()
                .find(|v| v["fullPath"] == json!(fp))
                .ok_or_else(|| not_found("VLAN", &fp))?;
            for (k, val) in body.as_object().into_iter().flatten() {
                match k.as_str() {
                    "interfaces" => {}
                    "description" if val == "" => {
                        v.as_object_mut().map(|o| o.remove("description"));
                    }
                    _ => v[k] = val.clone(),
                }
            }
            let out = v.clone();
            if let Some(m) = members {
                d.members.insert(fp, m);
            }
            Ok(out)
        }
        ("DELETE", ["mgmt", "tm", "net", "vlan", seg]) => {
            let fp = full_path(seg);
            let before = d.vlans.len();
            d.vlans.retain(|v| v["fullPath"] != json!(fp));
            if d.vlans.len() == before {
                return Err(not_found("VLAN", &fp));
            }
            d.members.remove(&fp);
            Ok(Value::Null)
        }
        ("PATCH", ["mgmt", "tm", "net", kind @ ("interface" | "trunk"), name]) => {
            let list = if *kind == "interface" {
                &mut d.interfaces
            } else {
                &mut d.trunks
            };
            let i = list
                .iter_mut()
                .find(|i| i["name"] == json!(name))
                .ok_or_else(|| not_found(kind, name))?;
            let o = i
                .as_object_mut()
                .ok_or_else(|| mcpd(500, "bad object".into()))?;
            for (k, val) in body.as_object().into_iter().flatten() {
                match (k.as_str(), val) {
                    ("description", Value::String(s)) if s.is_empty() => {
                        o.remove("description");
                    }
                    ("enabled", Value::Bool(true)) => {
                        o.remove("disabled");
                        o.insert("enabled".into(), json!(true));
                    }
                    ("disabled", Value::Bool(true)) => {
                        o.remove("enabled");
                        o.insert("disabled".into(), json!(true));
                    }
                    _ => {
                        o.insert(k.clone(), val.clone());
                    }
                }
            }
            Ok(Value::Object(o.clone()))
        }
        _ => Err((
            404,
            json!({"code": 404, "message": format!("URI path {path} not registered.  Please verify URI is supported and wait for /available suffix to be responsive."),
                   "restOperationId": 41, "kind": ":resterrorresponse"}),
        )),
    }
}

/// What mcpd checks when a change is complete: an interface is untagged in one VLAN at most.
fn validate(d: &Data) -> Result<(), (u16, Value)> {
    let mut untagged: BTreeMap<&str, &str> = BTreeMap::new();
    for (fp, ms) in &d.members {
        for (n, tagged) in ms {
            if !tagged && let Some(other) = untagged.insert(n, fp) {
                return Err(mcpd(
                    400,
                    format!(
                        "01070712:3: Interface {n} is an untagged member of both {other} and {fp}."
                    ),
                ));
            }
        }
    }
    let mut tags = BTreeSet::new();
    for v in &d.vlans {
        if let Some(t) = v["tag"].as_u64()
            && !tags.insert(t)
        {
            return Err(mcpd(
                400,
                format!(
                    "01070712:3: VLAN tag {t} is used by another VLAN ({}).",
                    v["fullPath"]
                ),
            ));
        }
    }
    Ok(())
}

fn txn_state(id: u64, state: &str) -> Value {
    json!({"transId": id, "state": state, "timeoutSeconds": 120, "asyncExecution": false, "validateOnly": false,
        "executionTimeout": 300, "executionTime": 0, "failureReason": "", "kind": "tm:transactionstate",
        "selfLink": format!("https://localhost/mgmt/tm/transaction/{id}?ver=14.1.2.1")})
}

fn unauthorized(uri: &str) -> (u16, Value) {
    let mut e = fixture("f5/error_401_no_token.json");
    e["message"] = json!(format!(
        "Authorization failed: no user authentication header or token detected. Uri:http://localhost:8100{uri} Referrer:127.0.0.1 Sender:127.0.0.1"
    ));
    e["referer"] = json!("127.0.0.1");
    (401, e)
}

async fn handle(
    axum::extract::State(s): axum::extract::State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (status, v) = answer(&s, &method, &uri, &headers, &body);
    json_resp(status, &v)
}

fn answer(
    s: &Shared,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> (u16, Value) {
    let mut sim = lock(s);
    let path = uri.path().to_owned();
    let query = uri.query().unwrap_or("");
    let header = |n: &str| {
        headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let txn = header("x-f5-rest-coordination-id");
    sim.log.push(format!(
        "{method} {path}{}",
        txn.as_ref()
            .map(|t| format!(" [txn {t}]"))
            .unwrap_or_default()
    ));
    let body: Value = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(body).unwrap_or(Value::Null)
    };

    if method == Method::POST && path == "/mgmt/shared/authn/login" {
        if body["username"] != "admin"
            || body["password"] != PASSWORD
            || body["loginProviderName"] != "tmos"
        {
            let mut e = fixture("f5/error_401_login_failed.json");
            e["originalRequestBody"] =
                json!(json!({"username": body["username"], "loginProviderName": body["loginProviderName"]}).to_string());
            return (401, e);
        }
        sim.next += 1;
        sim.logins += 1;
        let token = format!("TOKEN{:06}SIM{}", sim.next, sim.logins);
        sim.tokens.insert(token.clone());
        let mut v = fixture("f5/authn_login.json");
        let now = now_micros();
        v["token"]["token"] = json!(token);
        v["token"]["name"] = json!(token);
        v["token"]["selfLink"] = json!(format!(
            "https://localhost/mgmt/shared/authz/tokens/{token}"
        ));
        v["token"]["timeout"] = json!(sim.token_lifetime.as_secs());
        v["token"]["lastUpdateMicros"] = json!(now);
        v["token"]["expirationMicros"] = json!(now + sim.token_lifetime.as_micros() as u64);
        return (200, v);
    }
    let authed = header("x-f5-auth-token").is_some_and(|t| sim.tokens.contains(&t));
    if !authed {
        sim.unauthorized += 1;
        return unauthorized(&path);
    }
    if let Some(t) = path.strip_prefix("/mgmt/shared/authz/tokens/")
        && method == Method::DELETE
    {
        sim.tokens.remove(t);
        sim.logouts += 1;
        let mut v = fixture("f5/authz_token_item.json");
        v["token"] = json!(t);
        v["name"] = json!(t);
        return (200, v);
    }
    if method == Method::GET {
        let d = &sim.data;
        return match path.as_str() {
            "/mgmt/tm/sys/version" => (200, fixture(&format!("{GENIE}/sys_version.json"))),
            "/mgmt/tm/sys/hardware" => (200, fixture(&format!("{GENIE}/sys_hardware.json"))),
            "/mgmt/tm/sys/global-settings" => {
                (200, fixture(&format!("{GENIE}/sys_global-settings.json")))
            }
            "/mgmt/tm/net/lldp-neighbors" => {
                (200, fixture(&format!("{GENIE}/net_lldp-neighbors.json")))
            }
            "/mgmt/shared/identified-devices/config/device-info" if !sim.device_info => {
                not_found("path", &path)
            }
            "/mgmt/shared/identified-devices/config/device-info" => (
                200,
                fixture(
                    "conformance/f5/facts/conx_device_info_15.1.0.4/shared_identified-devices_config_device-info.json",
                ),
            ),
            "/mgmt/tm/net/interface" => (
                200,
                json!({"kind": "tm:net:interface:interfacecollectionstate",
                "selfLink": "https://localhost/mgmt/tm/net/interface?ver=14.1.2.1", "items": d.interfaces}),
            ),
            "/mgmt/tm/net/trunk" => (
                200,
                json!({"kind": "tm:net:trunk:trunkcollectionstate",
                "selfLink": "https://localhost/mgmt/tm/net/trunk?ver=14.1.2.1", "items": d.trunks}),
            ),
            "/mgmt/tm/net/vlan" => (
                200,
                vlan_collection(d, query.contains("expandSubcollections=true")),
            ),
            p => {
                let segs: Vec<&str> = p.trim_start_matches('/').split('/').collect();
                match segs.as_slice() {
                    ["mgmt", "tm", "net", "vlan", seg, "interfaces"] => {
                        let fp = full_path(seg);
                        if !d.members.contains_key(&fp) {
                            return not_found("VLAN", &fp);
                        }
                        (
                            200,
                            json!({"kind": "tm:net:vlan:interfaces:interfacescollectionstate", "items": member_items(d, &fp)}),
                        )
                    }
                    ["mgmt", "tm", "transaction", id] => match id
                        .parse::<u64>()
                        .ok()
                        .and_then(|i| sim.txns.get(&i).map(|t| (i, t)))
                    {
                        Some((i, t)) => (200, txn_state(i, t.state)),
                        None => mcpd(404, format!("Transaction {id} not found")),
                    },
                    _ => apply(&mut sim.data.clone(), method, p, &body)
                        .map(|v| (200, v))
                        .unwrap_or_else(|e| e),
                }
            }
        };
    }
    if path == "/mgmt/tm/transaction" && method == Method::POST {
        sim.next += 1;
        let id = 1_389_812_000 + sim.next;
        sim.txns.insert(
            id,
            Txn {
                ops: vec![],
                state: "STARTED",
            },
        );
        return (200, txn_state(id, "STARTED"));
    }
    if let Some(id) = path.strip_prefix("/mgmt/tm/transaction/") {
        let Some(id) = id.parse::<u64>().ok().filter(|i| sim.txns.contains_key(i)) else {
            return mcpd(404, format!("Transaction {id} not found"));
        };
        if method == Method::DELETE {
            sim.txns.remove(&id);
            return (200, Value::Null);
        }
        if method == Method::PATCH && body["state"] == "VALIDATING" {
            let Some(t) = sim.txns.remove(&id) else {
                return mcpd(404, "gone".into());
            };
            let mut copy = sim.data.clone();
            let mut result = Ok(());
            if let Some(msg) = sim.reject_next_commit.take() {
                result = Err(mcpd(400, msg));
            }
            for (m, p, b) in &t.ops {
                if result.is_err() {
                    break;
                }
                result = apply(&mut copy, m, p, b).map(|_| ());
            }
            let result = result.and_then(|_| validate(&copy));
            return match result {
                Ok(()) => {
                    sim.data = copy;
                    (200, txn_state(id, "COMPLETED"))
                }
                Err((_, e)) => {
                    // Assumed shape: the failing command's mcpd message behind "transaction failed:".
                    let msg = e["message"].as_str().unwrap_or("").to_owned();
                    (
                        400,
                        json!({"code": 400, "message": format!("transaction failed:{msg}"), "errorStack": [], "apiError": 2}),
                    )
                }
            };
        }
        return mcpd(400, "unsupported transaction request".into());
    }
    if path == "/mgmt/tm/sys/config" && method == Method::POST && body["command"] == "save" {
        sim.saves += 1;
        return (
            200,
            json!({"kind": "tm:sys:config:runstate", "command": "save"}),
        );
    }
    if let Some(id) = txn {
        let Some(t) = id.parse::<u64>().ok().and_then(|i| sim.txns.get_mut(&i)) else {
            return mcpd(404, format!("Transaction {id} not found"));
        };
        t.ops.push((method.clone(), path.clone(), body.clone()));
        let n = t.ops.len();
        return (
            200,
            json!({"transId": id, "evalOrder": n, "method": method.as_str(), "uri": path, "body": body}),
        );
    }
    // Outside a transaction: apply at once, keeping mcpd's end-of-change checks.
    let mut copy = sim.data.clone();
    match apply(&mut copy, method, &path, &body).and_then(|v| validate(&copy).map(|_| v)) {
        Ok(v) => {
            sim.data = copy;
            (200, v)
        }
        Err(e) => e,
    }
}

struct Server {
    addr: SocketAddr,
    sim: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    async fn start() -> Server {
        let sim = Arc::new(Mutex::new(Sim {
            data: initial_data(),
            tokens: BTreeSet::new(),
            token_lifetime: Duration::from_secs(1200),
            next: 0,
            txns: BTreeMap::new(),
            reject_next_commit: None,
            logins: 0,
            logouts: 0,
            unauthorized: 0,
            saves: 0,
            device_info: false,
            log: vec![],
        }));
        let app = axum::Router::new().fallback(handle).with_state(sim.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Server { addr, sim, task }
    }

    fn sim(&self) -> MutexGuard<'_, Sim> {
        lock(&self.sim)
    }

    fn target(&self, password: &str) -> DeviceTarget {
        let mut t = DeviceTarget::new("bigip-sim", Platform::F5, "127.0.0.1");
        t.username = "admin".into();
        t.password = Some(Secret::new(password));
        let mut extras = serde_json::Map::new();
        extras.insert("scheme".into(), json!("http"));
        t.connection_options.insert(
            "rest".into(),
            Box::new(ConnectionOptions {
                port: Some(self.addr.port()),
                extras,
                ..Default::default()
            }),
        );
        t
    }

    async fn driver(&self) -> F5Driver {
        F5Driver::connect(&self.target(PASSWORD)).await.unwrap()
    }

    async fn get(&self, path: &str, token: Option<&str>) -> (u16, Value) {
        let c = reqwest::Client::new();
        let mut r = c.get(format!("http://{}{path}", self.addr));
        if let Some(t) = token {
            r = r.header("X-F5-Auth-Token", t);
        }
        let resp = r.send().await.unwrap();
        let status = resp.status().as_u16();
        (
            status,
            serde_json::from_slice(&resp.bytes().await.unwrap()).unwrap_or(Value::Null),
        )
    }

    async fn login(&self, password: &str) -> (u16, Value) {
        let resp = reqwest::Client::new()
            .post(format!("http://{}/mgmt/shared/authn/login", self.addr))
            .json(&json!({"username": "admin", "password": password, "loginProviderName": "tmos"}))
            .send()
            .await
            .unwrap();
        let status = resp.status().as_u16();
        (
            status,
            serde_json::from_slice(&resp.bytes().await.unwrap()).unwrap(),
        )
    }
}

fn vlans(v: Value) -> Vec<Vlan> {
    serde_json::from_value(v).unwrap()
}

fn links(v: Value) -> Vec<Link> {
    serde_json::from_value(v).unwrap()
}

async fn plan_for(d: &mut F5Driver, desired_vlans: Value, desired_links: Value) -> Plan {
    let obs = d.observe().await.unwrap();
    let (dv, dl) = (vlans(desired_vlans), links(desired_links));
    assert!(
        d.validate(&dv, &dl).is_empty(),
        "{:?}",
        d.validate(&dv, &dl)
    );
    let p = plan(
        &dv,
        &obs.vlans,
        Policy::Merge,
        &dl,
        &obs.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    assert_eq!(p.failures().count(), 0, "{:?}", p.resources);
    p
}

async fn apply_plan(d: &mut F5Driver, p: &Plan) {
    d.stage(p).await.unwrap();
    d.commit(&CommitOptions::default()).await.unwrap();
    d.confirm().await.unwrap();
}

/// A BIG-IP that answers `device-info` gives its identity in one request, no `sys/*` read, and the
/// VLANs come from the expanded listing observe reads anyway: one VLAN read in all.
#[tokio::test]
async fn f5_facts_identity_from_device_info_alone() {
    let srv = Server::start().await;
    srv.sim().device_info = true;
    let mut d = srv.driver().await;
    let f = d.facts().await.unwrap();
    assert_eq!(f.hostname.as_deref(), Some("testHost1"));
    assert_eq!(f.fqdn.as_deref(), Some("testHost1.lab.net"));
    assert_eq!(f.platform_version.as_deref(), Some("15.1.0.4"));
    assert_eq!(f.model.as_deref(), Some("BIG-IP Virtual Edition"));
    assert_eq!(f.serial.as_deref(), Some("42167068-xxxx-xxxx-1e7aac1ada72"));
    assert_eq!(
        f.vlans.get(&4094).and_then(|v| v.name.as_deref()),
        Some("External")
    );
    d.observe().await.unwrap();
    let log = srv.sim().log.clone();
    assert!(!log.iter().any(|l| l.contains("/mgmt/tm/sys/")), "{log:#?}");
    let vlan_reads = log
        .iter()
        .filter(|l| l.starts_with("GET /mgmt/tm/net/vlan"));
    assert_eq!(vlan_reads.count(), 1, "{log:#?}");
}

#[tokio::test]
async fn f5_facts_and_observe() {
    let srv = Server::start().await;
    let mut d = srv.driver().await;
    let f = d.facts().await.unwrap();
    assert_eq!(f.hostname.as_deref(), Some("bigip01"));
    assert_eq!(f.fqdn.as_deref(), Some("bigip01.lab.local"));
    assert_eq!(f.platform_version.as_deref(), Some("14.1.2.1"));
    assert_eq!(f.model.as_deref(), Some("BIG-IP Virtual Edition"));
    assert_eq!(f.serial.as_deref(), Some("564d4d7e-c668-e9dc-2bf3c9350dbd"));
    assert_eq!(f.interfaces.len(), 4);
    assert_eq!(
        f.vlans.get(&4094).and_then(|v| v.name.as_deref()),
        Some("External")
    );
    assert!(f.lldp_neighbors.is_empty());
    // Layer-2 facts from the planner's own read (VLAN membership: untagged = access, tagged = trunk).
    assert_eq!(f.interfaces.len(), 4, "same names as the interface facts");
    let sp = f.interfaces["1.1"].switchport.clone().unwrap();
    assert_eq!(
        (sp.mode, sp.access_vlan.map(|v| v.get())),
        (Some(LinkMode::Access), Some(4094))
    );
    let ports = |id: u16| f.vlans[&id].ports.clone();
    assert_eq!(ports(4094), ["1.1"]);
    assert_eq!(ports(11), ["1.2", "1.3"]);
    assert_eq!(ports(12), ["1.3"]);
    let o = d.observe().await.unwrap();
    assert_eq!(
        o.vlans.iter().map(|v| v.id.get()).collect::<Vec<_>>(),
        [11, 12, 4093, 4094]
    );
    let l = |n: &str| o.links.iter().find(|l| l.name == n).unwrap().clone();
    assert_eq!(
        (l("1.1").mode, l("1.1").access_vlan.map(|v| v.get())),
        (Some(LinkMode::Access), Some(4094))
    );
    assert_eq!(l("1.3").trunk_vlans.unwrap().to_range_string(), "11-12");
    assert_eq!(l("1.2").access_vlan.map(|v| v.get()), Some(11));
    assert_eq!(srv.sim().logins, 1);
    d.close().await.unwrap();
}

#[tokio::test]
async fn f5_converge_vlans_membership_and_descriptions_in_one_transaction() {
    let srv = Server::start().await;
    let mut d = srv.driver().await;
    let before = srv.sim().data.clone();
    let p = plan_for(
        &mut d,
        json!([{"id": 100, "name": "app", "description": "app tier"}, {"id": 12, "name": "svc"}, {"id": 4093, "state": "absent"}]),
        json!([
            {"name": "1.1", "mode": "access", "access_vlan": 100, "description": "to app"},
            {"name": "1.2", "enabled": false},
            {"name": "1.3", "mode": "trunk", "trunk_vlans": "100"}
        ]),
    )
    .await;
    let staged = d.stage(&p).await.unwrap();
    assert_eq!(
        staged.rendered,
        [
            "DELETE /mgmt/tm/net/vlan/~Common~HA",
            "DELETE /mgmt/tm/net/vlan/~Common~Services",
            r#"PATCH /mgmt/tm/net/vlan/~Common~External {"interfaces":[]}"#,
            concat!(
                r#"POST /mgmt/tm/net/vlan {"autoLasthop":"default","cmpHash":"default","dagRoundRobin":"disabled","dagTunnel":"outer","#,
                r#""failsafe":"disabled","failsafeAction":"failover-restart-tm","failsafeTimeout":90,"fwdMode":"l3","hardwareSyncookie":"disabled","#,
                r#""learning":"enable-forward","mtu":1500,"sflow":{"pollInterval":0,"pollIntervalGlobal":"yes","samplingRate":0,"samplingRateGlobal":"yes"},"#,
                r#""sourceChecking":"disabled","synFloodRateLimit":1000,"syncacheThreshold":6000,"tag":12,"name":"svc","partition":"Common","#,
                r#""interfaces":[{"name":"1.3","tagged":true}]}"#
            ),
            r#"POST /mgmt/tm/net/vlan {"name":"app","partition":"Common","tag":100,"description":"app tier","interfaces":[{"name":"1.1","untagged":true},{"name":"1.3","tagged":true}]}"#,
            r#"PATCH /mgmt/tm/net/interface/1.1 {"description":"to app"}"#,
            r#"PATCH /mgmt/tm/net/interface/1.2 {"disabled":true}"#,
        ]
    );
    assert_eq!(staged.diff, staged.rendered.join("\n"));
    {
        // Staged = queued in an open transaction; nothing applied yet.
        let sim = srv.sim();
        assert_eq!(sim.data, before);
        assert_eq!(sim.txns.len(), 1);
        assert_eq!(sim.txns.values().next().unwrap().ops.len(), 7);
        assert!(
            sim.log.iter().filter(|l| l.contains("[txn ")).count() == 7,
            "{:?}",
            sim.log
        );
    }
    d.commit(&CommitOptions::default()).await.unwrap();
    d.confirm().await.unwrap();
    assert!(srv.sim().txns.is_empty());
    assert_eq!(srv.sim().saves, 1, "saved by default (save_config unset)");

    // Read back through the driver and, independently, from the server's state.
    let o = d.observe().await.unwrap();
    let names: Vec<(u16, Option<&str>)> = o
        .vlans
        .iter()
        .map(|v| (v.id.get(), v.name.as_deref()))
        .collect();
    assert_eq!(
        names,
        [
            (11, Some("Internal")),
            (12, Some("svc")),
            (100, Some("app")),
            (4094, Some("External"))
        ]
    );
    let l = |n: &str| o.links.iter().find(|l| l.name == n).unwrap().clone();
    assert_eq!(
        (l("1.1").mode, l("1.1").access_vlan.map(|v| v.get())),
        (Some(LinkMode::Access), Some(100))
    );
    assert_eq!(l("1.1").description.as_deref(), Some("to app"));
    assert_eq!(l("1.2").enabled, Some(false));
    assert_eq!(
        l("1.3").trunk_vlans.as_ref().unwrap().to_range_string(),
        "11-12,100",
        "merge adds to the trunk"
    );
    {
        let sim = srv.sim();
        assert_eq!(
            sim.data.members["/Common/app"],
            [("1.1".to_owned(), false), ("1.3".to_owned(), true)]
        );
        let svc = sim.data.vlans.iter().find(|v| v["name"] == "svc").unwrap();
        assert_eq!(
            (svc["tag"].as_u64(), svc["synFloodRateLimit"].as_u64()),
            (Some(12), Some(1000)),
            "rename keeps settings"
        );
        assert!(
            sim.data
                .interfaces
                .iter()
                .any(|i| i["name"] == "1.2" && i["disabled"] == true && i.get("enabled").is_none())
        );
    }

    // The same desired state again: nothing to do, nothing sent.
    let p2 = plan_for(
        &mut d,
        json!([{"id": 100, "name": "app", "description": "app tier"}, {"id": 12, "name": "svc"}, {"id": 4093, "state": "absent"}]),
        json!([
            {"name": "1.1", "mode": "access", "access_vlan": 100, "description": "to app"},
            {"name": "1.2", "enabled": false},
            {"name": "1.3", "mode": "trunk", "trunk_vlans": "100"}
        ]),
    )
    .await;
    assert!(p2.is_empty(), "{:?}", p2.resources);
    let sent = srv.sim().log.len();
    let s2 = d.stage(&p2).await.unwrap();
    assert!(s2.rendered.is_empty() && s2.diff.is_empty());
    d.commit(&CommitOptions::default()).await.unwrap();
    d.confirm().await.unwrap();
    assert_eq!(srv.sim().log.len(), sent, "an empty plan sends nothing");

    // Replace the trunk list as a whole, clear a description.
    let obs = d.observe().await.unwrap();
    let dl = links(
        json!([{"name": "1.3", "mode": "trunk", "trunk_vlans": "100", "enabled": true}, {"name": "1.1", "enabled": true}]),
    );
    let p3 = plan(
        &[],
        &obs.vlans,
        Policy::Merge,
        &dl,
        &obs.links,
        Policy::Replace,
        &d.plan_rules(),
    );
    apply_plan(&mut d, &p3).await;
    let o = d.observe().await.unwrap();
    let l = |n: &str| o.links.iter().find(|l| l.name == n).unwrap().clone();
    assert_eq!(l("1.3").trunk_vlans.unwrap().to_range_string(), "100");
    assert_eq!(l("1.1").description, None);
    assert_eq!(
        l("1.1").access_vlan.map(|v| v.get()),
        Some(100),
        "replace leaves undeclared VLAN fields alone"
    );
    d.close().await.unwrap();
}

#[tokio::test]
async fn f5_rejected_transaction_changes_nothing_and_reports_the_device_message() {
    let srv = Server::start().await;
    let mut d = srv.driver().await;
    let before = srv.sim().data.clone();

    // A natural rejection: the new name is taken. The device's message is reported verbatim.
    let p = plan_for(
        &mut d,
        json!([{"id": 200, "name": "External"}, {"id": 300, "name": "fine"}]),
        json!([]),
    )
    .await;
    d.stage(&p).await.unwrap();
    let e = d.commit(&CommitOptions::default()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Rejected);
    let msg = e.to_string();
    assert!(
        msg.contains("transaction failed:01020066:3: The requested VLAN (/Common/External) already exists in partition Common."),
        "{msg}"
    );
    assert_eq!(
        srv.sim().data,
        before,
        "a failed transaction changes nothing"
    );
    assert!(srv.sim().txns.is_empty());

    // The injected failure: any transaction is refused with this text.
    let injected = "01070712:3: Caught configuration exception (0), injected by the test server.";
    srv.sim().reject_next_commit = Some(injected.into());
    let p = plan_for(
        &mut d,
        json!([{"id": 300, "name": "fine"}]),
        json!([{"name": "1.2", "description": "x"}]),
    )
    .await;
    d.stage(&p).await.unwrap();
    let e = d.commit(&CommitOptions::default()).await.unwrap_err();
    assert!(e.to_string().contains(injected), "{e}");
    assert_eq!(srv.sim().data, before);

    // The session goes on: the same plan applies once the device accepts it.
    d.stage(&p).await.unwrap();
    d.commit(&CommitOptions::default()).await.unwrap();
    assert!(
        srv.sim()
            .data
            .vlans
            .iter()
            .any(|v| v["name"] == "fine" && v["tag"] == 300)
    );
    d.close().await.unwrap();
}

#[tokio::test]
async fn f5_discard_and_rollback() {
    let srv = Server::start().await;
    let mut d = srv.driver().await;
    let before = srv.sim().data.clone();
    let obs_before = d.observe().await.unwrap();
    let p = plan_for(
        &mut d,
        json!([{"id": 500, "name": "temp"}, {"id": 11, "name": "Inside"}, {"id": 4093, "state": "absent"}]),
        json!([{"name": "1.1", "mode": "access", "access_vlan": 500, "description": "tmp", "enabled": false}]),
    )
    .await;

    // why-run: stage, discard: the transaction is deleted, nothing applied.
    d.stage(&p).await.unwrap();
    assert_eq!(srv.sim().txns.len(), 1);
    d.discard().await.unwrap();
    assert!(srv.sim().txns.is_empty());
    assert_eq!(srv.sim().data, before);

    // Commit, then roll back from the recorded pre-state (as after a failed verification).
    d.stage(&p).await.unwrap();
    d.commit(&CommitOptions::default()).await.unwrap();
    assert_ne!(srv.sim().data, before);
    d.rollback().await.unwrap();
    assert_eq!(d.observe().await.unwrap(), obs_before);
    {
        let sim = srv.sim();
        assert_eq!(sim.data.members, before.members);
        let names = |d: &Data| {
            d.vlans
                .iter()
                .map(|v| (v["name"].to_string(), v["tag"].as_u64()))
                .collect::<BTreeSet<_>>()
        };
        assert_eq!(names(&sim.data), names(&before));
        assert_eq!(sim.data.interfaces, before.interfaces);
    }
    d.close().await.unwrap();
}

/// How many times the session sent `GET path` (query strings are not logged).
fn gets(srv: &Server, path: &str) -> usize {
    let want = format!("GET {path}");
    srv.sim().log.iter().filter(|l| **l == want).count()
}

/// Facts, the planner's view and the pre-state read each collection once (the session's read cache);
/// after the commit, observe (verify) reads the device again.
#[tokio::test]
async fn f5_reads_each_collection_once_before_a_change_and_afresh_after_it() {
    let srv = Server::start().await;
    let mut d = srv.driver().await;
    d.facts().await.unwrap();
    let p = plan_for(
        &mut d,
        json!([{"id": 100, "name": "app"}]),
        json!([{"name": "1.1", "description": "to app"}]),
    )
    .await;
    d.stage(&p).await.unwrap();
    let collections = [
        "/mgmt/tm/net/interface",
        "/mgmt/tm/net/trunk",
        "/mgmt/tm/net/vlan",
    ];
    for path in collections {
        // `net/vlan` is the expanded listing (`?expandSubcollections=true`) for facts and observe.
        assert_eq!(gets(&srv, path), 1, "{path}: {:#?}", srv.sim().log);
    }
    d.commit(&CommitOptions::default()).await.unwrap();
    let after = d.observe().await.unwrap();
    assert!(after.vlans.iter().any(|v| v.id.get() == 100), "{after:?}");
    for path in collections {
        assert_eq!(gets(&srv, path), 2, "{path} after the commit");
    }
    d.confirm().await.unwrap();
    d.close().await.unwrap();
}

#[tokio::test]
async fn f5_token_expiry_triggers_a_new_login() {
    let srv = Server::start().await;
    let mut d = srv.driver().await;
    assert_eq!(d.rest().logins(), 1);
    // The device forgets every token (expired, or revoked): the next request gets 401, logs in, retries.
    srv.sim().tokens.clear();
    let o = d.observe().await.unwrap();
    assert_eq!(o.vlans.len(), 4);
    assert_eq!(d.rest().logins(), 2);
    assert_eq!(srv.sim().unauthorized, 1);

    // A short-lived token is renewed before it runs out, without a 401. Plain GETs: observe would
    // answer from the session's read cache without a request.
    srv.sim().token_lifetime = Duration::from_secs(2);
    srv.sim().tokens.clear();
    d.rest_mut().get(link::INTERFACE_COLLECTION).await.unwrap(); // 401, login with a 2 s token
    assert_eq!((d.rest().logins(), srv.sim().unauthorized), (3, 2));
    tokio::time::sleep(Duration::from_millis(1900)).await; // past 90 % of its lifetime
    d.rest_mut().get(link::INTERFACE_COLLECTION).await.unwrap();
    assert_eq!(
        (d.rest().logins(), srv.sim().unauthorized),
        (4, 2),
        "renewed before expiry"
    );
    d.close().await.unwrap();
}

#[tokio::test]
async fn f5_logout_on_close_and_auth_errors() {
    let srv = Server::start().await;
    let mut d = srv.driver().await;
    let token = srv.sim().tokens.iter().next().cloned().unwrap();
    d.close().await.unwrap();
    assert_eq!(srv.sim().logouts, 1);
    assert!(srv.sim().tokens.is_empty());
    assert!(
        srv.sim()
            .log
            .iter()
            .any(|l| l == &format!("DELETE /mgmt/shared/authz/tokens/{token}"))
    );

    // A wrong password: an authentication error that shows neither password.
    let e = F5Driver::connect(&srv.target("wrong-Pw-123"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Auth);
    let text = format!("{e} {e:?}");
    assert!(text.contains("Authentication failed."), "{text}");
    assert!(
        !text.contains("wrong-Pw-123") && !text.contains(PASSWORD),
        "{text}"
    );

    // Through the registry, with save_config on confirm.
    let mut t = srv.target(PASSWORD);
    t.options.insert("save_config".into(), json!(true));
    let mut d = netgw_drivers::registry::connect(&t).await.unwrap();
    assert_eq!(d.platform(), Platform::F5);
    let caps = d.capabilities();
    assert!(caps.candidate && !caps.confirmed_commit && !caps.rollback);
    let obs = d.observe().await.unwrap();
    let p = plan(
        &vlans(json!([{"id": 42, "name": "saved"}])),
        &obs.vlans,
        Policy::Merge,
        &[],
        &obs.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    d.stage(&p).await.unwrap();
    d.commit(&CommitOptions::default()).await.unwrap();
    d.confirm().await.unwrap();
    assert_eq!(srv.sim().saves, 1);
    d.close().await.unwrap();
    assert!(srv.sim().tokens.is_empty());
}

/// Every key path (objects' keys, arrays collapsed) of a JSON value.
fn shape(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(o) => {
            for (k, v) in o {
                // URL-keyed stats entries: keep the last path segment only.
                let k = if k.starts_with("https://") {
                    k.rsplit('/')
                        .next()
                        .unwrap_or(k)
                        .split('?')
                        .next()
                        .unwrap_or(k)
                } else {
                    k
                };
                let p = format!("{prefix}.{k}");
                out.insert(p.clone());
                shape(v, &p, out);
            }
        }
        Value::Array(a) => {
            for v in a {
                shape(v, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

fn shape_of(v: &Value) -> BTreeSet<String> {
    let mut s = BTreeSet::new();
    shape(v, "", &mut s);
    s
}

#[tokio::test]
async fn f5_test_server_speaks_real_shapes() {
    let srv = Server::start().await;
    srv.sim().device_info = true;
    let (status, login) = srv.login(PASSWORD).await;
    assert_eq!(status, 200);
    let real_login = fixture("f5/authn_login.json");
    // Same parser, same fields.
    rest::parse_login(&real_login).unwrap();
    let t = rest::parse_login(&login).unwrap();
    assert_eq!(shape_of(&login), shape_of(&real_login));
    let token = t.token.expose().to_owned();

    // Collections and stats documents: the server's answer has every key the real sample has, and the
    // same parser reads both.
    for (path, real) in [
        ("/mgmt/tm/sys/version", format!("{GENIE}/sys_version.json")),
        (
            "/mgmt/tm/sys/hardware",
            format!("{GENIE}/sys_hardware.json"),
        ),
        (
            "/mgmt/tm/sys/global-settings",
            format!("{GENIE}/sys_global-settings.json"),
        ),
        (
            "/mgmt/tm/net/interface",
            format!("{GENIE}/net_interface.json"),
        ),
        ("/mgmt/tm/net/vlan", format!("{GENIE}/net_vlan.json")),
        (
            "/mgmt/tm/net/lldp-neighbors",
            format!("{GENIE}/net_lldp-neighbors.json"),
        ),
        (
            "/mgmt/tm/net/trunk",
            "conformance/f5/links/genieparser_ve_14.1.2.1/net_trunk.json".to_owned(),
        ),
        (
            "/mgmt/shared/identified-devices/config/device-info",
            "conformance/f5/facts/conx_device_info_15.1.0.4/shared_identified-devices_config_device-info.json".to_owned(),
        ),
    ] {
        let real = fixture(&real);
        let (status, got) = srv.get(path, Some(&token)).await;
        assert_eq!(status, 200, "{path}");
        let missing: Vec<String> = shape_of(&real)
            .difference(&shape_of(&got))
            .cloned()
            .collect();
        assert!(
            missing.is_empty(),
            "{path}: the test server lacks {missing:?}"
        );
        assert_eq!(real.get("kind"), got.get("kind"), "{path}");
        let parse = |v: &Value| -> Value {
            let i = facts::FactsInputs {
                sys_version: path.ends_with("version").then_some(v),
                sys_hardware: path.ends_with("hardware").then_some(v),
                global_settings: path.ends_with("global-settings").then_some(v),
                device_info: path.ends_with("device-info").then_some(v),
                interfaces: path.ends_with("interface").then_some(v),
                vlans: path.ends_with("vlan").then_some(v),
                lldp_neighbors: path.ends_with("neighbors").then_some(v),
            };
            let mut out = serde_json::to_value(facts::build_facts(&i)).unwrap();
            out["links"] =
                serde_json::to_value(link::to_model(&link::parse_interfaces(v), &[])).unwrap();
            out["trunks"] = json!(link::parse_trunks(v).len());
            out["vlans_model"] =
                serde_json::to_value(vlan::to_model(&vlan::parse_vlans(v))).unwrap();
            out
        };
        assert_eq!(
            parse(&got),
            parse(&real),
            "{path}: the same parser reads the same facts from both"
        );
    }

    // The expanded VLAN answer and the subcollection: the real (non-expanded) item shape plus items
    // with the members in the tagged/untagged form.
    let (_, expanded) = srv
        .get("/mgmt/tm/net/vlan?expandSubcollections=true", Some(&token))
        .await;
    let parsed = vlan::parse_vlans(&expanded);
    let ext = parsed.iter().find(|v| v.name == "External").unwrap();
    assert_eq!(ext.members.as_deref().map(<[_]>::len), Some(1));
    let (_, sub) = srv
        .get(
            "/mgmt/tm/net/vlan/~Common~Internal/interfaces",
            Some(&token),
        )
        .await;
    let real_mock = fixture(
        "conformance/f5/links/MOCK_membership_and_trunk/net_vlan_interfaces__Internal.json",
    );
    assert_eq!(
        vlan::parse_vlan_interfaces(&sub).len(),
        vlan::parse_vlan_interfaces(&real_mock).len()
    );

    // Errors: the same parser, the same shape, on the real bodies and the server's.
    let (status, no_token) = srv.get("/mgmt/tm/net/vlan", None).await;
    assert_eq!(status, 401);
    let pair = |real: &str, got: &Value, status: u16| {
        let r = error::parse_error_value(status, &fixture(real)).unwrap();
        let g = error::parse_error_value(status, got).unwrap();
        assert_eq!(
            std::mem::discriminant(&r.shape),
            std::mem::discriminant(&g.shape),
            "{real}"
        );
        assert_eq!(shape_of(&fixture(real)), shape_of(got), "{real}");
        (r, g)
    };
    pair("f5/error_401_no_token.json", &no_token, 401);
    let (status, bad_login) = srv.login("nope").await;
    assert_eq!(status, 401);
    pair("f5/error_401_login_failed.json", &bad_login, 401);
    let (status, missing) = srv
        .get("/mgmt/tm/net/vlan/~Common~nope/interfaces", Some(&token))
        .await;
    assert_eq!(status, 404);
    let (r, g) = pair("f5/error_404_not_found.json", &missing, 404);
    assert_eq!(r.mcpd_id().map(|(id, _)| id), g.mcpd_id().map(|(id, _)| id));
    // A duplicate create outside a transaction: mcpd's 409, like the real one.
    let resp = reqwest::Client::new()
        .post(format!("http://{}/mgmt/tm/net/vlan", srv.addr))
        .header("X-F5-Auth-Token", &token)
        .json(&json!({"name": "External", "partition": "Common", "tag": 77}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 409);
    let dup: Value = resp.json().await.unwrap();
    let (r, g) = pair("f5/error_409_exists.json", &dup, 409);
    assert_eq!(r.mcpd_id(), g.mcpd_id());
}
