//! The OpenAPI 3.0 document of the trigger API (`GET /v1/openapi.json`), written as a JSON literal.
//!
//! Deriving it from the handlers (`utoipa`, `utoipa-axum`) was weighed and not adopted. utoipa 5
//! writes OpenAPI 3.1 (this document is 3.0.3: its `nullable` fields would become type arrays and
//! its version would change for the clients generated from it), and each handler and response type
//! would carry attributes holding the same prose as here, so the document would move, not shrink.
//! What deriving buys, a document that cannot drift from the router, is checked instead: the tests
//! below hold its paths to `super::ROUTES` both ways, and the run statuses come from
//! [`RunStatus::ALL`], the list the API itself checks `?status=` against.

use super::scheduler::RunStatus;
use serde_json::{Value, json};

fn err_ref() -> Value {
    json!({"description": "error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

fn std_errors(mut responses: Value) -> Value {
    if let Value::Object(m) = &mut responses {
        m.insert(
            "401".into(),
            json!({"$ref": "#/components/responses/Unauthorized"}),
        );
        m.insert(
            "403".into(),
            json!({"$ref": "#/components/responses/Forbidden"}),
        );
    }
    responses
}

pub fn document() -> Value {
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "netgw trigger API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Ask the gateway to converge network devices (docs/design.md §7). Every endpoint but /healthz needs a bearer token or a Chef-signed request (mixlib-authentication 1.0/1.1/1.3). Tokens and clients carry roles: `trigger` (POST /v1/converge) and `read` (every GET)."
        },
        "security": [{"bearer": []}, {"chefSignature": []}],
        "paths": paths(),
        "components": components()
    })
}

/// The endpoints: one entry per route of `router`.
fn paths() -> Value {
    let run_id =
        json!({"name": "id", "in": "path", "required": true, "schema": {"type": "string"}});
    json!({
        "/healthz": {"get": {
            "summary": "Liveness (no authentication)",
            "security": [],
            "responses": {"200": {"description": "alive", "content": {"application/json": {"schema": {"type": "object", "properties": {"status": {"type": "string", "enum": ["ok", "stopping"]}}}}}}}
        }},
        "/v1/webhooks/nautobot": {"post": {
            "summary": "A change in Nautobot, from its webhook (no token: signed by Nautobot)",
            "description": "Nautobot's webhook body as it sends it by default (`event`, `model`, `username`, `data`, `snapshots`), for dcim.device, dcim.interface, ipam.vlan and ipam.ipaddress. `X-Hook-Signature` must be the HMAC-SHA512 (hex) of the body under the secret `nautobot_webhook` names; without it the body is not read. The devices the change affects (the device; an interface's device; a VLAN's locations' devices and the devices whose interfaces carry it; an address's interfaces' devices) are triggered as by POST /v1/converge with `nodes` and coalesce alike; each run reads the device's intent from Nautobot when it starts. 404 when no `nautobot_webhook` is configured (docs/nautobot.md).",
            "security": [],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}}}},
            "responses": {
                "202": {"description": "the affected nodes were queued or coalesced", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Accepted"}}}},
                "200": {"description": "no device of the inventory is affected", "content": {"application/json": {"schema": {"type": "object", "properties": {"change": {"type": "string"}, "nodes": {"type": "array", "items": {"type": "string"}}, "note": {"type": "string"}}}}}},
                "400": err_ref(), "401": err_ref(), "404": err_ref(), "413": err_ref(), "429": err_ref(), "502": err_ref(), "503": err_ref()
            }
        }},
        "/v1/converge": {"post": {
            "summary": "Trigger a converge (role: trigger)",
            "description": "Exactly one selection: `nodes`, `group` (inventory group), `limit` (a selection in Ansible's --limit language, as `netgw converge` takes it: `access,core`, `acc*`, `all:!core`, `access:&site_a`; a term matching nothing is refused), `topology` (every inventory node of that containerlab lab: `data.containerlab.topology`, set for .clab.yml, topology-data.json and netgw-lab inventories) or `search` (a Chef search query; needs a Chef server store; nodes found outside the inventory are listed in `not_in_inventory`, not run). A node already queued coalesces into its pending run; a running node gets at most one pending follow-up run. Nodes must be in the inventory. Body at most max_body_bytes (64 KiB).",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ConvergeRequest"}}}},
            "responses": std_errors(json!({
                "202": {"description": "queued or coalesced", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Accepted"}}}},
                "400": err_ref(),
                "413": err_ref(),
                "409": err_ref(),
                "502": err_ref(),
                "429": {"description": "queue full", "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "seconds"}}, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
                "503": err_ref()
            }))
        }},
        "/v1/plans": {
            "post": {
                "summary": "Keep a plan for approval (role: trigger)",
                "description": "The body is a plan file `netgw converge --why-run --plan-out FILE` wrote (docs/usage.md, Plan, approve, apply): refused (400, naming the field) when it is not one, is of a newer format_version, or was made for another inventory. The status page shows it with its changes; POST /v1/converge with its plan_id (or the page's button, trigger role) applies exactly it.",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}}}},
                "responses": std_errors(json!({
                    "201": {"description": "kept (the same plan posted twice is kept once)", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PendingPlan"}}}},
                    "400": err_ref(),
                    "413": err_ref()
                }))
            },
            "get": {
                "summary": "Plans kept for approval, newest first (role: read)",
                "responses": std_errors(json!({
                    "200": {"description": "plans", "content": {"application/json": {"schema": {"type": "object", "properties": {"plans": {"type": "array", "items": {"$ref": "#/components/schemas/PendingPlan"}}}}}}}
                }))
            }
        },
        "/v1/plans/{id}": {"get": {
            "summary": "One plan kept for approval, with the plan file itself as `plan` (role: read)",
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": std_errors(json!({
                "200": {"description": "the plan", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PendingPlan"}}}},
                "404": err_ref()
            }))
        }},
        "/v1/runs": {"get": {
            "summary": "Run history, newest first (role: read)",
            "parameters": [
                {"name": "node", "in": "query", "schema": {"type": "string"}},
                {"name": "status", "in": "query", "schema": {"$ref": "#/components/schemas/RunStatus"}},
                {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50}}
            ],
            "responses": std_errors(json!({
                "200": {"description": "runs", "content": {"application/json": {"schema": {"type": "object", "properties": {"runs": {"type": "array", "items": {"$ref": "#/components/schemas/Run"}}}}}}},
                "400": err_ref()
            }))
        }},
        "/v1/runs/{id}": {"get": {
            "summary": "One run with its per-node results (role: read)",
            "parameters": [run_id.clone()],
            "responses": std_errors(json!({
                "200": {"description": "the run", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Run"}}}},
                "404": err_ref()
            }))
        }},
        "/v1/runs/{id}/events": {"get": {
            "summary": "Server-sent events of a run (role: read)",
            "description": "Past events are replayed first (resume with Last-Event-ID), then live ones; the stream ends after `run_finished` (or `run_interrupted`). Event names: run_queued, node_started, resource, node_finished, node_cancelled, run_finished, run_interrupted; data is JSON with `event`, `seq`, `at`.",
            "parameters": [run_id, {"name": "Last-Event-ID", "in": "header", "schema": {"type": "integer"}}],
            "responses": std_errors(json!({
                "200": {"description": "event stream", "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                "404": err_ref()
            }))
        }},
        "/v1/nodes/{name}": {"get": {
            "summary": "A node's last result, its runs in flight and a summary of its facts (role: read)",
            "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": std_errors(json!({
                "200": {"description": "the node", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}},
                "400": err_ref(),
                "404": err_ref()
            }))
        }},
        "/v1/gateway": {"get": {
            "summary": "The gateway's settings and its own log: starts, recoveries, shutdowns (role: read)",
            "responses": std_errors(json!({"200": {"description": "gateway", "content": {"application/json": {"schema": {"type": "object"}}}}}))
        }},
        "/metrics": {"get": {
            "summary": "Prometheus text exposition (role: read)",
            "responses": std_errors(json!({"200": {"description": "metrics", "content": {"text/plain; version=0.0.4": {"schema": {"type": "string"}}}}}))
        }},
        "/v1/openapi.json": {"get": {
            "summary": "This document (role: read)",
            "responses": std_errors(json!({"200": {"description": "OpenAPI 3 document", "content": {"application/json": {"schema": {"type": "object"}}}}}))
        }}
    })
}

/// Security schemes, shared responses and schemas.
fn components() -> Value {
    json!({
        "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer", "description": "The gateway stores only SHA-256 hashes of tokens."},
            "chefSignature": {"type": "apiKey", "in": "header", "name": "X-Ops-Authorization-1", "description": "Chef request signing (X-Ops-Sign, X-Ops-Userid, X-Ops-Timestamp, X-Ops-Content-Hash, X-Ops-Authorization-N; X-Ops-Server-API-Version for 1.3), verified with the client's configured public key; 15 minutes of clock skew allowed."}
        },
        "responses": {
            "Unauthorized": {"description": "missing or bad credentials", "headers": {"WWW-Authenticate": {"schema": {"type": "string"}}}, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
            "Forbidden": {"description": "a valid identity without the role", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        },
        "schemas": {
            "Error": {"type": "object", "required": ["error", "code"], "properties": {"error": {"type": "string"}, "code": {"type": "string"}}},
            "ConvergeRequest": {"type": "object", "additionalProperties": false, "properties": {
                "nodes": {"type": "array", "minItems": 1, "items": {"type": "string", "pattern": "^[-[:alnum:]_:.]+$", "maxLength": 250}},
                "group": {"type": "string"},
                "limit": {"type": "string", "minLength": 1},
                "topology": {"type": "string"},
                "search": {"type": "string"},
                "why_run": {"type": "boolean", "default": false},
                "atomic": {"type": "boolean", "default": false},
                "check_links": {"type": "boolean", "default": false},
                "plan_id": {"type": "string", "description": "apply exactly this plan kept by POST /v1/plans (instead of a selection; no why_run or atomic); 409 once applied"},
                "plan": {"type": "object", "description": "apply exactly this plan (the JSON `netgw converge --why-run --plan-out` writes), instead of a selection"}
            }},
            "PendingPlan": {"type": "object", "properties": {
                "plan_id": {"type": "string"},
                "submitted_by": {"type": "string"},
                "submitted_at": {"type": "string"},
                "nodes": {"type": "array", "items": {"type": "string"}},
                "changing": {"type": "array", "items": {"type": "string"}, "description": "nodes whose plan changes something"},
                "status": {"type": "string", "enum": ["pending", "applied"]},
                "run_id": {"type": "string", "description": "the run that applied it"}
            }},
            "Accepted": {"type": "object", "properties": {
                "run_id": {"type": "string"},
                "nodes": {"type": "array", "items": {"type": "string"}, "description": "queued in a new run"},
                "coalesced": {"type": "array", "items": {"type": "object", "properties": {"node": {"type": "string"}, "run_id": {"type": "string"}}}},
                "not_in_inventory": {"type": "array", "items": {"type": "string"}, "description": "found by `search` but not in the inventory (not run); absent when empty"}
            }},
            "RunStatus": {"type": "string", "enum": RunStatus::ALL.map(RunStatus::as_str)},
            "Run": {"type": "object", "properties": {
                "run_id": {"type": "string"},
                "status": {"$ref": "#/components/schemas/RunStatus"},
                "why_run": {"type": "boolean"},
                "requested_by": {"type": "string"},
                "created_at": {"type": "string"},
                "started_at": {"type": "string", "nullable": true},
                "finished_at": {"type": "string", "nullable": true},
                "nodes": {"type": "array", "items": {"type": "string"}},
                "pending": {"type": "array", "items": {"type": "string"}},
                "triggers": {"type": "integer"},
                "note": {"type": "string", "nullable": true},
                "summary": {"$ref": "#/components/schemas/Summary"},
                "report": {"$ref": "#/components/schemas/RunReport"}
            }},
            "Summary": {"type": "object", "properties": {"nodes": {"type": "integer"}, "succeeded": {"type": "integer"}, "failed": {"type": "integer"}, "resources": {"type": "integer"}, "updated": {"type": "integer"}}},
            "RunReport": {"type": "object", "description": "The engine's JSON report (`netgw converge --format json`).", "properties": {
                "run_id": {"type": "string"}, "why_run": {"type": "boolean"}, "started_at": {"type": "string", "nullable": true},
                "duration_secs": {"type": "number"}, "summary": {"$ref": "#/components/schemas/Summary"},
                "nodes": {"type": "array", "items": {"$ref": "#/components/schemas/NodeReport"}}
            }},
            "NodeReport": {"type": "object", "properties": {
                "name": {"type": "string"}, "status": {"type": "string", "enum": ["success", "failed"]}, "why_run": {"type": "boolean"},
                "platform": {"type": "string"}, "resources": {"type": "array", "items": {"type": "object"}},
                "updated": {"type": "integer"}, "total": {"type": "integer"}, "device_diff": {"type": "string"},
                "error": {"type": "string"}, "error_kind": {"type": "string", "enum": ["device", "transport", "timeout", "auth", "store", "server", "lock", "config", "internal", "cancelled", "transaction"]}, "device_error_kind": {"type": "string", "enum": ["connect", "auth", "timeout", "transport", "parse", "rejected", "verify", "unsupported", "config", "cancelled"]},
                "created": {"type": "boolean"}, "duration_secs": {"type": "number"}, "steps": {"type": "array", "items": {"type": "object"}}
            }},
            "Node": {"type": "object", "properties": {
                "name": {"type": "string"}, "in_inventory": {"type": "boolean"},
                "device": {"type": "object", "nullable": true, "description": "Where the inventory says the device is (null when the node is not in it).", "properties": {"platform": {"type": "string"}, "host": {"type": "string"}, "port": {"type": "integer", "nullable": true}}},
                "running_run": {"type": "string", "nullable": true}, "queued_runs": {"type": "array", "items": {"type": "string"}},
                "last_result": {"type": "object", "nullable": true, "properties": {"run_id": {"type": "string"}, "finished_at": {"type": "string"}, "report": {"$ref": "#/components/schemas/NodeReport"}}},
                "facts": {"type": "object", "nullable": true, "description": "Summary of the automatic attributes the last successful run saved."}
            }}
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_route_is_documented() {
        let d = super::document();
        for p in super::super::ROUTES {
            assert!(
                d["paths"].get(*p).is_some(),
                "{p} missing from the OpenAPI document"
            );
        }
    }

    #[test]
    fn every_documented_path_is_a_route() {
        let d = super::document();
        let paths = d["paths"].as_object().unwrap();
        for p in paths.keys() {
            assert!(
                super::super::ROUTES.contains(&p.as_str()),
                "{p} is documented but is no route"
            );
        }
    }

    #[test]
    fn the_run_statuses_are_the_apis() {
        let d = super::document();
        let listed = &d["components"]["schemas"]["RunStatus"]["enum"];
        let names: Vec<&str> = super::RunStatus::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(listed, &serde_json::json!(names));
        assert!(names.contains(&"finished_with_failures"), "{names:?}");
    }
}
