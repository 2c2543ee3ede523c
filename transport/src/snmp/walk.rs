//! A bounded subtree walk as a pure state machine: the client asks it which OID to request next and feeds it
//! each response; it decides when the walk is over (RFC 3416 §4.2.2/§4.2.3 semantics) without any I/O, so
//! the stopping rules are tested without an agent.
//!
//! A walk stops at the end of the subtree (first OID outside the root), at endOfMibView, or on an empty
//! response. It fails on a non-increasing OID (an agent bug that would otherwise loop forever) and when it
//! collects more than `max_oids` varbinds. The time bound is enforced by the client.

use std::time::Duration;

use super::error::{SnmpError, WalkLimit};
use super::oid::{Oid, Varbind};

/// Bounds on one walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkLimits {
    /// Fail when the subtree has more than this many instances.
    pub max_oids: usize,
    /// Fail when the walk takes longer than this, retries included.
    pub max_time: Duration,
}

impl Default for WalkLimits {
    fn default() -> Self {
        WalkLimits {
            max_oids: 100_000,
            max_time: Duration::from_secs(120),
        }
    }
}

/// What to do after a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalkStep {
    /// Request the instances after this OID.
    Continue(Oid),
    /// The subtree is complete.
    Done,
}

/// The state of one walk.
#[derive(Debug)]
pub struct WalkState {
    device: String,
    root: Oid,
    cursor: Oid,
    max_oids: usize,
    collected: Vec<Varbind>,
}

impl WalkState {
    pub fn new(device: impl Into<String>, root: Oid, max_oids: usize) -> Self {
        WalkState {
            device: device.into(),
            cursor: root.clone(),
            root,
            max_oids,
            collected: Vec::new(),
        }
    }

    pub fn root(&self) -> &Oid {
        &self.root
    }

    /// The OID the next GETNEXT/GETBULK asks for.
    pub fn cursor(&self) -> &Oid {
        &self.cursor
    }

    pub fn collected(&self) -> usize {
        self.collected.len()
    }

    /// Feed the varbinds of one GETNEXT or single-OID GETBULK response, in order.
    pub fn accept(&mut self, batch: Vec<Varbind>) -> Result<WalkStep, SnmpError> {
        if batch.is_empty() {
            return Ok(WalkStep::Done);
        }
        for vb in batch {
            if vb.value == super::oid::SnmpValue::EndOfMibView || !vb.oid.starts_with(&self.root) {
                return Ok(WalkStep::Done);
            }
            if vb.oid <= self.cursor {
                return Err(SnmpError::NonIncreasing {
                    device: self.device.clone(),
                    root: self.root.clone(),
                    previous: self.cursor.clone(),
                    got: vb.oid,
                });
            }
            self.cursor = vb.oid.clone();
            if !vb.value.is_exception() {
                if self.collected.len() >= self.max_oids {
                    return Err(SnmpError::WalkLimit {
                        device: self.device.clone(),
                        root: self.root.clone(),
                        limit: WalkLimit::MaxOids(self.max_oids),
                        collected: self.collected.len(),
                    });
                }
                self.collected.push(vb);
            }
        }
        Ok(WalkStep::Continue(self.cursor.clone()))
    }

    pub fn finish(self) -> Vec<Varbind> {
        self.collected
    }
}

#[cfg(test)]
mod tests {
    use super::super::oid::SnmpValue;
    use super::*;

    fn vb(oid: &str, v: i64) -> Varbind {
        Varbind::new(oid.parse().unwrap(), SnmpValue::Integer(v))
    }

    fn state(max: usize) -> WalkState {
        WalkState::new("sw1", "1.3.6.1.2.1.2.2.1.7".parse().unwrap(), max)
    }

    #[test]
    fn walk_stops_at_subtree_end() {
        let mut w = state(100);
        let step = w
            .accept(vec![
                vb("1.3.6.1.2.1.2.2.1.7.1", 1),
                vb("1.3.6.1.2.1.2.2.1.7.2", 2),
            ])
            .unwrap();
        assert_eq!(
            step,
            WalkStep::Continue("1.3.6.1.2.1.2.2.1.7.2".parse().unwrap())
        );
        let step = w
            .accept(vec![
                vb("1.3.6.1.2.1.2.2.1.7.3", 1),
                vb("1.3.6.1.2.1.2.2.1.8.1", 1),
                vb("1.3.6.1.2.1.2.2.1.8.2", 1),
            ])
            .unwrap();
        assert_eq!(step, WalkStep::Done);
        let got = w.finish();
        assert_eq!(got.len(), 3);
        assert_eq!(got[2].oid.to_string(), "1.3.6.1.2.1.2.2.1.7.3");
    }

    #[test]
    fn walk_stops_at_end_of_mib_view_and_empty_response() {
        let mut w = state(100);
        let step = w
            .accept(vec![
                vb("1.3.6.1.2.1.2.2.1.7.1", 1),
                Varbind::new(
                    "1.3.6.1.2.1.2.2.1.7.1".parse().unwrap(),
                    SnmpValue::EndOfMibView,
                ),
            ])
            .unwrap();
        assert_eq!(step, WalkStep::Done);
        assert_eq!(w.collected(), 1);
        let mut w = state(100);
        assert_eq!(w.accept(vec![]).unwrap(), WalkStep::Done);
    }

    #[test]
    fn walk_detects_non_increasing_oids() {
        let mut w = state(100);
        w.accept(vec![vb("1.3.6.1.2.1.2.2.1.7.5", 1)]).unwrap();
        let err = w.accept(vec![vb("1.3.6.1.2.1.2.2.1.7.5", 1)]).unwrap_err();
        assert!(matches!(err, SnmpError::NonIncreasing { .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("sw1") && msg.contains("1.3.6.1.2.1.2.2.1.7.5"),
            "{msg}"
        );
        let mut w = state(100);
        w.accept(vec![vb("1.3.6.1.2.1.2.2.1.7.5", 1)]).unwrap();
        assert!(w.accept(vec![vb("1.3.6.1.2.1.2.2.1.7.4", 1)]).is_err());
    }

    #[test]
    fn walk_enforces_max_oids() {
        let mut w = state(2);
        let err = w
            .accept(vec![
                vb("1.3.6.1.2.1.2.2.1.7.1", 1),
                vb("1.3.6.1.2.1.2.2.1.7.2", 1),
                vb("1.3.6.1.2.1.2.2.1.7.3", 1),
            ])
            .unwrap_err();
        match err {
            SnmpError::WalkLimit {
                limit, collected, ..
            } => {
                assert_eq!(limit, WalkLimit::MaxOids(2));
                assert_eq!(collected, 2);
            }
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn walk_exactly_max_oids_is_fine() {
        let mut w = state(2);
        w.accept(vec![
            vb("1.3.6.1.2.1.2.2.1.7.1", 1),
            vb("1.3.6.1.2.1.2.2.1.7.2", 1),
            vb("1.3.6.1.2.1.2.2.1.8.1", 1),
        ])
        .unwrap();
        assert_eq!(w.finish().len(), 2);
    }
}
