//! Pure pieces of applying a plan on NX-OS: the configuration lines (IOS syntax, see
//! `crate::ios::config`) and the checkpoint commands that make the change reversible.
//!
//! ```text
//!   commit:   checkpoint netgw-ID                                   (exec mode: snapshot)
//!             configure terminal, <lines>, end                       (each line checked)
//!             └ any failure: rollback running-config checkpoint netgw-ID
//!   confirm:  [copy running-config startup-config]  no checkpoint netgw-ID
//!   rollback: rollback running-config checkpoint netgw-ID, no checkpoint netgw-ID
//! ```

/// A checkpoint name: `netgw-` and a run-unique suffix of letters, digits and `-` only.
pub fn checkpoint_name(suffix: &str) -> Option<String> {
    let ok = !suffix.is_empty()
        && suffix.len() <= 40
        && suffix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-');
    ok.then(|| format!("netgw-{suffix}"))
}

pub fn checkpoint_create(name: &str) -> String {
    format!("checkpoint {name}")
}

pub fn checkpoint_rollback(name: &str) -> String {
    format!("rollback running-config checkpoint {name}")
}

pub fn checkpoint_delete(name: &str) -> String {
    format!("no checkpoint {name}")
}

/// The failure in a `rollback running-config checkpoint` answer that carries none of the platform's
/// failure strings (NX-OS ends a failed atomic rollback with `Rollback failed.`); `None` when it
/// succeeded (`Rollback completed successfully.`).
pub fn rollback_failure(answer: &str) -> Option<String> {
    let failed = answer
        .lines()
        .map(str::trim)
        .find(|l| l.to_ascii_lowercase().starts_with("rollback failed"))?;
    Some(failed.to_owned())
}

pub use crate::stamp::{ABANDONED_AFTER_SECS, abandoned};

/// The checkpoint names in `show checkpoint summary [user]`: the `N) NAME:` line opening each block.
pub fn parse_checkpoint_names(summary: &str) -> Vec<String> {
    summary
        .lines()
        .filter_map(|l| {
            let (n, rest) = l.trim().split_once(") ")?;
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let name = rest.strip_suffix(':')?;
            (!name.is_empty() && !name.contains(char::is_whitespace)).then(|| name.to_owned())
        })
        .collect()
}

/// The checkpoints netgw made (`netgw-SECS-PID-SEQ`, SECS in hex: Unix time of the commit) at least
/// [`ABANDONED_AFTER_SECS`] before `now`. Anything else (operators' checkpoints, names netgw would not
/// make) is never touched.
pub fn abandoned_checkpoints(names: &[String], now: u64) -> Vec<String> {
    names
        .iter()
        .filter(|n| abandoned(n, now))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary shape of genieparser's `show checkpoint summary` sample (names with `_`), netgw's
    /// own names by age, and an operator's checkpoint left alone whatever its name.
    #[test]
    fn abandoned_netgw_checkpoints_only() {
        let summary = "User Checkpoint Summary\n--------------------------------------------------------------------------------\n\
                       1) bgp-Wed_May_31_12_56_56_2017:\nCreated by admin\nCreated at Wed, 12:56:56 31 May 2017\nSize is 23,013 bytes\nDescription: None\n\n\
                       2) netgw-5f5e0ff-1a2b-1:\nCreated by admin\nCreated at Mon, 07:37:22 29 Sep 2014\nSize is 12,001 bytes\nDescription: None\n\n\
                       3) netgw-5f5e100-1a2b-2:\nCreated by admin\nCreated at Mon, 07:37:22 29 Sep 2014\nSize is 12,001 bytes\nDescription: before run\n\n\
                       4) netgw-upgrade:\nCreated by admin\n\n";
        let names = parse_checkpoint_names(summary);
        assert_eq!(
            names,
            [
                "bgp-Wed_May_31_12_56_56_2017",
                "netgw-5f5e0ff-1a2b-1",
                "netgw-5f5e100-1a2b-2",
                "netgw-upgrade"
            ]
        );
        // 0x5f5e100 = 100,000,000: the first netgw checkpoint is one second older.
        let now = 100_000_000 + ABANDONED_AFTER_SECS;
        assert_eq!(abandoned_checkpoints(&names, now - 2), Vec::<String>::new());
        assert_eq!(
            abandoned_checkpoints(&names, now - 1),
            ["netgw-5f5e0ff-1a2b-1"]
        );
        assert_eq!(
            abandoned_checkpoints(&names, now),
            ["netgw-5f5e0ff-1a2b-1", "netgw-5f5e100-1a2b-2"]
        );
        assert!(
            abandoned_checkpoints(&["netgw-1-2-3-4".into(), "netgw-zz-1-1".into()], u64::MAX)
                .is_empty()
        );
        assert!(parse_checkpoint_names("Description: 1) not: a name\n12) two words:\n").is_empty());
    }

    #[test]
    fn names_are_safe() {
        assert_eq!(checkpoint_name("5f3a-12").as_deref(), Some("netgw-5f3a-12"));
        assert!(checkpoint_name("a b").is_none());
        assert!(checkpoint_name("a;b").is_none());
        assert!(checkpoint_name("").is_none());
        assert_eq!(
            checkpoint_rollback("netgw-1"),
            "rollback running-config checkpoint netgw-1"
        );
    }

    #[test]
    fn rollback_answers() {
        let ok = "Note: Applying config parallelly may fail Rollback verification\nCollecting Running-Config\n\
                  #Generating Rollback Patch\nExecuting Rollback Patch\n#Generating Running-config for verification\n\
                  Generating Patch for verification\nVerification is Successful.\n\nRollback completed successfully.\n";
        assert_eq!(rollback_failure(ok), None);
        let bad = "Collecting Running-Config\nExecuting Rollback Patch\nRollback failed.\n";
        assert_eq!(rollback_failure(bad).as_deref(), Some("Rollback failed."));
    }
}
