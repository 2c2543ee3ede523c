//! An SSH session with one interactive CLI shell, for the Cisco CLI drivers (IOS and NX-OS): connect
//! and enable, a read cache for `show` commands, configuration mode with or without a device-side
//! revert timer, and (feature `replay`) a recorded device answering instead of the shell. What the
//! CLI text says is parsed in [`crate::cisco_cli`] and in each platform's module.

use crate::driver::{DriverError, ErrorKind};
use crate::target::DeviceTarget;
use crate::transport::ssh::shell::CommandOutput;
use crate::transport::ssh::{CliPlatform, CliShell, PlatformKind, SshError, SshSession};

/// An SSH session with one interactive CLI shell.
///
/// Reads are cached for the life of the session until something else is sent: within one converge
/// the facts, observe and pre-change reads ask the same `show` commands of a device nothing has
/// changed in between (the node lock keeps other netgw runs out), so each is sent once. Any other
/// command or configuration line drops the cache first, so verify and restore always read the device
/// afresh; reads written after a change's lines (in the same write, [`CliConn::config_then_read`])
/// are such fresh reads. Refusals are cached only from a batch of reads ([`CliConn::prefetch`]):
/// the device was asked, and would answer the same until something changes.
pub(crate) struct CliConn {
    pub device: String,
    session: Option<SshSession>,
    shell: Option<CliShell>,
    /// Answers (`Err`: the refusal's text) by command.
    reads: std::collections::HashMap<String, Result<String, String>>,
    /// A recorded device answering instead of the SSH shell (`transport::replay`).
    #[cfg(feature = "replay")]
    replay: Option<crate::transport::replay::Recording>,
    /// Commands may be typed ahead, several in one write (option `cli_batch`, default true). Off,
    /// each waits for the answer of the one before, as Netmiko and scrapli send them: for devices, or
    /// console servers in front of them, that drop input typed ahead.
    batch: bool,
    /// A command is being sent or answered. Still set at the next call when the call before was
    /// dropped mid-way (a node timeout or an abort stops the run at any await): the shell may hold
    /// half an answer or sit in configuration mode, so the session is reported lost and the driver
    /// reconnects to restore.
    busy: bool,
}

impl std::fmt::Debug for CliConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CliConn")
            .field("device", &self.device)
            .field("shell", &self.shell)
            .finish_non_exhaustive()
    }
}

pub(crate) fn ssh_err(device: &str, step: &'static str, e: SshError) -> DriverError {
    match e {
        SshError::Cli {
            command, output, ..
        } => DriverError::Rejected {
            device: device.to_owned(),
            step,
            message: format!("`{command}`: {output}"),
        },
        other => {
            let kind = crate::target::ssh_error_kind(&other);
            DriverError::Transport {
                device: device.to_owned(),
                step,
                kind,
                source: Box::new(other),
            }
        }
    }
}

/// The settings [`CliConn::connect`] and the CLI drivers refuse, checked without a connection.
pub(crate) fn check(target: &DeviceTarget) -> Result<(), DriverError> {
    target.ssh_target("ssh", 22)?;
    target.bool_option("cli_batch")?;
    target.save_config().map(drop)
}

impl CliConn {
    /// Connect over SSH (`connection_options.ssh` over the host's settings, port 22), open a shell of
    /// `kind` and enter privileged mode with the target's enable secret.
    pub async fn connect(
        target: &DeviceTarget,
        kind: PlatformKind,
    ) -> Result<CliConn, DriverError> {
        let device = target.name.clone();
        let ssh = target.ssh_target("ssh", 22)?;
        let session = SshSession::connect(&ssh)
            .await
            .map_err(|e| ssh_err(&device, "ssh connect", e))?;
        let mut shell = session
            .shell(CliPlatform::get(kind))
            .await
            .map_err(|e| ssh_err(&device, "open shell", e))?;
        shell
            .enable(target.enable_secret.as_ref())
            .await
            .map_err(|e| ssh_err(&device, "enable", e))?;
        Ok(CliConn {
            device,
            session: Some(session),
            shell: Some(shell),
            reads: Default::default(),
            #[cfg(feature = "replay")]
            replay: None,
            batch: target.bool_option("cli_batch")?.unwrap_or(true),
            busy: false,
        })
    }

    /// A session with a recorded device: commands are answered from `rec`, configuration lines are
    /// noted there and accepted.
    #[cfg(feature = "replay")]
    pub fn replay(device: &str, rec: crate::transport::replay::Recording) -> CliConn {
        CliConn {
            device: device.to_owned(),
            session: None,
            shell: None,
            reads: Default::default(),
            replay: Some(rec),
            batch: false,
            busy: false,
        }
    }

    fn replayed(&self) -> bool {
        #[cfg(feature = "replay")]
        if self.replay.is_some() {
            return true;
        }
        false
    }

    /// Whether commands go one write each (a recorded device answers each when it is asked).
    fn one_at_a_time(&self) -> bool {
        !self.batch || self.replayed()
    }

    fn check_open(&mut self) -> Result<(), DriverError> {
        if self.replayed() {
            return Ok(());
        }
        self.shell().map(|_| ())
    }

    /// What the recorded device answers: the recorded output, or a refusal as for an unknown command.
    #[cfg(feature = "replay")]
    fn replay_answer(&self, cmd: &str) -> Option<Result<String, SshError>> {
        let rec = self.replay.as_ref()?;
        Some(rec.answer(cmd).ok_or_else(|| SshError::Cli {
            device: self.device.clone(),
            command: cmd.to_owned(),
            output: "% Invalid input detected (not in the recording)".into(),
        }))
    }

    /// The shell and the busy flag, borrowed apart so a command can be bracketed by the flag.
    fn shell_busy(&mut self) -> Result<(&mut CliShell, &mut bool), DriverError> {
        self.shell()?;
        match (self.shell.as_mut(), &mut self.busy) {
            (Some(s), b) => Ok((s, b)),
            (None, _) => Err(DriverError::Transport {
                device: self.device.clone(),
                step: "cli",
                kind: ErrorKind::Transport,
                source: "the session is closed".into(),
            }),
        }
    }

    fn shell(&mut self) -> Result<&mut CliShell, DriverError> {
        let reason = if self.busy {
            "an earlier command was stopped mid-answer: the shell's state is unknown"
        } else {
            "the session is closed"
        };
        match self.shell.as_mut() {
            Some(s) if !self.busy => Ok(s),
            _ => Err(DriverError::Transport {
                device: self.device.clone(),
                step: "cli",
                kind: ErrorKind::Transport,
                source: reason.into(),
            }),
        }
    }

    /// A `show` command's answer, from the session's read cache or the device; any other command
    /// empties the cache before it is sent.
    async fn command(&mut self, cmd: &str) -> Result<String, SshError> {
        let read = is_read(cmd);
        if read {
            match self.reads.get(cmd) {
                Some(Ok(t)) => return Ok(t.clone()),
                Some(Err(refusal)) => {
                    return Err(SshError::Cli {
                        device: self.device.clone(),
                        command: cmd.to_owned(),
                        output: refusal.clone(),
                    });
                }
                None => {}
            }
        } else {
            self.reads.clear();
        }
        #[cfg(feature = "replay")]
        if let Some(answer) = self.replay_answer(cmd) {
            let t = answer?;
            if read {
                self.reads.insert(cmd.to_owned(), Ok(t.clone()));
            }
            return Ok(t);
        }
        let shell = match self.shell.as_mut() {
            Some(s) if !self.busy => s,
            _ => {
                return Err(SshError::Disconnected {
                    device: self.device.clone(),
                    operation: format!("command `{cmd}`"),
                    reason: Some(if self.busy {
                        "an earlier command was stopped mid-answer: the shell's state is unknown"
                            .into()
                    } else {
                        "the session is closed".into()
                    }),
                });
            }
        };
        self.busy = true;
        let t = shell.command(cmd).await;
        self.busy = false;
        let t = t?;
        if read {
            self.reads.insert(cmd.to_owned(), Ok(t.clone()));
        }
        Ok(t)
    }

    /// The reads of `cmds` not cached yet, written at once (one round trip) and cached, refusals
    /// included; later [`CliConn::run`] and [`CliConn::optional`] calls answer from the cache. A
    /// recorded device answers each when it is asked.
    pub async fn prefetch(&mut self, step: &'static str, cmds: &[&str]) -> Result<(), DriverError> {
        if self.one_at_a_time() {
            return Ok(());
        }
        let todo: Vec<&str> = cmds
            .iter()
            .copied()
            .filter(|c| is_read(c) && !self.reads.contains_key(*c))
            .collect();
        if todo.is_empty() {
            return Ok(());
        }
        let device = self.device.clone();
        let (shell, busy) = self.shell_busy()?;
        *busy = true;
        let (outputs, broke) = shell.batch_raw(&todo).await;
        *busy = false;
        broke.map_err(|e| ssh_err(&device, step, e))?;
        self.cache(&todo, outputs);
        Ok(())
    }

    /// `cmd` (not a read), then `reads` in the same write (one round trip): `cmd`'s answer, a
    /// refusal being `Rejected`; the reads answered, taken after it, are cached whatever `cmd`
    /// answered.
    pub async fn run_then_read(
        &mut self,
        step: &'static str,
        cmd: &str,
        reads: &[&str],
    ) -> Result<String, DriverError> {
        if self.one_at_a_time() {
            return self.run(step, cmd).await;
        }
        self.reads.clear();
        let device = self.device.clone();
        let mut all = vec![cmd];
        all.extend_from_slice(reads);
        let (shell, busy) = self.shell_busy()?;
        *busy = true;
        let (mut outputs, broke) = shell.batch_raw(&all).await;
        *busy = false;
        let read_outputs = outputs.split_off(1.min(outputs.len()));
        let Some(out) = outputs.pop() else {
            let e = broke.err().unwrap_or_else(|| SshError::Disconnected {
                device: device.clone(),
                operation: format!("command `{cmd}`"),
                reason: Some("no answer".into()),
            });
            return Err(ssh_err(&device, step, e));
        };
        // `cmd` was answered: what it did stands, whatever became of the reads after it (the
        // shell reports itself unusable to the next caller if it is).
        if let Err(e) = broke {
            tracing::warn!(device = %device, command = cmd, error = %e, "the reads after the command were not answered");
        }
        self.cache(reads, read_outputs);
        match out.failure {
            None => Ok(out.output),
            Some(_) => Err(ssh_err(
                &device,
                step,
                SshError::Cli {
                    device: device.clone(),
                    command: cmd.to_owned(),
                    output: out.output.trim().to_owned(),
                },
            )),
        }
    }

    fn cache(&mut self, cmds: &[&str], outputs: Vec<CommandOutput>) {
        for (c, o) in cmds.iter().zip(outputs) {
            let answer = match o.failure {
                None => Ok(o.output),
                Some(_) => Err(o.output.trim().to_owned()),
            };
            self.reads.insert((*c).to_owned(), answer);
        }
    }

    /// Run one command; a device failure string is `Rejected`.
    pub async fn run(&mut self, step: &'static str, cmd: &str) -> Result<String, DriverError> {
        self.check_open()?;
        let device = self.device.clone();
        self.command(cmd)
            .await
            .map_err(|e| ssh_err(&device, step, e))
    }

    /// A command the device may not know (or answer with nothing): `None` when it fails with a
    /// failure string or prints nothing.
    pub async fn optional(&mut self, cmd: &str) -> Result<Option<String>, DriverError> {
        self.check_open()?;
        let device = self.device.clone();
        match self.command(cmd).await {
            Ok(t) if t.trim().is_empty() => Ok(None),
            Ok(t) => Ok(Some(t)),
            Err(SshError::Cli { output, .. }) => {
                tracing::debug!(device = %device, command = cmd, output = %output, "optional command not answered");
                Ok(None)
            }
            Err(e) => Err(ssh_err(&device, "facts", e)),
        }
    }

    /// Configuration mode, `lines`, back to exec mode, in one write ([`CliShell::config_batch`]);
    /// the first refused line is the error.
    pub async fn config(
        &mut self,
        step: &'static str,
        lines: &[String],
    ) -> Result<(), DriverError> {
        self.config_then_read(step, lines, &[]).await
    }

    /// [`CliConn::config`] with `reads` written after the lines in the same write (one round trip
    /// for the change and the reads that verify it): their answers, taken after the change, are
    /// cached when every line was accepted.
    pub async fn config_then_read(
        &mut self,
        step: &'static str,
        lines: &[String],
        reads: &[&str],
    ) -> Result<(), DriverError> {
        self.reads.clear();
        let device = self.device.clone();
        #[cfg(feature = "replay")]
        if let Some(rec) = &self.replay {
            lines.iter().for_each(|l| rec.note_sent(l.as_str()));
            return Ok(());
        }
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let batch = self.batch;
        let (shell, busy) = self.shell_busy()?;
        *busy = true;
        if !batch {
            // The reads are asked when they are needed, each in its own write.
            let r = shell.config(&refs).await;
            *busy = false;
            return r.map(|_| ()).map_err(|e| ssh_err(&device, step, e));
        }
        let r = shell.config_batch(&refs, reads).await;
        *busy = false;
        let outputs = r.map_err(|e| ssh_err(&device, step, e))?;
        self.cache(reads, outputs);
        Ok(())
    }

    /// [`CliConn::config_then_read`], configuration mode entered with `enter` (IOS `configure
    /// terminal revert timer N`) on its own first: the lines must not reach the device before it is
    /// known to be in configuration mode. When the device refuses `enter` (it stays in privileged
    /// mode), the lines go through plain configuration mode. Returns whether `enter` was taken, and
    /// how the lines went.
    pub async fn config_entered_with(
        &mut self,
        step: &'static str,
        enter: &str,
        lines: &[String],
        reads: &[&str],
    ) -> (bool, Result<(), DriverError>) {
        if self.replayed() {
            // A recording answers no revert timer: the lines go as plain configuration.
            return (false, self.config_then_read(step, lines, reads).await);
        }
        self.reads.clear();
        let device = self.device.clone();
        let (shell, busy) = match self.shell_busy() {
            Ok(s) => s,
            Err(e) => return (false, Err(e)),
        };
        *busy = true;
        let entered = shell.enter_config_with(enter).await;
        *busy = false;
        let taken = match entered {
            Ok(()) => true,
            Err(e @ (SshError::Mode { .. } | SshError::Cli { .. })) => {
                tracing::warn!(device = %device, command = enter, error = %e, "refused: the change goes without the device's revert timer");
                false
            }
            Err(e) => return (false, Err(ssh_err(&device, step, e))),
        };
        (taken, self.config_then_read(step, lines, reads).await)
    }

    pub async fn close(&mut self) -> Result<(), DriverError> {
        self.reads.clear();
        if let Some(shell) = self.shell.take() {
            let _ = shell.close().await;
        }
        if let Some(session) = self.session.take() {
            session
                .close()
                .await
                .map_err(|e| ssh_err(&self.device, "close", e))?;
        }
        Ok(())
    }
}

/// A command that only reads (`show ...`, without a pipe into something that could write).
fn is_read(cmd: &str) -> bool {
    cmd.starts_with("show ")
        && cmd.split('|').skip(1).all(|p| {
            matches!(
                p.split_whitespace().next(),
                Some("json" | "include" | "exclude" | "section" | "begin")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::is_read;

    #[test]
    fn only_plain_reads_are_cached() {
        assert!(is_read("show vlan brief"));
        assert!(is_read("show interface | json"));
        assert!(is_read("show running-config | section interface"));
        assert!(!is_read("show running-config | redirect bootflash:x"));
        assert!(!is_read("show tech | tee bootflash:x"));
        assert!(!is_read("write memory"));
        assert!(!is_read("checkpoint netgw-1"));
        assert!(!is_read("terminal length 0"));
    }
}
