//! A NETCONF candidate transaction, independent of what the configuration says (RFC 6241 §8.3
//! candidate, §8.4 confirmed commit, §7.5 lock):
//!
//! ```text
//!  begin: lock candidate [refused: discard-changes + unlock (a dead session's leftovers), lock again]
//!  edit:  edit-config candidate (merge)                  ─┐ on any failure the caller runs
//!  diff:  the device's own diff where the dialect has one │ discard(): discard-changes + unlock
//!  commit_confirmed: confirmed commit with a timeout     ─┘
//!  confirm: confirming commit, unlock       cancel: cancel-commit (confirmed-commit:1.1), unlock
//! ```
//!
//! The Junos dialect uses Junos' own `<commit-configuration>` (it takes a `<log>` comment naming the
//! run, and `confirm-timeout` in minutes) and `<get-configuration compare="rollback">` for the diff;
//! the RFC 6241 dialect uses `<commit><confirmed/>` with a timeout in seconds and has no diff.

use crate::transport::netconf::ops::{CAP_CONFIRMED_COMMIT_10, CAP_CONFIRMED_COMMIT_11};
use crate::transport::netconf::{
    Datastore, EditConfig, ErrorInfo, ErrorTag, ErrorType, NetconfClient, NetconfError, Operation,
    RpcError, RpcReply, Severity, XmlElement,
};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// How commits and diffs are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// RFC 6241 `<commit>` (comments are not sent; the standard has none).
    Rfc6241,
    /// Junos `<commit-configuration>` with `<log>`, and `get-configuration compare`.
    Junos,
}

/// A failed step. `source` keeps the device's `rpc-error`s as data.
#[derive(Debug, thiserror::Error)]
#[error("{step}: {source}")]
pub struct TxnError {
    pub step: &'static str,
    #[source]
    pub source: NetconfError,
}

impl TxnError {
    /// The device's errors, when the device refused the step.
    pub fn rpc_errors(&self) -> &[RpcError] {
        self.source.rpc_errors()
    }

    /// The device's own words, joined (`error-message`, path and info as the device sent them).
    pub fn device_message(&self) -> Option<String> {
        let errs = self.rpc_errors();
        (!errs.is_empty()).then(|| {
            errs.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        })
    }
}

type Result<T> = std::result::Result<T, TxnError>;

fn step(step: &'static str) -> impl FnOnce(NetconfError) -> TxnError {
    move |source| TxnError { step, source }
}

/// Where the transaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TxnState {
    #[default]
    Idle,
    /// Candidate locked (and possibly edited).
    Staged,
    /// A confirmed commit waits for its confirmation.
    Pending,
}

#[derive(Debug, Clone)]
pub struct NetconfTxn {
    pub dialect: Dialect,
    /// When the lock is refused, discard-changes + unlock and lock once more (fake-switches keeps a
    /// dead session's lock and dirty candidate; on a real device both simply fail when someone else
    /// holds them).
    pub clear_stale: bool,
    /// Requests the transaction knows come next are written with the one before (Junos; see
    /// [`NetconfClient::send_ahead`]); off for a server that cannot take two requests in one write.
    pub pipelined: bool,
    state: TxnState,
    locked: bool,
}

impl NetconfTxn {
    pub fn new(dialect: Dialect, clear_stale: bool) -> Self {
        NetconfTxn {
            dialect,
            clear_stale,
            pipelined: dialect == Dialect::Junos,
            state: TxnState::Idle,
            locked: false,
        }
    }

    pub fn state(&self) -> TxnState {
        self.state
    }

    /// Whether the server can revert a confirmed commit by itself.
    pub fn has_confirmed_commit<S: AsyncRead + AsyncWrite + Unpin + Send>(
        c: &NetconfClient<S>,
    ) -> bool {
        c.has_capability(CAP_CONFIRMED_COMMIT_10) || c.has_capability(CAP_CONFIRMED_COMMIT_11)
    }

    /// Lock the candidate (clearing a dead session's leftovers when refused and `clear_stale`).
    pub async fn begin<S: AsyncRead + AsyncWrite + Unpin + Send>(
        &mut self,
        c: &mut NetconfClient<S>,
        then: &[Operation],
    ) -> Result<()> {
        // Pipelined: the lock, the discard that follows it, and the caller's first read under the
        // lock in one write. A refused lock makes the discard the first step of clearing a stale
        // candidate (what it would be anyway); the read, made before the lock, is dropped and made
        // again.
        if self.pipelined {
            let mut ahead = vec![
                Operation::Lock(Datastore::Candidate),
                Operation::DiscardChanges,
            ];
            ahead.extend_from_slice(then);
            c.send_ahead(&ahead).await.map_err(step("lock candidate"))?;
        }
        match c.lock(Datastore::Candidate).await {
            Ok(_) => {}
            // Cleared only when the lock is refused: a fresh session to a device that frees a dead
            // session's lock (real ones do) spends no round trip on it.
            Err(e) if self.clear_stale && matches!(e.root(), NetconfError::Rpc { .. }) => {
                // Best effort: both fail harmlessly when someone else holds the lock.
                let _ = c.discard_changes().await;
                let _ = c.unlock(Datastore::Candidate).await;
                c.lock(Datastore::Candidate)
                    .await
                    .map_err(step("lock candidate"))?;
            }
            Err(e) => return Err(step("lock candidate")(e)),
        }
        self.locked = true;
        // A candidate another session left dirty before we locked is not ours to commit.
        let _ = c.discard_changes().await;
        self.state = TxnState::Staged;
        Ok(())
    }

    /// `edit-config` into the candidate (default operation merge).
    pub async fn edit<S: AsyncRead + AsyncWrite + Unpin + Send>(
        &mut self,
        c: &mut NetconfClient<S>,
        config: &str,
    ) -> Result<()> {
        let edit = Operation::EditConfig(EditConfig::new(Datastore::Candidate, config));
        if self.pipelined && self.dialect == Dialect::Junos {
            // The diff that follows every edit is a read: written with the edit, it costs no round
            // trip, and after a refused edit its reply is dropped.
            c.send_ahead(&[edit.clone(), Operation::Raw(COMPARE.into())])
                .await
                .map_err(step("edit-config"))?;
        }
        c.rpc(&edit).await.map_err(step("edit-config"))?;
        Ok(())
    }

    /// The device's own diff of candidate against running (Junos `show | compare`), `Ok(None)` in the
    /// RFC 6241 dialect.
    pub async fn device_diff<S: AsyncRead + AsyncWrite + Unpin + Send>(
        &mut self,
        c: &mut NetconfClient<S>,
    ) -> Result<Option<String>> {
        match self.dialect {
            Dialect::Rfc6241 => Ok(None),
            Dialect::Junos => {
                let reply = c
                    .rpc_raw(COMPARE)
                    .await
                    .map_err(step("get-configuration compare"))?;
                let text = reply
                    .root
                    .elements()
                    .find(|e| e.name == "configuration-information")
                    .and_then(|i| i.child("configuration-output"))
                    .map(|o| o.text())
                    .unwrap_or_default();
                Ok(Some(text))
            }
        }
    }

    /// A commit the server reverts unless confirmed within `timeout`; a plain commit when the server has
    /// no confirmed commit (then there is nothing to confirm, and `cancel` cannot undo it). `then`:
    /// reads written with the commit (Junos), the verification's, answered after it in the same round
    /// trip (after a refused commit, dropped).
    pub async fn commit_confirmed<S: AsyncRead + AsyncWrite + Unpin + Send>(
        &mut self,
        c: &mut NetconfClient<S>,
        timeout: Duration,
        comment: &str,
        then: &[Operation],
    ) -> Result<()> {
        let confirmed = Self::has_confirmed_commit(c);
        match self.dialect {
            Dialect::Junos => {
                // Junos' confirm-timeout counts minutes (1..65535).
                let minutes = timeout.as_secs().div_ceil(60).clamp(1, 65535);
                let xml = if confirmed {
                    format!(
                        "<commit-configuration><confirmed/><confirm-timeout>{minutes}</confirm-timeout><log>{}</log></commit-configuration>",
                        escape(comment)
                    )
                } else {
                    commit_configuration(comment)
                };
                if self.pipelined {
                    let mut ahead = vec![Operation::Raw(xml.clone())];
                    ahead.extend_from_slice(then);
                    c.send_ahead(&ahead)
                        .await
                        .map_err(step("commit confirmed"))?;
                }
                let r = c.rpc_raw(&xml).await.map_err(step("commit confirmed"))?;
                nested_errors(&r).map_err(step("commit confirmed"))?;
            }
            Dialect::Rfc6241 if confirmed => {
                let secs = u32::try_from(timeout.as_secs().max(1)).unwrap_or(u32::MAX);
                c.confirmed_commit(Some(secs), None)
                    .await
                    .map_err(step("commit confirmed"))?;
            }
            Dialect::Rfc6241 => {
                c.commit().await.map_err(step("commit"))?;
            }
        }
        self.state = if confirmed {
            TxnState::Pending
        } else {
            TxnState::Staged
        };
        Ok(())
    }

    /// A plain commit (confirms a pending confirmed commit, RFC 6241 §8.4.1), then unlock.
    pub async fn confirm<S: AsyncRead + AsyncWrite + Unpin + Send>(
        &mut self,
        c: &mut NetconfClient<S>,
        comment: &str,
    ) -> Result<()> {
        self.commit(c, comment).await?;
        self.unlock(c).await
    }

    /// A plain commit, the transaction stays locked.
    pub async fn commit<S: AsyncRead + AsyncWrite + Unpin + Send>(
        &mut self,
        c: &mut NetconfClient<S>,
        comment: &str,
    ) -> Result<()> {
        match self.dialect {
            Dialect::Junos => match c.rpc_raw(&commit_configuration(comment)).await {
                Ok(r) => nested_errors(&r),
                Err(e) => Err(e),
            },
            Dialect::Rfc6241 => c.commit().await.map(|_| ()),
        }
        .map_err(step("commit"))?;
        self.state = TxnState::Staged;
        Ok(())
    }

    /// Revert a pending confirmed commit now with `<cancel-commit>` (needs confirmed-commit:1.1) and
    /// unlock. `Ok(false)` when the server cannot: the caller restores the recorded state instead.
    pub async fn cancel<S: AsyncRead + AsyncWrite + Unpin + Send>(
        &mut self,
        c: &mut NetconfClient<S>,
    ) -> Result<bool> {
        if self.state != TxnState::Pending || !c.has_capability(CAP_CONFIRMED_COMMIT_11) {
            return Ok(false);
        }
        c.cancel_commit(None).await.map_err(step("cancel-commit"))?;
        self.state = TxnState::Staged;
        self.unlock(c).await?;
        Ok(true)
    }

    /// Throw the candidate away and release the lock. Both are attempted; the first error is returned.
    pub async fn discard<S: AsyncRead + AsyncWrite + Unpin + Send>(
        &mut self,
        c: &mut NetconfClient<S>,
    ) -> Result<()> {
        let d = c
            .discard_changes()
            .await
            .map(|_| ())
            .map_err(step("discard-changes"));
        let u = self.unlock(c).await;
        if self.state == TxnState::Staged {
            self.state = TxnState::Idle;
        }
        d.and(u)
    }

    /// Release the lock if we hold it.
    pub async fn unlock<S: AsyncRead + AsyncWrite + Unpin + Send>(
        &mut self,
        c: &mut NetconfClient<S>,
    ) -> Result<()> {
        if !self.locked {
            return Ok(());
        }
        self.locked = false;
        if self.state != TxnState::Pending {
            self.state = TxnState::Idle;
        }
        c.unlock(Datastore::Candidate)
            .await
            .map(|_| ())
            .map_err(step("unlock"))
    }
}

/// Junos `show | compare`: the candidate's diff against the running configuration, as text.
const COMPARE: &str = "<get-configuration compare=\"rollback\" rollback=\"0\" format=\"text\"/>";

fn commit_configuration(comment: &str) -> String {
    format!(
        "<commit-configuration><log>{}</log></commit-configuration>",
        escape(comment)
    )
}

/// Junos nests commit errors deeper than RFC 6241 puts them (`<commit-results><routing-engine>
/// <rpc-error>` on multi-RE and MX systems); the transport looks one level down only, so an
/// `<rpc-error>` anywhere in a commit reply is checked here. Warnings pass.
pub fn nested_errors(reply: &RpcReply) -> std::result::Result<(), NetconfError> {
    fn walk(el: &XmlElement, out: &mut Vec<RpcError>) {
        for c in el.elements() {
            if c.name == "rpc-error" {
                let t = |n: &str| c.child_text(n).filter(|s| !s.is_empty());
                let severity = match t("error-severity").as_deref() {
                    Some("warning") => Severity::Warning,
                    _ => Severity::Error,
                };
                let info = c
                    .child("error-info")
                    .map(|i| {
                        i.elements()
                            .map(|e| ErrorInfo {
                                name: e.name.clone(),
                                value: e.text().trim().to_string(),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                out.push(RpcError {
                    error_type: t("error-type").map(|s| ErrorType::parse(&s)),
                    tag: t("error-tag").map(|s| ErrorTag::parse(&s)),
                    severity,
                    app_tag: t("error-app-tag"),
                    path: t("error-path"),
                    message: t("error-message"),
                    info,
                });
            } else {
                walk(c, out);
            }
        }
    }
    let mut all = Vec::new();
    walk(&reply.root, &mut all);
    let (errors, warnings): (Vec<RpcError>, Vec<RpcError>) = all
        .into_iter()
        .partition(|e| matches!(e.severity, Severity::Error));
    if errors.is_empty() {
        Ok(())
    } else {
        Err(NetconfError::Rpc { errors, warnings })
    }
}

/// Escape text and attribute values (XML 1.0 §2.4, §3.3.3): `& < > " '`.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_errors_nested_under_routing_engine_are_errors() {
        // The shape of an MX commit failure (fake-switches juniper_mx_generic, and real MX).
        let reply = RpcReply::parse(
            "<rpc-reply xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\" message-id=\"1\"><commit-results><routing-engine><name>re0</name>\
             <rpc-error><error-type>application</error-type><error-tag>invalid-value</error-tag><error-severity>error</error-severity>\
             <error-message>mgd: 'interface-mode trunk' must be defined</error-message></rpc-error></routing-engine></commit-results></rpc-reply>",
        )
        .unwrap();
        let e = nested_errors(&reply).unwrap_err();
        assert!(
            e.to_string()
                .contains("'interface-mode trunk' must be defined"),
            "{e}"
        );
        let ok = RpcReply::parse(
            "<rpc-reply xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\" message-id=\"1\"><commit-results><routing-engine><name>re0</name><commit-success/></routing-engine></commit-results></rpc-reply>",
        )
        .unwrap();
        assert!(nested_errors(&ok).is_ok());
    }
}
