//! Plans waiting for approval. `POST /v1/plans` keeps a plan file `netgw converge --why-run
//! --plan-out` wrote (checked against the inventory first); `GET /v1/plans` lists them and the
//! status page shows each with its changes; `POST /v1/converge` with `plan_id` (or `plan`, the file
//! itself) applies exactly that plan, as `netgw converge --plan` does. Applying needs the trigger
//! role, as every POST does.

use super::{ConvergeRequest, HttpError, S, SubmitError, scheduler, submit_problem};
use crate::engine::planned;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use netgw_models::plan_file::PlanFile;
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Plans kept at most; the oldest goes first (a plan is the file it came from: post it again).
const MAX_PLANS: usize = 100;

/// A plan kept for approval.
#[derive(Clone, Serialize)]
pub struct Pending {
    pub plan_id: String,
    pub submitted_by: String,
    pub submitted_at: String,
    pub nodes: Vec<String>,
    /// Nodes whose plan changes something.
    pub changing: Vec<String>,
    /// `pending`, or `applied` (by `run_id`).
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(skip)]
    pub plan: Arc<PlanFile>,
}

/// The plans this gateway keeps, in memory.
#[derive(Default)]
pub struct Plans(Mutex<BTreeMap<String, Pending>>);

impl Plans {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Pending>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn get(&self, id: &str) -> Option<Pending> {
        self.lock().get(id).cloned()
    }

    /// Every plan, newest first.
    pub fn list(&self) -> Vec<Pending> {
        let mut v: Vec<Pending> = self.lock().values().cloned().collect();
        v.sort_by(|a, b| b.submitted_at.cmp(&a.submitted_at));
        v
    }

    fn keep(&self, p: Pending) {
        let mut m = self.lock();
        if !m.contains_key(&p.plan_id) && m.len() >= MAX_PLANS {
            let oldest = m
                .values()
                .min_by(|a, b| a.submitted_at.cmp(&b.submitted_at))
                .map(|o| o.plan_id.clone());
            if let Some(o) = oldest {
                m.remove(&o);
            }
        }
        m.insert(p.plan_id.clone(), p);
    }

    fn applied(&self, id: &str, run_id: &str) {
        if let Some(p) = self.lock().get_mut(id) {
            p.status = "applied";
            p.run_id = Some(run_id.to_owned());
        }
    }
}

/// A plan from a request body: read as `converge --plan` reads a file, and checked against the
/// gateway's inventory. Its id is the digest of the plan, so posting one twice keeps it once.
fn accept(s: &S, text: &str, by: &str) -> Result<Pending, HttpError> {
    let plan = planned::parse(text, std::path::Path::new("(request)"))
        .map_err(|e| HttpError::bad_request(e.to_string()))?;
    let nodes = planned::inventory_nodes(&plan, s.sched.inventory())
        .map_err(|e| HttpError::bad_request(format!("plan: {e}")))?;
    let canonical = serde_json::to_vec(&plan).unwrap_or_default();
    let plan_id = data_encoding::HEXLOWER.encode(&Sha256::digest(&canonical)[..8]);
    if let Some(p) = s.plans.get(&plan_id) {
        return Ok(p);
    }
    let changing = plan
        .nodes
        .iter()
        .filter(|(_, n)| n.changes_anything())
        .map(|(name, _)| name.clone())
        .collect();
    let p = Pending {
        plan_id,
        submitted_by: by.to_owned(),
        submitted_at: crate::clock::now_rfc3339(),
        nodes,
        changing,
        status: "pending",
        run_id: None,
        plan: Arc::new(plan),
    };
    s.plans.keep(p.clone());
    Ok(p)
}

/// `POST /v1/plans`: keep a plan for approval.
pub(super) async fn post_plan(
    State(s): State<S>,
    axum::Extension(id): axum::Extension<super::Identity>,
    body: Bytes,
) -> Result<(StatusCode, Json<Pending>), HttpError> {
    let text = std::str::from_utf8(&body)
        .map_err(|_| HttpError::bad_request("a plan is JSON text (UTF-8)"))?;
    let p = accept(&s, text, &id.label())?;
    Ok((StatusCode::CREATED, Json(p)))
}

/// `GET /v1/plans`.
pub(super) async fn list_plans(State(s): State<S>) -> Json<Value> {
    Json(json!({"plans": s.plans.list()}))
}

/// `GET /v1/plans/{id}`: the plan kept, and the plan file itself (`plan`).
pub(super) async fn get_plan(
    State(s): State<S>,
    Path(id): Path<String>,
) -> Result<Json<Value>, HttpError> {
    let p = s
        .plans
        .get(&id)
        .ok_or_else(|| HttpError::not_found(format!("no plan {id:?} (see GET /v1/plans)")))?;
    let mut v = serde_json::to_value(&p).unwrap_or(Value::Null);
    v["plan"] = serde_json::to_value(p.plan.as_ref()).unwrap_or(Value::Null);
    Ok(Json(v))
}

/// `POST /v1/converge` with `plan_id` or `plan`: run exactly that plan on its nodes.
pub(super) async fn converge_plan(
    s: &S,
    who: &super::Identity,
    req: ConvergeRequest,
) -> Result<(StatusCode, Json<scheduler::Accepted>), HttpError> {
    let selected = req.nodes.is_some()
        || req.group.is_some()
        || req.limit.is_some()
        || req.topology.is_some()
        || req.search.is_some();
    if selected || req.why_run || req.atomic || req.check_links {
        return Err(HttpError::bad_request(
            "`plan` and `plan_id` take no selection, `why_run` or `atomic`: the plan names its nodes",
        ));
    }
    if s.history.is_shared() {
        // Runs of gateways on one database are queued through its queue table, which has no
        // place for a plan yet: a plan run would be taken for another gateway's and skipped.
        return Err(HttpError::new(
            StatusCode::NOT_IMPLEMENTED,
            "not_supported",
            "a gateway on a shared PostgreSQL does not apply plans yet: apply it with `netgw converge --plan FILE`",
        ));
    }
    let pending = match (req.plan_id, req.plan) {
        (Some(_), Some(_)) => {
            return Err(HttpError::bad_request("give `plan_id` or `plan`, not both"));
        }
        (Some(id), None) => s
            .plans
            .get(&id)
            .ok_or_else(|| HttpError::not_found(format!("no plan {id:?} (see GET /v1/plans)")))?,
        (None, Some(plan)) => accept(s, &plan.to_string(), &who.label())?,
        (None, None) => return Err(HttpError::bad_request("no plan given")),
    };
    if let Some(run) = &pending.run_id {
        return Err(HttpError::new(
            StatusCode::CONFLICT,
            "applied",
            format!(
                "plan {} was applied by run {run}; make a new plan (why-run) to change the devices again",
                pending.plan_id
            ),
        ));
    }
    let accepted = s
        .sched
        .submit_plan(pending.plan.clone(), &who.label())
        .map_err(|e: SubmitError| submit_problem(e))?;
    s.plans.applied(&pending.plan_id, &accepted.run_id);
    Ok((StatusCode::ACCEPTED, Json(accepted)))
}
