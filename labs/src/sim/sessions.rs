//! Device sessions as the device sees them: every accepted TCP connection (an eAPI/REST client's
//! keep-alive connection, an SSH session) is one session, from accept to the end of its task.
//!
//! A management tool that holds a per-node lock never has two sessions of one device open at once;
//! this counter shows it from the device's side. The overlap of two sessions is known when the first
//! of them ends (the other is still open then): it is recorded then, so only the open sessions are
//! kept, whatever the number of sessions a long campaign opens. A client's close reaches the device a
//! moment after the client released its lock, so callers choose the slack below which an overlap is
//! that moment rather than two sessions ([`SessionStats::overlaps_over`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// At most this many overlap durations are kept (the count of the others is still exact).
const MAX_KEPT: usize = 10_000;

#[derive(Debug, Default)]
struct Inner {
    next_id: u64,
    open: Vec<(u64, Instant)>,
    opened: u64,
    max_open: usize,
    /// Starts that found another session of the device open (raw: no slack).
    overlapping_starts: u64,
    /// How long each pair of sessions was open together.
    overlaps: Vec<Duration>,
    /// When each of them began (Unix seconds), to set beside a client's log.
    overlaps_at: Vec<f64>,
    overlaps_not_kept: u64,
    overlaps_max: Duration,
}

/// The sessions of one device (shared by its listener's connection tasks).
#[derive(Debug, Default)]
pub struct Sessions {
    inner: Mutex<Inner>,
    /// The lab's count over every device, once the device joined one.
    lab: OnceLock<Arc<LabGauge>>,
}

/// Sessions open on every device of a lab together: now, and the most at once since the last
/// [`LabGauge::take_peak`] (the benchmark's peak connections of one run).
#[derive(Debug, Default)]
pub struct LabGauge {
    open: AtomicUsize,
    peak: AtomicUsize,
}

impl LabGauge {
    fn opened(&self) {
        let now = self.open.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
    }

    fn closed(&self) {
        self.open.fetch_sub(1, Ordering::SeqCst);
    }

    pub fn open(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    /// The most sessions open at once since the last call (or the start); the next period starts
    /// from those open now.
    pub fn take_peak(&self) -> usize {
        self.peak.swap(self.open(), Ordering::SeqCst)
    }
}

/// What [`Sessions::stats`] reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionStats {
    /// Sessions accepted since the device started.
    pub opened: u64,
    /// Open now.
    pub open: usize,
    /// The most sessions open at one moment.
    pub max_open: usize,
    /// Sessions accepted while another was open.
    pub overlapping_starts: u64,
    /// Every pair of sessions that were open together, with how long (pairs still both open are not
    /// counted yet); the longest of them.
    pub overlaps: Vec<Duration>,
    /// When each overlap began (Unix seconds).
    pub overlaps_at: Vec<f64>,
    pub overlaps_max: Duration,
    overlaps_not_kept: u64,
}

impl SessionStats {
    /// Pairs of sessions open together for longer than `slack`. The durations beyond the kept ones
    /// are not known: they count when `slack` is below the longest overlap (an upper bound then).
    pub fn overlaps_over(&self, slack: Duration) -> u64 {
        let kept = self.overlaps.iter().filter(|d| **d > slack).count() as u64;
        if self.overlaps_max > slack {
            kept + self.overlaps_not_kept
        } else {
            kept
        }
    }
}

/// An open session; ending it (dropping) records its overlaps with the sessions still open.
#[derive(Debug)]
pub struct SessionGuard {
    sessions: Arc<Sessions>,
    id: u64,
    started: Instant,
}

impl Sessions {
    fn inner(&self) -> MutexGuard<'_, Inner> {
        // Counters only: a panic elsewhere cannot leave them in a state worth refusing to read.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Count this device's sessions in the lab's `gauge` too (once; later calls change nothing).
    pub fn join_lab(&self, gauge: Arc<LabGauge>) {
        let _ = self.lab.set(gauge);
    }

    /// A session starts (a connection was accepted).
    pub fn open(self: &Arc<Self>) -> SessionGuard {
        let started = Instant::now();
        if let Some(g) = self.lab.get() {
            g.opened();
        }
        let mut i = self.inner();
        let id = i.next_id;
        i.next_id += 1;
        i.opened += 1;
        if !i.open.is_empty() {
            i.overlapping_starts += 1;
        }
        i.open.push((id, started));
        i.max_open = i.max_open.max(i.open.len());
        SessionGuard {
            sessions: self.clone(),
            id,
            started,
        }
    }

    pub fn stats(&self) -> SessionStats {
        let i = self.inner();
        SessionStats {
            opened: i.opened,
            open: i.open.len(),
            max_open: i.max_open,
            overlapping_starts: i.overlapping_starts,
            overlaps: i.overlaps.clone(),
            overlaps_at: i.overlaps_at.clone(),
            overlaps_max: i.overlaps_max,
            overlaps_not_kept: i.overlaps_not_kept,
        }
    }
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        let now = Instant::now();
        if let Some(g) = self.sessions.lab.get() {
            g.closed();
        }
        let mut i = self.sessions.inner();
        i.open.retain(|(id, _)| *id != self.id);
        let together: Vec<Duration> = i
            .open
            .iter()
            .map(|(_, other)| now.saturating_duration_since(self.started.max(*other)))
            .collect();
        let unix_now = super::now();
        for d in together {
            i.overlaps_max = i.overlaps_max.max(d);
            if i.overlaps.len() < MAX_KEPT {
                i.overlaps.push(d);
                i.overlaps_at.push(unix_now - d.as_secs_f64());
            } else {
                i.overlaps_not_kept += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_sessions_never_overlap_and_concurrent_ones_do() {
        let s = Arc::new(Sessions::default());
        drop(s.open());
        drop(s.open());
        let st = s.stats();
        assert_eq!((st.opened, st.max_open, st.overlapping_starts), (2, 1, 0));
        assert_eq!(st.overlaps_over(Duration::ZERO), 0);

        let a = s.open();
        let b = s.open();
        std::thread::sleep(Duration::from_millis(30));
        let c = s.open();
        drop(a);
        drop(c);
        drop(b);
        let st = s.stats();
        assert_eq!((st.opened, st.open, st.max_open), (5, 0, 3));
        assert_eq!(st.overlapping_starts, 2);
        // a-b, a-c (ends of a), c-b (end of c): three pairs, one of them (a-b) over 20 ms.
        assert_eq!(st.overlaps.len(), 3);
        assert_eq!(st.overlaps_over(Duration::ZERO), 3);
        assert_eq!(st.overlaps_over(Duration::from_millis(20)), 1);
    }
}
