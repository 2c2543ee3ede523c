//! F5 BIG-IP iControl REST (HTTPS): token auth, `shared/identified-devices/config/device-info`,
//! `sys/version`, `net/vlan` (+ `interfaces` subcollection), `net/interface`, and transactions.
//!
//! Shapes per the recorded samples in `fixtures/real/f5` (genieparser 14.1.2.1 `sys/version`,
//! `net/vlan`, `net/interface`; CiscoTestAutomation/rest `authn/login`; error bodies `{"code",
//! "message", "errorStack", "apiError"}`). VLANs live in the shared switch model: a VLAN is a `tag`
//! plus a name; an interface untagged in a VLAN is an access port of it (or a trunk's native VLAN),
//! tagged membership is the trunk's allowed list.
//!
//! Trunks and self IPs: `f5_net.rs`.
//!
//! Transactions (`POST /mgmt/tm/transaction`, then requests carrying `X-F5-REST-Coordination-Id`
//! are queued, `PATCH /mgmt/tm/transaction/ID {"state": "VALIDATING"}` runs them all on a copy and
//! keeps the result only if every one succeeded) follow F5's iControl REST user guide; no recorded
//! sample exists (see the fixtures' Gaps).

use super::Device;
use super::fault::{ConnCtl, Step, StepFault};
use super::http::{HttpReply, HttpRequest};
use super::state::{DeviceState, Mode};
use netgw_models::resource::{VlanId, VlanSet};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

pub const VERSION: &str = "17.1.0";

#[derive(Debug, Default)]
struct Rest {
    tokens: HashSet<String>,
    next: u64,
    transactions: BTreeMap<u64, Vec<(String, String, Value)>>,
}

#[derive(Debug)]
pub struct F5Sim {
    pub dev: Arc<Device>,
    rest: Mutex<Rest>,
}

pub(crate) fn err(code: u16, message: &str) -> HttpReply {
    HttpReply::json(
        code,
        &json!({"code": code, "message": message, "errorStack": [], "apiError": 3}),
    )
}

impl F5Sim {
    pub fn new(dev: Arc<Device>) -> Arc<F5Sim> {
        Arc::new(F5Sim {
            dev,
            rest: Mutex::new(Rest::default()),
        })
    }

    fn rest(&self) -> std::sync::MutexGuard<'_, Rest> {
        self.rest.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub async fn handle_http(self: Arc<Self>, req: HttpRequest, ctl: Arc<ConnCtl>) -> HttpReply {
        let faults = &self.dev.faults;
        self.dev.answer_http(req.joined).await;
        let body: Value = if req.body.is_empty() {
            Value::Null
        } else {
            match serde_json::from_slice(&req.body) {
                Ok(v) => v,
                Err(e) => return err(400, &format!("Found invalid JSON body in the request: {e}")),
            }
        };
        if req.method == "POST" && req.path == "/mgmt/shared/authn/login" {
            return self.login(&body);
        }
        let authed = match (req.header("x-f5-auth-token"), req.basic_auth()) {
            (Some(t), _) => self.rest().tokens.contains(t),
            (None, Some((u, p))) => self.dev.check_login(&u, &p),
            _ => false,
        };
        if !authed {
            return err(
                401,
                "Authorization failed: no user authentication header or token detected. Uri:http://localhost:8100/mgmt/tm/net/vlan Referrer:127.0.0.1 Sender:127.0.0.1",
            );
        }
        // Logout: delete the token (the real device answers with the token item).
        if req.method == "DELETE"
            && let Some(t) = req.path.strip_prefix("/mgmt/shared/authz/tokens/")
        {
            let removed = self.rest().tokens.remove(t);
            return if removed {
                HttpReply::json(
                    200,
                    &json!({"token": t, "name": t, "kind": "shared:authz:tokens:authtokenitemstate"}),
                )
            } else {
                err(404, &format!("Object not found - {t}"))
            };
        }
        // Transactions.
        if req.path == "/mgmt/tm/transaction" && req.method == "POST" {
            if let Some(refused) = step_refused(faults.at_step(Step::Stage).await, &ctl) {
                return refused;
            }
            let mut r = self.rest();
            r.next += 1;
            let id = 1_700_000_000_000 + r.next;
            r.transactions.insert(id, Vec::new());
            return HttpReply::json(
                200,
                &json!({"transId": id, "state": "STARTED", "timeoutSeconds": 120, "asyncExecution": false,
                "validateOnly": false, "executionTimeout": 300, "executionTime": 0, "failureReason": "",
                "kind": "tm:transactionstate", "selfLink": format!("https://localhost/mgmt/tm/transaction/{id}")}),
            );
        }
        if let Some(id) = req
            .path
            .strip_prefix("/mgmt/tm/transaction/")
            .and_then(|s| s.parse::<u64>().ok())
        {
            return self.transaction(id, &req.method, &body, &ctl).await;
        }
        if let Some(tid) = req
            .header("x-f5-rest-coordination-id")
            .and_then(|s| s.parse::<u64>().ok())
        {
            let mut r = self.rest();
            let Some(q) = r.transactions.get_mut(&tid) else {
                return err(404, &format!("Transaction {tid} not found"));
            };
            q.push((req.method.clone(), req.path.clone(), body.clone()));
            let order = q.len();
            return HttpReply::json(
                200,
                &json!({"transId": tid, "evalOrder": order, "method": req.method, "uri": req.path, "body": body}),
            );
        }
        if req.method == "POST" && req.path.trim_end_matches('/') == "/mgmt/tm/sys/config" {
            return save_config(&self.dev, &body, &ctl).await;
        }
        if req.method == "GET" && faults.on_read() {
            ctl.kill();
            return err(500, "reset");
        }
        if req.method != "GET" && faults.reset_now(Step::BeforeCommit) {
            ctl.kill();
            return err(500, "reset");
        }
        if req.method == "GET" && req.path == DEVICE_INFO {
            return HttpReply::json(
                200,
                &device_info(&self.dev.state().hostname, &self.dev.serial()),
            );
        }
        let mut st = self.dev.state().clone();
        match apply(&mut st, &req.method, &req.path, &body) {
            Ok(v) => {
                if req.method != "GET" {
                    *self.dev.state() = st;
                    if faults.after_commit() {
                        ctl.kill();
                    }
                }
                HttpReply::json(200, &v)
            }
            Err(e) => e,
        }
    }

    /// `POST /mgmt/shared/authn/login`: a token for the device's user (iControl REST token auth).
    fn login(&self, body: &Value) -> HttpReply {
        let u = body.get("username").and_then(Value::as_str).unwrap_or("");
        let p = body.get("password").and_then(Value::as_str).unwrap_or("");
        if !self.dev.check_login(u, p) {
            return err(401, "Authentication failed.");
        }
        let token = {
            let mut r = self.rest();
            r.next += 1;
            let t = format!("NGWLAB{:08}{:010}", self.dev.index, r.next);
            r.tokens.insert(t.clone());
            t
        };
        HttpReply::json(
            200,
            &json!({
                "username": u,
                "loginReference": {"link": "https://localhost/mgmt/cm/system/authn/providers/tmos/1f44a60e-11a7-3c51-a49f-82983026b41b/login"},
                "loginProviderName": "tmos",
                "token": {"token": token, "name": token, "userName": u, "authProviderName": "tmos",
                    "user": {"link": format!("https://localhost/mgmt/shared/authz/users/{u}")},
                    "timeout": 1200, "startTime": "2026-01-01T00:00:00.000+0000", "address": "127.0.0.1", "partition": "[All]",
                    "generation": 1, "lastUpdateMicros": 0, "expirationMicros": 0,
                    "kind": "shared:authz:tokens:authtokenitemstate", "selfLink": format!("https://localhost/mgmt/shared/authz/tokens/{token}")},
                "generation": 0, "lastUpdateMicros": 0
            }),
        )
    }

    async fn transaction(&self, id: u64, method: &str, body: &Value, ctl: &ConnCtl) -> HttpReply {
        let faults = &self.dev.faults;
        match method {
            "GET" => match self.rest().transactions.get(&id) {
                Some(q) => HttpReply::json(
                    200,
                    &json!({"transId": id, "state": "STARTED", "items": q.iter().enumerate().map(|(i, (m, p, b))| json!({"evalOrder": i + 1, "method": m, "uri": p, "body": b})).collect::<Vec<_>>()}),
                ),
                None => err(404, &format!("Transaction {id} not found")),
            },
            "DELETE" => {
                self.rest().transactions.remove(&id);
                HttpReply::json(200, &json!({}))
            }
            "PATCH" if body.get("state").and_then(Value::as_str) == Some("VALIDATING") => {
                let Some(q) = self.rest().transactions.remove(&id) else {
                    return err(404, &format!("Transaction {id} not found"));
                };
                if faults.reset_now(Step::BeforeCommit) {
                    ctl.kill();
                    return err(500, "reset");
                }
                if let Some(d) = faults.slow_commit {
                    tokio::time::sleep(d).await;
                }
                if let Some(m) = &faults.reject_commit {
                    return err(400, &format!("transaction failed:{m}"));
                }
                let mut st = self.dev.state().clone();
                for (m, p, b) in &q {
                    if let Err(e) = apply(&mut st, m, p, b) {
                        let msg = serde_json::from_slice::<Value>(&e.body)
                            .ok()
                            .and_then(|v| {
                                v.get("message").and_then(Value::as_str).map(str::to_owned)
                            })
                            .unwrap_or_default();
                        return err(400, &format!("transaction failed:{msg}"));
                    }
                }
                *self.dev.state() = st;
                if faults.after_commit() {
                    ctl.kill();
                }
                HttpReply::json(
                    200,
                    &json!({"transId": id, "state": "COMPLETED", "timeoutSeconds": 120, "kind": "tm:transactionstate",
                    "selfLink": format!("https://localhost/mgmt/tm/transaction/{id}")}),
                )
            }
            _ => err(400, "unsupported transaction request"),
        }
    }
}

/// A stage or confirm fault as the device's answer (`None`: go on).
fn step_refused(f: Option<StepFault>, ctl: &ConnCtl) -> Option<HttpReply> {
    match f? {
        StepFault::Reset => {
            ctl.kill();
            Some(err(500, "reset"))
        }
        StepFault::Reject(m) => Some(err(400, &m)),
    }
}

/// `POST /mgmt/tm/sys/config` `{"command": "save"}` (`tmsh save sys config`): what the driver sends
/// at confirm unless `save_config: false`. The running configuration becomes the one the device
/// boots from.
async fn save_config(dev: &Device, body: &Value, ctl: &ConnCtl) -> HttpReply {
    if body.get("command").and_then(Value::as_str) != Some("save") {
        return err(400, "Found unsupported command: only save is simulated");
    }
    if let Some(refused) = step_refused(dev.faults.at_step(Step::Confirm).await, ctl) {
        return refused;
    }
    dev.save_startup();
    HttpReply::json(
        200,
        &json!({"kind": "tm:sys:config:runstate", "command": "save"}),
    )
}

fn vlan_json(st: &DeviceState, id: u16, name: &str) -> Value {
    json!({
        "kind": "tm:net:vlan:vlanstate", "name": name, "partition": "Common", "fullPath": format!("/Common/{name}"), "generation": 1,
        "selfLink": format!("https://localhost/mgmt/tm/net/vlan/~Common~{name}?ver={VERSION}"),
        "autoLasthop": "default", "cmpHash": "default", "dagRoundRobin": "disabled", "dagTunnel": "outer", "failsafe": "disabled",
        "failsafeAction": "failover-restart-tm", "failsafeTimeout": 90, "fwdMode": "l3", "hardwareSyncookie": "disabled",
        "ifIndex": 100 + u32::from(id), "learning": "enable-forward", "mtu": 1500,
        "sflow": {"pollInterval": 0, "pollIntervalGlobal": "yes", "samplingRate": 0, "samplingRateGlobal": "yes"},
        "sourceChecking": "disabled", "synFloodRateLimit": 2000, "syncacheThreshold": 32000, "tag": id,
        "interfacesReference": {"link": format!("https://localhost/mgmt/tm/net/vlan/~Common~{name}/interfaces?ver={VERSION}"), "isSubcollection": true},
        "_members": vlan_members(st, id)
    })
}

fn vlan_members(st: &DeviceState, id: u16) -> Vec<Value> {
    let Ok(vid) = VlanId::new(i64::from(id)) else {
        return Vec::new();
    };
    st.interfaces
        .iter()
        .filter_map(|(n, f)| match f.mode {
            Mode::Access if f.access_vlan == id => Some(json!({"name": n, "tagged": false})),
            Mode::Trunk if f.native_vlan == id => Some(json!({"name": n, "untagged": true})),
            Mode::Trunk if f.trunk_allowed.contains(vid) => {
                Some(json!({"name": n, "tagged": true}))
            }
            _ => None,
        })
        .collect()
}

fn strip_members(mut v: Value) -> Value {
    if let Some(m) = v.as_object_mut() {
        m.remove("_members");
    }
    v
}

/// `~Common~web` / `web` -> `web`.
fn obj_name(s: &str) -> &str {
    s.rsplit('~').next().unwrap_or(s)
}

/// The tag of the VLAN named `name`, or the device's 404 answer.
fn vlan_or_404(st: &DeviceState, name: &str) -> Result<u16, HttpReply> {
    find_vlan(st, name).ok_or_else(|| {
        err(
            404,
            &format!("01020036:3: The requested VLAN (/Common/{name}) was not found."),
        )
    })
}

fn find_vlan(st: &DeviceState, name: &str) -> Option<u16> {
    st.vlans
        .iter()
        .find(|(_, n)| n.as_str() == name)
        .map(|(id, _)| *id)
}

/// Put interface memberships of VLAN `id` as written (`[{name, tagged}]`).
fn set_members(st: &mut DeviceState, id: u16, members: &[Value]) -> Result<(), HttpReply> {
    let vid = VlanId::new(i64::from(id)).map_err(|_| err(400, "bad tag"))?;
    // Remove the VLAN from every port first (PUT/PATCH replace the membership list).
    for (_, f) in st.interfaces.iter_mut() {
        if f.mode == Mode::Access && f.access_vlan == id {
            f.access_vlan = 1;
        }
        if f.mode == Mode::Trunk {
            f.trunk_allowed = f.trunk_allowed.difference(&VlanSet::from_ids([vid]));
        }
    }
    for m in members {
        let name = m.get("name").and_then(Value::as_str).unwrap_or("");
        let tagged = m.get("tagged").and_then(Value::as_bool).unwrap_or(false);
        super::f5_net::vlan_member_allowed(st, name)?;
        let Some(f) = st.iface_mut(name) else {
            return Err(err(
                400,
                &format!("01070523:3: No Vlan association for STP Interface Member {name}"),
            ));
        };
        if tagged {
            if f.mode != Mode::Trunk {
                f.mode = Mode::Trunk;
                f.trunk_allowed = super::state::VlanBits::new();
            }
            f.trunk_allowed.insert(vid);
        } else {
            f.mode = Mode::Access;
            f.access_vlan = id;
        }
    }
    Ok(())
}

const DEVICE_INFO: &str = "/mgmt/shared/identified-devices/config/device-info";

/// The REST framework's `device-info`, in the shape of f5-conx-core's 15.1.0.4 recording (a VE
/// licensed for LTM).
fn device_info(hostname: &str, serial: &str) -> Value {
    json!({"baseMac": "00:50:56:00:00:01", "hostMac": "00:50:56:00:00:01", "halUuid": serial,
        "chassisSerialNumber": serial,
        "slots": [{"volume": "HD1.1", "product": "BIG-IP", "version": VERSION, "build": "0.0.6",
            "isActive": true}],
        "license": {"licenseEndDateTime": "2027-01-01T00:00:00-00:00", "registrationKey": "NETGW-LAB",
            "activeModules": ["LTM, Base, VE|NETGW-LAB"], "generation": 0, "lastUpdateMicros": 0},
        "interfaces": ["1.0", "mgmt"], "isIControlRestSupported": true, "icrdPort": 8100,
        "time": 0, "physicalMemory": 8192, "platform": "Z100", "cpu": "netgw-lab",
        "machineId": serial, "address": "127.0.0.1", "hostname": hostname, "version": VERSION,
        "product": "BIG-IP", "platformMarketingName": "BIG-IP Virtual Edition", "edition": "Final",
        "build": "0.0.6", "restFrameworkVersion": format!("{VERSION}-0.0.6"),
        "managementAddress": "127.0.0.1", "mcpDeviceName": format!("/Common/{hostname}"),
        "isClustered": false, "isVirtual": true, "hypervisorType": "0", "generation": 0,
        "lastUpdateMicros": 0, "kind": "shared:resolver:device-groups:deviceinfostate",
        "selfLink": "https://localhost/mgmt/shared/identified-devices/config/device-info"})
}

/// One REST call on a state (also the body of a transaction step).
fn apply(st: &mut DeviceState, method: &str, path: &str, body: &Value) -> Result<Value, HttpReply> {
    let parts: Vec<&str> = path
        .trim_end_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    match (method, parts.as_slice()) {
        ("GET", ["mgmt", "tm", "sys", "version"]) => Ok(json!({
            "kind": "tm:sys:version:versionstats", "selfLink": format!("https://localhost/mgmt/tm/sys/version?ver={VERSION}"),
            "entries": {"https://localhost/mgmt/tm/sys/version/0": {"nestedStats": {"entries": {
                "Build": {"description": "0.0.6"}, "Date": {"description": "Thu Jan  1 00:00:00 PST 2026"},
                "Edition": {"description": "Final"}, "Product": {"description": "BIG-IP"},
                "Title": {"description": "Main Package"}, "Version": {"description": VERSION}}}}}
        })),
        ("GET", ["mgmt", "tm", "sys", "global-settings"]) => Ok(
            json!({"kind": "tm:sys:global-settings:global-settingsstate", "hostname": st.hostname}),
        ),
        ("GET", ["mgmt", "tm", "net", "vlan"]) => {
            let items: Vec<Value> = st
                .vlans
                .iter()
                .filter(|(id, _)| **id != 1)
                .map(|(id, n)| strip_members(vlan_json(st, *id, n)))
                .collect();
            Ok(
                json!({"kind": "tm:net:vlan:vlancollectionstate", "selfLink": format!("https://localhost/mgmt/tm/net/vlan?ver={VERSION}"), "items": items}),
            )
        }
        ("GET", ["mgmt", "tm", "net", "vlan", name]) => {
            let id = vlan_or_404(st, obj_name(name))?;
            Ok(strip_members(vlan_json(st, id, obj_name(name))))
        }
        ("GET", ["mgmt", "tm", "net", "vlan", name, "interfaces"]) => {
            let n = obj_name(name);
            let id = vlan_or_404(st, n)?;
            let items: Vec<Value> = vlan_members(st, id)
                .into_iter()
                .map(|m| {
                    let iname = m["name"].as_str().unwrap_or("").to_owned();
                    let tagged = m.get("tagged").and_then(Value::as_bool).unwrap_or(false);
                    json!({"kind": "tm:net:vlan:interfaces:interfacesstate", "name": iname, "fullPath": iname, "generation": 1,
                        "selfLink": format!("https://localhost/mgmt/tm/net/vlan/~Common~{n}/interfaces/{iname}?ver={VERSION}"),
                        "tagMode": "none", if tagged { "tagged" } else { "untagged" }: true})
                })
                .collect();
            Ok(
                json!({"kind": "tm:net:vlan:interfaces:interfacescollectionstate", "selfLink": format!("https://localhost/mgmt/tm/net/vlan/~Common~{n}/interfaces?ver={VERSION}"), "items": items}),
            )
        }
        ("POST", ["mgmt", "tm", "net", "vlan"]) => create_vlan(st, body),
        ("PATCH" | "PUT", ["mgmt", "tm", "net", "vlan", name]) => update_vlan(st, name, body),
        ("DELETE", ["mgmt", "tm", "net", "vlan", name]) => {
            let n = obj_name(name);
            let id = vlan_or_404(st, n)?;
            super::f5_net::vlan_in_use(st, n)?;
            set_members(st, id, &[])?;
            st.vlans.remove(&id);
            Ok(json!({}))
        }
        ("GET", ["mgmt", "tm", "net", "interface"]) => {
            let items: Vec<Value> = st
                .interfaces
                .iter()
                .filter(|(n, _)| !st.trunks.contains_key(n))
                .map(|(n, f)| iface_json(n, f))
                .collect();
            Ok(
                json!({"kind": "tm:net:interface:interfacecollectionstate", "selfLink": format!("https://localhost/mgmt/tm/net/interface?ver={VERSION}"), "items": items}),
            )
        }
        ("GET", ["mgmt", "tm", "net", "interface", name]) => {
            st.iface(name).map(|f| iface_json(name, f)).ok_or_else(|| {
                err(
                    404,
                    &format!("01020036:3: The requested interface ({name}) was not found."),
                )
            })
        }
        ("PATCH" | "PUT", ["mgmt", "tm", "net", "interface", name]) => {
            update_interface(st, name, body)
        }
        _ if let Some(r) = super::f5_net::apply_net(st, method, parts.as_slice(), body) => r,
        ("GET", _) => Err(err(
            404,
            &format!("URI path {path} not registered.  Please try again later."),
        )),
        _ => Err(err(400, &format!("Unsupported request {method} {path}"))),
    }
}

/// `POST /mgmt/tm/net/vlan`: a new VLAN with its tag and members.
fn create_vlan(st: &mut DeviceState, body: &Value) -> Result<Value, HttpReply> {
    let name = body
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| err(400, "name is required"))?
        .to_owned();
    let tag = body
        .get("tag")
        .and_then(Value::as_u64)
        .and_then(|t| u16::try_from(t).ok())
        .filter(|t| (1..=4094).contains(t))
        .ok_or_else(|| err(400, "tag must be 1..4094"))?;
    if find_vlan(st, &name).is_some() || st.vlans.contains_key(&tag) {
        return Err(err(
            409,
            &format!(
                "01020066:3: The requested VLAN (/Common/{name}) already exists in partition Common."
            ),
        ));
    }
    st.vlans.insert(tag, name.clone());
    if let Some(m) = body.get("interfaces").and_then(Value::as_array) {
        set_members(st, tag, m)?;
    }
    Ok(strip_members(vlan_json(st, tag, &name)))
}

/// `PATCH`/`PUT` of one VLAN: its members (the tag of a VLAN cannot change).
fn update_vlan(st: &mut DeviceState, name: &str, body: &Value) -> Result<Value, HttpReply> {
    let n = obj_name(name).to_owned();
    let id = vlan_or_404(st, &n)?;
    if let Some(t) = body.get("tag").and_then(Value::as_u64)
        && t != u64::from(id)
    {
        return Err(err(
            400,
            "01070712:3: Cannot change the tag of a VLAN in use",
        ));
    }
    if let Some(m) = body.get("interfaces").and_then(Value::as_array) {
        set_members(st, id, m)?;
    }
    Ok(strip_members(vlan_json(st, id, &n)))
}

/// `PATCH`/`PUT` of one interface: description, enabled, MTU.
fn update_interface(st: &mut DeviceState, name: &str, body: &Value) -> Result<Value, HttpReply> {
    let f = st.iface_mut(name).ok_or_else(|| {
        err(
            404,
            &format!("01020036:3: The requested interface ({name}) was not found."),
        )
    })?;
    if let Some(d) = body.get("description").and_then(Value::as_str) {
        f.description = d.to_owned();
    }
    if let Some(e) = body.get("enabled").and_then(Value::as_bool) {
        f.enabled = e;
    }
    if body.get("disabled").and_then(Value::as_bool) == Some(true) {
        f.enabled = false;
    }
    if let Some(m) = body.get("mtu").and_then(Value::as_u64) {
        f.mtu = u32::try_from(m).map_err(|_| err(400, "bad mtu"))?;
    }
    let v = iface_json(name, f);
    Ok(v)
}

fn iface_json(name: &str, f: &super::state::Iface) -> Value {
    let mut v = json!({
        "kind": "tm:net:interface:interfacestate", "name": name, "fullPath": name, "generation": 1,
        "selfLink": format!("https://localhost/mgmt/tm/net/interface/{name}?ver={VERSION}"),
        "bundle": "not-supported", "bundleSpeed": "not-supported", "enabled": f.enabled, "flowControl": "tx-rx",
        "forceGigabitFiber": "disabled", "forwardErrorCorrection": "not-supported", "ifIndex": 48 + f.ifindex * 16,
        "lldpAdmin": "txonly", "lldpTlvmap": 130943, "macAddress": f.mac, "mediaActive": "10000T-FD", "mediaFixed": "10000T-FD",
        "mediaMax": "auto", "mediaSfp": "auto", "mtu": f.mtu, "portFwdMode": "l3", "preferPort": "sfp", "qinqEthertype": "0x8100",
        "sflow": {"pollInterval": 0, "pollIntervalGlobal": "yes"}, "stp": "enabled", "stpAutoEdgePort": "enabled",
        "stpEdgePort": "true", "stpLinkType": "auto"
    });
    if !f.description.is_empty()
        && let Some(m) = v.as_object_mut()
    {
        m.insert("description".into(), Value::String(f.description.clone()));
    }
    if !f.enabled
        && let Some(m) = v.as_object_mut()
    {
        m.insert("disabled".into(), Value::Bool(true));
    }
    v
}
