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

#[cfg(test)]
mod tests {
    use super::*;

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
