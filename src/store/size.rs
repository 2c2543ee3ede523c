//! The one node size check: every store refuses a node body over [`MAX_NODE_BYTES`] before it is
//! written, naming the automatic attributes that made it large.

use netgw_models::Attrs;
use serde::Serialize;
use serde_json::Value;

/// The largest node body (bytes of its JSON) a store accepts: the Chef server's limit on a node
/// object (its `max_request_size` for JSON bodies), kept for the local repo too so a node that
/// converges against one store also fits the other.
pub const MAX_NODE_BYTES: usize = 1_000_000;

/// A body over [`MAX_NODE_BYTES`]: its size, and its largest automatic subtrees as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge {
    pub size: usize,
    pub largest: String,
}

/// Checks the JSON size of `body` (counted while serialising, not built) against
/// [`MAX_NODE_BYTES`]; over it, names the largest subtrees of `automatic`.
pub fn check_node_size(body: &impl Serialize, automatic: Option<&Attrs>) -> Result<(), TooLarge> {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let size = serde_json::to_writer(&mut count, body)
        .map(|()| count.0)
        .unwrap_or(usize::MAX);
    if size <= MAX_NODE_BYTES {
        return Ok(());
    }
    Err(TooLarge {
        size,
        largest: largest_subtrees(automatic),
    })
}

fn by_size(m: &Attrs) -> Vec<(&String, usize, &Value)> {
    let mut v: Vec<(&String, usize, &Value)> = m
        .iter()
        .map(|(k, v)| (k, serde_json::to_vec(v).map(|b| b.len()).unwrap_or(0), v))
        .collect();
    v.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(y.0)));
    v
}

/// The three largest `automatic.KEY` subtrees with their sizes; for the largest, its largest child too.
fn largest_subtrees(automatic: Option<&Attrs>) -> String {
    let Some(a) = automatic else {
        return "(no automatic attributes)".into();
    };
    let top = by_size(a);
    let mut parts: Vec<String> = top
        .iter()
        .take(3)
        .map(|(k, n, _)| format!("automatic.{k} ({n} bytes)"))
        .collect();
    if let Some((k, _, Value::Object(child))) = top.first()
        && let Some((ck, cn, _)) = by_size(child).first()
    {
        parts.push(format!("within it automatic.{k}.{ck} ({cn} bytes)"));
    }
    if parts.is_empty() {
        "(no automatic attributes)".into()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_the_serialised_body_exactly() {
        let at = |n: usize| json!({"automatic": {"big": "x".repeat(n)}});
        let base = serde_json::to_vec(&at(0)).unwrap().len();
        let exact = at(MAX_NODE_BYTES - base);
        assert_eq!(serde_json::to_vec(&exact).unwrap().len(), MAX_NODE_BYTES);
        assert_eq!(check_node_size(&exact, None), Ok(()));
        let over = at(MAX_NODE_BYTES - base + 1);
        let e = check_node_size(&over, over["automatic"].as_object()).unwrap_err();
        assert_eq!(e.size, MAX_NODE_BYTES + 1);
        assert!(e.largest.starts_with("automatic.big ("), "{}", e.largest);
    }
}
