//! Node search (`GET /search/node?q=...`, Chef Server API "Search"), as an inventory selection.

use super::ChefError;
use super::api::Api;
use reqwest::Method;
use serde_json::Value;

/// Rows asked for per page.
pub const PAGE_ROWS: usize = 1000;
/// Most names one search returns (a query matching more is surely a mistake).
pub const MAX_RESULTS: usize = 100_000;

/// Names of the nodes matching a Solr query (`name:sw-*`, `role:leaf`, `platform:eos`), in the server's
/// order, following pages until `total` is reached.
pub async fn search_nodes(api: &Api, query: &str) -> Result<Vec<String>, ChefError> {
    let mut names = Vec::new();
    let mut start = 0usize;
    loop {
        let (start_s, rows_s) = (start.to_string(), PAGE_ROWS.to_string());
        let resp = api
            .request(
                Method::GET,
                "/search/node",
                &[("q", query), ("start", &start_s), ("rows", &rows_s)],
                None,
                None,
            )
            .await?
            .ok()?;
        let page = resp.json()?;
        let (rows, total) = parse_page(&page).ok_or_else(|| ChefError::Decode {
            url: resp.url.clone(),
            message: "expected {\"total\": N, \"rows\": [...]}".into(),
        })?;
        let got = rows.len();
        names.extend(rows);
        start += got;
        if got == 0 || start >= total {
            break;
        }
        if names.len() > MAX_RESULTS {
            return Err(ChefError::Decode {
                url: resp.url,
                message: format!("search {query:?} matched more than {MAX_RESULTS} nodes"),
            });
        }
    }
    Ok(names)
}

/// One page: node names (full rows have `name`; partial-search rows have `data.name`) and `total`.
fn parse_page(page: &Value) -> Option<(Vec<String>, usize)> {
    let rows = page.get("rows")?.as_array()?;
    let total = page
        .get("total")
        .and_then(Value::as_u64)
        .map(|t| t as usize)
        .unwrap_or(rows.len());
    let names = rows
        .iter()
        .filter_map(|r| {
            r.get("name")
                .or_else(|| r.get("data").and_then(|d| d.get("name")))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect();
    Some((names, total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pages() {
        let p = json!({"total": 3, "start": 0, "rows": [{"name": "a"}, {"data": {"name": "b"}}, {"x": 1}]});
        assert_eq!(parse_page(&p), Some((vec!["a".into(), "b".into()], 3)));
        assert_eq!(parse_page(&json!({"rows": []})), Some((vec![], 0)));
        assert_eq!(parse_page(&json!({"total": 1})), None);
    }
}
