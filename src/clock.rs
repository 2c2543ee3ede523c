//! Wall-clock time as the APIs netgw speaks write it: RFC 3339 in UTC, whole seconds
//! (`2009-01-01T12:00:00Z`), the form of run timestamps and of Chef's `X-Ops-Timestamp`
//! (mixlib-authentication). Calendar arithmetic is the `time` crate's, the one date crate of the tree.

use std::time::SystemTime;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// `t` as `YYYY-MM-DDTHH:MM:SSZ` (whole seconds, UTC). Times before the epoch read as the epoch.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".into())
}

/// Now, as [`rfc3339`] writes it.
pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// `YYYY-MM-DDTHH:MM:SSZ` (exactly that form, as [`rfc3339`] writes it) -> seconds since the epoch;
/// `None` for anything else, including impossible dates.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 20 || b[10] != b'T' || b[19] != b'Z' {
        return None;
    }
    OffsetDateTime::parse(s, &Rfc3339)
        .ok()
        .map(OffsetDateTime::unix_timestamp)
}

/// Time since the epoch, now: the one place the process reads it (zero for a clock set before 1970).
pub fn since_epoch() -> std::time::Duration {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
}

/// A run id: time-ordered and unique enough for one gateway.
pub fn new_run_id() -> String {
    new_run_id_by(&format!("{:x}", std::process::id()))
}

/// A run id made by `maker`: this process's pid in hex ([`new_run_id`]), or, for a gateway on a
/// shared database, `g` and the serial the database gave it (`PgHistory::new_run_id`), which no
/// other gateway has whatever its machine, pid or start second.
pub fn new_run_id_by(maker: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static SEQ: AtomicU32 = AtomicU32::new(0);
    run_id(
        since_epoch().as_secs(),
        maker,
        SEQ.fetch_add(1, Ordering::Relaxed),
    )
}

/// `SECS-MAKER-SEQ` (seconds in hex first: ids sort by creation second; URL-safe when the maker is).
pub fn run_id(secs: u64, maker: &str, seq: u32) -> String {
    format!("{secs:x}-{maker}-{seq}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn run_ids_of_two_gateways_never_collide() {
        // Same second, same pid (two machines, or containers), same sequence number.
        let (secs, pid) = (0x6926_0000, format!("{:x}", 4242));
        assert_eq!(
            run_id(secs, &pid, 7),
            "69260000-1092-7",
            "SQLite and CLI form"
        );
        let a = run_id(secs, "g1", 7);
        let b = run_id(secs, "g2", 7);
        assert_ne!(a, b);
        for id in [&a, &b] {
            assert!(
                id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
                "{id}"
            );
        }
        assert!(run_id(secs, "g1", 0) < run_id(secs + 1, "g1", 0));
    }

    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn whole_seconds_in_utc_both_ways() {
        for (secs, text) in [
            (0, "1970-01-01T00:00:00Z"),
            (951_825_599, "2000-02-29T11:59:59Z"),
            (1_230_811_200, "2009-01-01T12:00:00Z"),
            (1_763_769_600, "2025-11-22T00:00:00Z"),
        ] {
            assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(secs)), text);
            assert_eq!(parse_rfc3339(text), Some(secs as i64), "{text}");
        }
        let fraction = UNIX_EPOCH + Duration::from_millis(1_230_811_200_750);
        assert_eq!(rfc3339(fraction), "2009-01-01T12:00:00Z");
        for bad in [
            "2009-01-01 12:00:00Z",
            "2009-13-01T12:00:00Z",
            "2009-02-30T12:00:00Z",
            "2009-01-01T12:00:00+00:00",
            "2009-01-01T12:00:00.5Z",
            "",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
