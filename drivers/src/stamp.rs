//! The names netgw gives the device-side objects of a change in flight (NX-OS checkpoints, EOS
//! configuration sessions): `netgw-SECS-PID-SEQ`, SECS the Unix time in hex, PID this process in hex,
//! SEQ a per-driver counter. The stamp lets a later run tell an object a killed gateway left behind
//! from one a live run still holds.

use std::time::{SystemTime, UNIX_EPOCH};

/// How old a `netgw-` object must be before another run removes it as abandoned. A run holds its
/// checkpoint or session only from commit to confirm (seconds: the change and its verification); one
/// older than this was left by a gateway killed in between, and the few the devices keep (ten NX-OS
/// checkpoints, five open EOS sessions) would eventually run out.
pub const ABANDONED_AFTER_SECS: u64 = 3600;

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A fresh name: `netgw-SECS-PID-SEQ`.
pub fn name(seq: u32) -> String {
    format!("netgw-{:x}-{:x}-{seq}", unix_now(), std::process::id())
}

/// Whether `name` is one netgw makes, stamped at least [`ABANDONED_AFTER_SECS`] before `now`.
pub fn abandoned(name: &str, now: u64) -> bool {
    let Some(rest) = name.strip_prefix("netgw-") else {
        return false;
    };
    let mut parts = rest.split('-');
    let (Some(secs), Some(pid), Some(seq), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let hex = |s: &str| !s.is_empty() && s.len() <= 16 && u64::from_str_radix(s, 16).is_ok();
    hex(secs)
        && hex(pid)
        && !seq.is_empty()
        && seq.bytes().all(|b| b.is_ascii_digit())
        && u64::from_str_radix(secs, 16)
            .is_ok_and(|t| t.saturating_add(ABANDONED_AFTER_SECS) <= now)
}
