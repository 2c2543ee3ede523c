//! Configuration Rollback Confirmed Change (IOS / IOS-XE): the device-side safety net the IOS driver
//! uses when the device has a configuration archive. Pure readings of the device's answers; the
//! driver (`mod.rs`) sends the commands.
//!
//! ```text
//!   show archive                        ` Archive feature not enabled` | the archive listing
//!   show archive config rollback timer  `%No Rollback Confirmed Change pending` | the timer
//!   configure terminal revert timer N   archive, then configuration mode; N minutes, 1-120
//!   configure confirm                   keep the change
//!   configure revert now                the archived configuration back at once
//! ```
//!
//! Without `archive` / `path` configured the device refuses the revert timer, so the driver asks
//! `show archive` first. Sample answers and their sources: docs/fixture-sources.md.

use std::time::Duration;

/// What the device says when no confirmed change waits (to `configure confirm`, `configure revert
/// now` and `show archive config rollback timer`).
pub const NOT_PENDING: &str = "No Rollback Confirmed Change pending";

/// Whether `show archive` shows a configured archive. A device without the feature answers ` Archive
/// feature not enabled`; one without the command answers with an error (the driver then has no
/// answer at all), so only an answer naming where the next archive goes counts as present.
pub fn archive_configured(show_archive: &str) -> bool {
    let t = show_archive.to_ascii_lowercase();
    !t.contains("not enabled")
        && !t.contains("% invalid")
        && t.contains("next archive file will be named")
}

/// Whether `show archive config rollback timer` shows a confirmed change waiting for `configure
/// confirm` (its `Timer value:` line); `%No Rollback Confirmed Change pending` or an error is no.
pub fn rollback_pending(show_timer: &str) -> bool {
    !show_timer.contains(NOT_PENDING)
        && show_timer
            .lines()
            .any(|l| l.trim_start().starts_with("Timer value:"))
}

/// The revert timer for a change that must be confirmed within `confirm_timeout`: whole minutes,
/// rounded up, within the 1-120 the command takes.
pub fn revert_minutes(confirm_timeout: Duration) -> u32 {
    let m = confirm_timeout.as_secs().div_ceil(60);
    u32::try_from(m).unwrap_or(120).clamp(1, 120)
}

/// The command that enters configuration mode with the device's timer armed.
pub fn enter_with_timer(minutes: u32) -> String {
    format!("configure terminal revert timer {minutes}")
}

#[cfg(test)]
mod tests {
    use super::*;

    // Sources of the samples: docs/fixture-sources.md, "IOS Configuration Rollback Confirmed Change".
    // A device without an archive.
    const NOT_ENABLED: &str = " Archive feature not enabled\n";
    // A Catalyst IOS-XE switch with `archive` / `path flash:/switcharchive`.
    const ENABLED: &str = "The maximum archive configurations allowed is 10.\nThere are currently 2 archive configurations saved.\nThe next archive file will be named flash:/switcharchive-<timestamp>-2\n Archive #  Name\n   1        flash:/switcharchive-Jun--6-10-38-00.741-0\n";
    // A Cisco 2901 with ten archives.
    const ENABLED_FULL: &str = "The maximum archive configurations allowed is 10.\nThere are currently 10 archive configurations saved.\nThe next archive file will be named flash:backups-<timestamp>-78\n Archive #  Name\n   1        flash:backupsFeb--3-11-55-49.089-DST-68\n   10       flash:backupsFeb-10-11-54-51.925-DST-77 <- Most Recent\n";
    const IDLE: &str = "%No Rollback Confirmed Change pending\n";

    #[test]
    fn archive_is_read_from_real_answers() {
        assert!(!archive_configured(NOT_ENABLED));
        assert!(archive_configured(ENABLED));
        assert!(archive_configured(ENABLED_FULL));
        // Releases or simulators without the command.
        assert!(!archive_configured(
            "        ^\n% Invalid input detected at '^' marker.\n"
        ));
        assert!(!archive_configured(""));
    }

    #[test]
    fn a_pending_change_is_read_from_the_timer() {
        assert!(!rollback_pending(IDLE));
        assert!(rollback_pending(
            "Timer type: Confirmed Change\nTimer value: 3 min\nTime remaining: 00:02:51\n"
        ));
        assert!(!rollback_pending(
            "% Invalid input detected at '^' marker.\n"
        ));
    }

    #[test]
    fn minutes_cover_the_confirm_timeout() {
        assert_eq!(revert_minutes(Duration::from_secs(120)), 2);
        assert_eq!(revert_minutes(Duration::from_secs(121)), 3);
        assert_eq!(revert_minutes(Duration::from_secs(0)), 1);
        assert_eq!(revert_minutes(Duration::from_secs(86_400)), 120);
        assert_eq!(enter_with_timer(2), "configure terminal revert timer 2");
    }
}
