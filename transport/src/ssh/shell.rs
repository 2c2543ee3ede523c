//! Interactive CLI shell over an SSH `shell` channel with a PTY: the channel layer of scrapli's
//! transport -> channel -> platform split. Everything vendor-specific comes from [`CliPlatform`].
//!
//! One command at a time: write `command\n`, read until the last line is a prompt of the platform
//! (user, privileged or config mode), then strip the echoed command and the prompt. Output is
//! normalised first: CRLF and lone CR removed, ANSI escape sequences removed, backspaces applied.
//! Output containing one of the platform's failure strings is a typed [`SshError::Cli`].
//!
//! Every read is bounded by the session's operation timeout. After a timeout or a lost channel the
//! shell is unusable (the device may still be printing); further calls fail fast.

use std::sync::LazyLock;

use netgw_models::secret::Secret;
use regex::Regex;
use russh::ChannelMsg;
use russh::client;
use tokio::time::{Duration, Instant, timeout_at};
use tracing::{debug, warn};

use super::platform::CliPlatform;
use super::{MAX_OUTPUT_BYTES, SshError, SshSession, abbreviate};

/// CLI modes, recognised from the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CliMode {
    /// Unprivileged exec (IOS `sw1>`).
    User,
    /// Privileged exec / operational mode (IOS `sw1#`, Junos `user@sw1>`).
    Privileged,
    /// Configuration mode, any depth (IOS `sw1(config-if)#`, Junos `user@sw1#`).
    Config,
}

/// What one command produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutput {
    /// Device output without the echoed command and the trailing prompt.
    pub output: String,
    /// The prompt that ended the output.
    pub prompt: String,
    /// The mode that prompt belongs to.
    pub mode: CliMode,
    /// The platform failure string found in the output, if any.
    pub failure: Option<String>,
}

/// How a read ended.
enum Stop {
    Prompt(CliMode),
    /// The extra pattern (e.g. a password prompt) matched.
    Extra,
}

/// An interactive CLI session on one shell channel.
pub struct CliShell {
    device: String,
    platform: CliPlatform,
    channel: russh::Channel<client::Msg>,
    operation_limit: Duration,
    /// Raw bytes received and not yet consumed.
    raw: Vec<u8>,
    mode: CliMode,
    prompt: String,
    /// The platform's on-open commands (paging off, a wide terminal), not sent yet: they go in the
    /// same write as the first commands the caller sends, after `enable`, which saves the device a
    /// round trip and runs them in privileged mode where some platforms require it.
    on_open: Vec<String>,
    /// Set once the shell cannot be trusted any more (timeout, channel closed).
    broken: Option<String>,
}

impl std::fmt::Debug for CliShell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CliShell")
            .field("device", &self.device)
            .field("platform", &self.platform.name)
            .field("mode", &self.mode)
            .field("prompt", &self.prompt)
            .finish_non_exhaustive()
    }
}

impl CliShell {
    /// PTY + shell, wait for the first prompt, run the platform's on-open commands.
    pub(super) async fn open(
        session: &SshSession,
        platform: &CliPlatform,
    ) -> Result<CliShell, SshError> {
        let device = session.device().to_owned();
        let limit = session.timeouts().operation;
        let operation = format!("open {} shell", platform.name);
        let deadline = Instant::now() + limit;
        let mut channel = session.open_channel(&operation, deadline).await?;

        let setup = async {
            // A wide terminal keeps long lines (and echoed commands) from wrapping.
            channel
                .request_pty(true, "vt100", 511, 200, 0, 0, &[])
                .await
                .map_err(|e| session.russh_error(&operation, e))?;
            wait_reply(&mut channel, session, "pty request").await?;
            channel
                .request_shell(true)
                .await
                .map_err(|e| session.russh_error(&operation, e))?;
            wait_reply(&mut channel, session, "shell request").await
        };
        match timeout_at(deadline, setup).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(SshError::Timeout {
                    device,
                    operation,
                    limit,
                });
            }
        }

        let mut shell = CliShell {
            device,
            platform: platform.clone(),
            channel,
            operation_limit: limit,
            raw: Vec::new(),
            mode: CliMode::User,
            prompt: String::new(),
            on_open: platform.on_open.clone(),
            broken: None,
        };

        // Banner/MOTD, then the first prompt. Some devices print it only after a newline: nudge once.
        let nudge_at = Instant::now() + limit.min(Duration::from_secs(3)) / 2;
        let first = match shell.read_until(&operation, nudge_at, None).await {
            Err(SshError::Timeout { .. }) => {
                shell.broken = None;
                shell.send_line(&operation, "").await?;
                shell.read_until(&operation, deadline, None).await?
            }
            other => other?,
        };
        if let (_, Stop::Prompt(mode), prompt) = first {
            shell.mode = mode;
            shell.prompt = prompt;
        }
        debug!(device = %shell.device, prompt = %shell.prompt, mode = ?shell.mode, "shell open");
        Ok(shell)
    }

    /// Note what the on-open commands answered (the first `n` of `outputs`, which are taken off).
    fn on_open_answered(&self, sent: &[String], outputs: &mut Vec<CommandOutput>) {
        let n = sent.len().min(outputs.len());
        for (cmd, out) in sent.iter().zip(outputs.drain(..n)) {
            if let Some(f) = out.failure {
                warn!(device = %self.device, command = %cmd, failure = %f,
                    "on-open command failed (paging may stay on)");
            }
        }
    }

    pub fn mode(&self) -> CliMode {
        self.mode
    }

    /// The last prompt seen, e.g. `sw1(config-vlan)#`.
    pub fn prompt(&self) -> &str {
        &self.prompt
    }

    pub fn platform(&self) -> &CliPlatform {
        &self.platform
    }

    /// Run one command; output containing a platform failure string is an [`SshError::Cli`].
    pub async fn command(&mut self, command: &str) -> Result<String, SshError> {
        let out = self.command_raw(command).await?;
        match out.failure {
            Some(_) => Err(SshError::Cli {
                device: self.device.clone(),
                command: abbreviate(command),
                output: out.output.trim().to_owned(),
            }),
            None => Ok(out.output),
        }
    }

    /// Run commands in order, stopping at the first failure.
    pub async fn commands(&mut self, commands: &[&str]) -> Result<Vec<String>, SshError> {
        let mut outputs = Vec::with_capacity(commands.len());
        for c in commands {
            outputs.push(self.command(c).await?);
        }
        Ok(outputs)
    }

    /// Run one command and return what the device said, failure or not.
    pub async fn command_raw(&mut self, command: &str) -> Result<CommandOutput, SshError> {
        if command.contains(['\n', '\r']) {
            return Err(SshError::InvalidCommand {
                device: self.device.clone(),
                command: abbreviate(command),
                reason: "it contains a line break (send one command per call)",
            });
        }
        if !self.on_open.is_empty() {
            // The on-open commands and this one in one write.
            let (mut outputs, broke) = self.batch_expecting(&[command], None).await;
            broke?;
            return outputs.pop().ok_or_else(|| SshError::Mode {
                device: self.device.clone(),
                operation: format!("command `{}`", abbreviate(command)),
                expected: "any prompt",
                prompt: self.prompt.clone(),
            });
        }
        let operation = format!("command `{}`", abbreviate(command));
        let deadline = Instant::now() + self.operation_limit;
        self.send_line(&operation, command).await?;
        let (text, stop, prompt) = self.read_until(&operation, deadline, None).await?;
        let Stop::Prompt(mode) = stop else {
            // Unreachable without an extra pattern; treat as a protocol surprise.
            return Err(SshError::Mode {
                device: self.device.clone(),
                operation,
                expected: "any prompt",
                prompt,
            });
        };
        self.mode = mode;
        self.prompt = prompt.clone();
        let output = strip_echo(&text, command);
        let failure = self.platform.failure_in(&output).map(str::to_owned);
        Ok(CommandOutput {
            output,
            prompt,
            mode,
            failure,
        })
    }

    /// Enter privileged mode. `secret` answers the password prompt when the device asks. Does nothing
    /// when already privileged or in config mode, or when the platform has no enable.
    pub async fn enable(&mut self, secret: Option<&Secret>) -> Result<(), SshError> {
        let Some((command, password_prompt)) = self.platform.enable.clone() else {
            return Ok(());
        };
        if self.mode != CliMode::User {
            return Ok(());
        }
        let operation = "enable".to_owned();
        let deadline = Instant::now() + self.operation_limit;
        self.send_line(&operation, &command).await?;
        let mut attempts = 0;
        let mut said = String::new();
        loop {
            let (text, stop, prompt) = self
                .read_until(&operation, deadline, Some(&password_prompt))
                .await?;
            said.push_str(&text);
            match stop {
                Stop::Extra => {
                    attempts += 1;
                    // IOS asks up to three times. After a refused secret, answer the remaining
                    // prompts with it again so the device gives up with `% Bad secrets` and returns
                    // to the user prompt (an empty answer is *accepted* by some simulators).
                    let Some(secret) = secret else {
                        self.send_line(&operation, "").await?;
                        if attempts > 3 {
                            return Err(self.enable_failed("password prompt repeated", &said));
                        }
                        continue;
                    };
                    if attempts > 3 {
                        return Err(self.enable_failed("password prompt repeated", &said));
                    }
                    // The secret goes to the device only; it is never logged or put in errors.
                    self.send_secret_line(&operation, secret).await?;
                }
                Stop::Prompt(mode) => {
                    self.mode = mode;
                    self.prompt = prompt;
                    if mode == CliMode::User {
                        let reason = if secret.is_none() {
                            "the device asked for a secret and none is configured"
                        } else {
                            "secret refused"
                        };
                        return Err(self.enable_failed(reason, &said));
                    }
                    break;
                }
            }
        }
        debug!(device = %self.device, prompt = %self.prompt, "privileged mode");
        Ok(())
    }

    fn enable_failed(&self, reason: &str, said: &str) -> SshError {
        let device_text: String = said
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with('%'))
            .collect::<Vec<_>>()
            .join(" ");
        SshError::Enable {
            device: self.device.clone(),
            reason: if device_text.is_empty() {
                reason.to_owned()
            } else {
                format!("{reason}: {device_text}")
            },
        }
    }

    /// Enter configuration mode (from privileged mode).
    pub async fn enter_config(&mut self) -> Result<(), SshError> {
        let Some(enter) = self.platform.config_enter.clone() else {
            return Err(self.mode_error("enter config", "config"));
        };
        self.enter_config_with(&enter).await
    }

    /// Enter configuration mode with `enter` instead of the platform's command (IOS `configure
    /// terminal revert timer 5`). A device that answers without leaving privileged mode (a refusal
    /// outside the platform's failure strings) is a mode error naming the command.
    pub async fn enter_config_with(&mut self, enter: &str) -> Result<(), SshError> {
        if self.mode == CliMode::Config {
            return Ok(());
        }
        self.command(enter).await?;
        if self.mode != CliMode::Config {
            return Err(self.mode_error(&format!("`{enter}`"), "config"));
        }
        Ok(())
    }

    /// Leave configuration mode from any depth. Uses the platform's `end`; when the device does not
    /// know it (fake-switches' IOS), falls back to `exit` until the privileged prompt.
    pub async fn exit_config(&mut self) -> Result<(), SshError> {
        if self.mode != CliMode::Config {
            return Ok(());
        }
        if let Some(end) = self.platform.config_end.clone() {
            let out = self.command_raw(&end).await?;
            if out.failure.is_none() && self.mode != CliMode::Config {
                return Ok(());
            }
        }
        for _ in 0..8 {
            self.command("exit").await?;
            if self.mode != CliMode::Config {
                return Ok(());
            }
        }
        Err(self.mode_error("exit config", "privileged"))
    }

    /// Enter config mode, run `commands`, leave config mode, even when a command failed (the first
    /// error is returned after leaving).
    pub async fn config(&mut self, commands: &[&str]) -> Result<Vec<String>, SshError> {
        self.enter_config().await?;
        self.config_entered(commands).await
    }

    /// [`CliShell::config`], configuration mode entered with `enter`.
    pub async fn config_with(
        &mut self,
        enter: &str,
        commands: &[&str],
    ) -> Result<Vec<String>, SshError> {
        self.enter_config_with(enter).await?;
        self.config_entered(commands).await
    }

    async fn config_entered(&mut self, commands: &[&str]) -> Result<Vec<String>, SshError> {
        let result = self.commands(commands).await;
        let exit = self.exit_config().await;
        let outputs = result?;
        exit?;
        Ok(outputs)
    }

    /// Write `commands` at once (one round trip) and read their answers in order, as
    /// [`CliShell::command_raw`] gives each: a platform's CLI reads typed-ahead lines one at a time
    /// and prints each one's echo, output and next prompt, so an answer ends where a prompt is
    /// followed by the echo of the next command (the last one where the output ends in a prompt).
    /// Returns the answers read, and the error that broke the batch off, if one did (the answers
    /// before it are still the device's).
    pub async fn batch_raw(
        &mut self,
        commands: &[&str],
    ) -> (Vec<CommandOutput>, Result<(), SshError>) {
        self.batch_expecting(commands, None).await
    }

    /// [`CliShell::batch_raw`]; with `expect` `(i, mode)`, the answers stop being read after the
    /// `i`-th when it does not end in `mode`: the commands after it ran in another mode than the one
    /// they were written for, where a device may answer them in any shape (fake-switches prints no
    /// prompt after a `show` in configuration mode). Their answers are left unread; the caller
    /// brings the shell back to a known mode.
    async fn batch_expecting(
        &mut self,
        commands: &[&str],
        expect: Option<(usize, CliMode)>,
    ) -> (Vec<CommandOutput>, Result<(), SshError>) {
        let sent = std::mem::take(&mut self.on_open);
        let all: Vec<&str> = sent
            .iter()
            .map(String::as_str)
            .chain(commands.iter().copied())
            .collect();
        let expect = expect.map(|(at, mode)| (at + sent.len(), mode));
        let (mut outputs, broke) = self.batch_written(&all, expect).await;
        self.on_open_answered(&sent, &mut outputs);
        (outputs, broke)
    }

    /// [`CliShell::batch_expecting`] of exactly `commands`.
    async fn batch_written(
        &mut self,
        commands: &[&str],
        expect: Option<(usize, CliMode)>,
    ) -> (Vec<CommandOutput>, Result<(), SshError>) {
        let mut outputs = Vec::with_capacity(commands.len());
        if let Some(bad) = commands
            .iter()
            .find(|c| c.contains(['\n', '\r']) || c.trim().is_empty())
        {
            let e = SshError::InvalidCommand {
                device: self.device.clone(),
                command: abbreviate(bad),
                reason: "it contains a line break or is empty (one command per item)",
            };
            return (outputs, Err(e));
        }
        let Some(first) = commands.first() else {
            return (outputs, Ok(()));
        };
        let operation = format!(
            "commands `{}` .. ({} in one write)",
            abbreviate(first),
            commands.len()
        );
        let mut bytes = Vec::new();
        for c in commands {
            bytes.extend_from_slice(c.as_bytes());
            bytes.push(b'\n');
        }
        if let Err(e) = self.send(&operation, bytes).await {
            return (outputs, Err(e));
        }
        for (i, command) in commands.iter().enumerate() {
            let deadline = Instant::now() + self.operation_limit;
            let read = match commands.get(i + 1) {
                Some(next) => {
                    self.read_until_prompt_before(&operation, deadline, next)
                        .await
                }
                None => match self.read_until(&operation, deadline, None).await {
                    Ok((text, Stop::Prompt(mode), prompt)) => Ok((text, mode, prompt)),
                    Ok((_, Stop::Extra, prompt)) => Err(SshError::Mode {
                        device: self.device.clone(),
                        operation: operation.clone(),
                        expected: "any prompt",
                        prompt,
                    }),
                    Err(e) => Err(e),
                },
            };
            match read {
                Ok((text, mode, prompt)) => {
                    self.mode = mode;
                    self.prompt = prompt.clone();
                    outputs.push(self.output_of(command, &text, prompt, mode));
                }
                Err(e) => return (outputs, Err(e)),
            }
            if expect.is_some_and(|(at, mode)| at == i && self.mode != mode) {
                break;
            }
        }
        (outputs, Ok(()))
    }

    /// Read until a prompt followed by the echo of `next` (see [`CliShell::batch_raw`]).
    async fn read_until_prompt_before(
        &mut self,
        operation: &str,
        deadline: Instant,
        next: &str,
    ) -> Result<(String, CliMode, String), SshError> {
        self.check_usable(operation)?;
        let mut scanned = 0;
        loop {
            if let Some(found) = self.match_prompt_before(next, &mut scanned) {
                return Ok(found);
            }
            self.receive(operation, deadline).await?;
        }
    }

    /// Configuration mode, `commands`, back to privileged mode, then `reads`, all in one write (one
    /// round trip) from privileged mode (from configuration mode: without entering it); from user
    /// mode, or on a platform without an `end`, one command at a time as [`CliShell::config`] and the
    /// reads after it. Returns the reads' answers (taken after the change): none when the device did
    /// not take `end` (the reads ran in configuration mode; the caller reads again). The first
    /// failing command is the error, after the shell is back in privileged mode: the device goes on
    /// with the lines after it (typed ahead), so callers restore from what they read afterwards, as
    /// after any failed change.
    pub async fn config_batch(
        &mut self,
        commands: &[&str],
        reads: &[&str],
    ) -> Result<Vec<CommandOutput>, SshError> {
        let (Some(enter), Some(end)) = (
            self.platform.config_enter.clone(),
            self.platform.config_end.clone(),
        ) else {
            return self.config_then_read(commands, reads).await;
        };
        // Already in configuration mode (entered with a revert timer): the lines go without `enter`.
        let enter = match self.mode {
            CliMode::Privileged => Some(enter),
            CliMode::Config => None,
            CliMode::User => return self.config_then_read(commands, reads).await,
        };
        let mut all: Vec<&str> = Vec::with_capacity(commands.len() + reads.len() + 2);
        all.extend(enter.as_deref());
        all.extend_from_slice(commands);
        all.push(&end);
        all.extend_from_slice(reads);
        let skip = usize::from(enter.is_some());
        let end_at = skip + commands.len();
        let (mut outputs, broke) = self
            .batch_expecting(&all, Some((end_at, CliMode::Privileged)))
            .await;
        let reads_out = outputs.split_off(outputs.len().min(end_at + 1));
        let entered = enter.is_none() || outputs.first().is_some_and(|o| o.mode == CliMode::Config);
        let failed = outputs
            .iter()
            .zip(&all)
            .skip(skip)
            .take(commands.len())
            .find(|(o, _)| o.failure.is_some())
            .map(|(o, c)| SshError::Cli {
                device: self.device.clone(),
                command: abbreviate(c),
                output: o.output.trim().to_owned(),
            });
        if broke.is_ok() && self.mode != CliMode::Privileged {
            // `end` was refused (fake-switches' IOS has none) or the lines left another mode: the
            // slow way back, past the reads' answers left unread.
            self.exit_config().await?;
        }
        if let Some(e) = failed {
            return Err(e);
        }
        broke?;
        if !entered {
            let enter = enter.unwrap_or_default();
            return Err(self.mode_error(&format!("`{enter}`"), "config"));
        }
        if self.mode != CliMode::Privileged {
            return Err(self.mode_error("configuration batch", "privileged"));
        }
        Ok(reads_out)
    }

    /// [`CliShell::config`], then `reads`, one command at a time.
    async fn config_then_read(
        &mut self,
        commands: &[&str],
        reads: &[&str],
    ) -> Result<Vec<CommandOutput>, SshError> {
        self.config(commands).await?;
        let mut out = Vec::with_capacity(reads.len());
        for r in reads {
            out.push(self.command_raw(r).await?);
        }
        Ok(out)
    }

    /// Close the shell channel (the SSH session stays open).
    pub async fn close(self) -> Result<(), SshError> {
        let _ = self.channel.eof().await;
        let _ = self.channel.close().await;
        Ok(())
    }

    fn mode_error(&self, operation: &str, expected: &'static str) -> SshError {
        SshError::Mode {
            device: self.device.clone(),
            operation: operation.to_owned(),
            expected,
            prompt: self.prompt.clone(),
        }
    }

    fn check_usable(&self, operation: &str) -> Result<(), SshError> {
        match &self.broken {
            Some(reason) => Err(SshError::Disconnected {
                device: self.device.clone(),
                operation: operation.to_owned(),
                reason: Some(format!("shell unusable after {reason}")),
            }),
            None => Ok(()),
        }
    }

    async fn send_line(&mut self, operation: &str, line: &str) -> Result<(), SshError> {
        self.check_usable(operation)?;
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        self.send(operation, bytes).await
    }

    async fn send_secret_line(&mut self, operation: &str, secret: &Secret) -> Result<(), SshError> {
        self.check_usable(operation)?;
        let mut bytes = Vec::with_capacity(secret.expose().len() + 1);
        bytes.extend_from_slice(secret.expose().as_bytes());
        bytes.push(b'\n');
        self.send(operation, bytes).await
    }

    async fn send(&mut self, operation: &str, bytes: Vec<u8>) -> Result<(), SshError> {
        if let Err(e) = self.channel.data(&bytes[..]).await {
            self.broken = Some(format!("send failure in {operation}"));
            return Err(SshError::Disconnected {
                device: self.device.clone(),
                operation: operation.to_owned(),
                reason: Some(e.to_string()),
            });
        }
        Ok(())
    }

    /// Read until the last line is a prompt (or matches `extra`). Returns the cleaned text before that
    /// line, how it stopped, and the (trimmed) last line.
    async fn read_until(
        &mut self,
        operation: &str,
        deadline: Instant,
        extra: Option<&Regex>,
    ) -> Result<(String, Stop, String), SshError> {
        self.check_usable(operation)?;
        loop {
            if let Some(found) = self.match_tail(extra) {
                return Ok(found);
            }
            self.receive(operation, deadline).await?;
        }
    }

    /// Wait for the next message of the channel and buffer its data.
    async fn receive(&mut self, operation: &str, deadline: Instant) -> Result<(), SshError> {
        let msg = match timeout_at(deadline, self.channel.wait()).await {
            Ok(m) => m,
            Err(_) => {
                self.broken = Some(format!("timeout in {operation}"));
                return Err(SshError::Timeout {
                    device: self.device.clone(),
                    operation: format!(
                        "{operation} (waiting for the prompt; last output: {:?})",
                        tail_for_error(&self.raw)
                    ),
                    limit: self.operation_limit,
                });
            }
        };
        match msg {
            Some(ChannelMsg::Data { data }) => self.raw.extend_from_slice(&data),
            Some(ChannelMsg::ExtendedData { data, .. }) => self.raw.extend_from_slice(&data),
            Some(ChannelMsg::Eof | ChannelMsg::Close) | None => {
                self.broken = Some(format!("channel closed in {operation}"));
                return Err(SshError::Disconnected {
                    device: self.device.clone(),
                    operation: operation.to_owned(),
                    reason: Some(format!(
                        "the device closed the shell; last output: {:?}",
                        tail_for_error(&self.raw)
                    )),
                });
            }
            Some(_) => {}
        }
        if self.raw.len() > MAX_OUTPUT_BYTES {
            self.broken = Some(format!("oversized output in {operation}"));
            return Err(SshError::Disconnected {
                device: self.device.clone(),
                operation: operation.to_owned(),
                reason: Some(format!("output exceeds {MAX_OUTPUT_BYTES} bytes")),
            });
        }
        Ok(())
    }

    /// The command's answer from the text before its prompt.
    fn output_of(&self, command: &str, text: &str, prompt: String, mode: CliMode) -> CommandOutput {
        let output = strip_echo(text, command);
        let failure = self.platform.failure_in(&output).map(str::to_owned);
        CommandOutput {
            output,
            prompt,
            mode,
            failure,
        }
    }

    /// If a complete line from `*scanned` on is a prompt followed by the echo of `next` (the command
    /// written after the one being answered), consume up to that echo: the text before the line, the
    /// mode and the prompt. The first line is the answered command's own echo, never its end.
    fn match_prompt_before(
        &mut self,
        next: &str,
        scanned: &mut usize,
    ) -> Option<(String, CliMode, String)> {
        let next = next.trim();
        let mut start = *scanned;
        while let Some(nl) = memchr::memchr(b'\n', &self.raw[start..]) {
            let end = start + nl;
            let line = &self.raw[start..end];
            if start > 0
                && let Some(found) = self.prompt_then(line, next)
            {
                let (mode, prompt, echo_at) = found;
                let text = clean(&self.raw[..start]);
                self.raw.drain(..start + echo_at);
                *scanned = 0;
                return Some((text, mode, prompt));
            }
            start = end + 1;
        }
        *scanned = start;
        None
    }

    /// `line` (raw, without its line end) read as a prompt of the platform followed by `next`: the
    /// prompt's mode, the prompt, and where in `line` the echo starts (its end when the echo cannot be
    /// found in the raw bytes: the next answer then starts without it).
    fn prompt_then(&self, line: &[u8], next: &str) -> Option<(CliMode, String, usize)> {
        // Most lines are output: without escapes or backspaces, the raw line must end in the echo.
        let plain = memchr::memchr2(0x1b, 0x08, line).is_none();
        if plain && !line.trim_ascii_end().ends_with(next.as_bytes()) {
            return None;
        }
        let cleaned = clean(line);
        let prompt = cleaned.trim_end().strip_suffix(next)?.trim();
        let mode = self.platform.prompt_mode(prompt)?;
        let echo_at = line
            .windows(next.len().max(1))
            .rposition(|w| w == next.as_bytes())
            .unwrap_or(line.len());
        Some((mode, prompt.to_owned(), echo_at))
    }

    /// If the buffered output ends in a prompt, consume it.
    fn match_tail(&mut self, extra: Option<&Regex>) -> Option<(String, Stop, String)> {
        let start = self
            .raw
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        if extra.is_none() && !maybe_prompt(&self.platform, &self.raw[start..]) {
            return None;
        }
        let last = clean(&self.raw[start..]);
        let last = last.trim();
        let stop = if let Some(mode) = self.platform.prompt_mode(last) {
            Stop::Prompt(mode)
        } else if extra.is_some_and(|r| r.is_match(last)) {
            Stop::Extra
        } else {
            return None;
        };
        let prompt = last.to_owned();
        let text = clean(&self.raw[..start]);
        self.raw.clear();
        Some((text, stop, prompt))
    }
}

async fn wait_reply(
    channel: &mut russh::Channel<client::Msg>,
    session: &SshSession,
    request: &str,
) -> Result<(), SshError> {
    loop {
        match channel.wait().await {
            Some(ChannelMsg::Success) => return Ok(()),
            Some(ChannelMsg::Failure) => {
                return Err(SshError::ChannelRefused {
                    device: session.device().to_owned(),
                    request: request.to_owned(),
                });
            }
            Some(ChannelMsg::Eof | ChannelMsg::Close) | None => {
                return Err(session.disconnected(request));
            }
            Some(_) => {}
        }
    }
}

/// Cheap test before cleaning and matching the last line: false only when the line cannot be a
/// prompt, because its last visible byte ends none of the platform's prompts. Escape sequences,
/// backspaces and non-ASCII bytes (which `clean` and `trim` could change) always answer true.
fn maybe_prompt(platform: &CliPlatform, line: &[u8]) -> bool {
    if line.iter().any(|&b| b == 0x1b || b == 0x08) {
        return true;
    }
    match line
        .iter()
        .rev()
        .find(|&&b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c | 0 | 7))
    {
        None => false,
        Some(&b) if b >= 0x80 => true,
        Some(&b) => platform.may_end_prompt(b),
    }
}

static ANSI: LazyLock<Regex> = LazyLock::new(|| {
    // CSI sequences (`ESC [ ... final`), charset selection (`ESC ( B`), and two-byte escapes.
    #[allow(clippy::expect_used)]
    Regex::new(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78DEHMNOZc]")
        .expect("literal regex (tested)")
});

/// Terminal output to text: lossy UTF-8, ANSI escapes removed, backspace applied, CR removed, NUL and
/// BEL dropped.
pub fn clean(raw: &[u8]) -> String {
    // Almost all output: valid UTF-8 with neither escapes (every ANSI match starts with ESC) nor
    // backspaces. Then dropping the CR, NUL and BEL bytes is all there is to do, and byte by byte is
    // the same as character by character (they are ASCII, never inside a multi-byte character, so
    // the result is valid UTF-8 exactly when `raw` is).
    if memchr::memchr2(0x1b, 0x08, raw).is_some() {
        return clean_general(raw);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut from = 0;
    for at in memchr::memchr3_iter(b'\r', 0, 7, raw) {
        out.extend_from_slice(&raw[from..at]);
        from = at + 1;
    }
    out.extend_from_slice(&raw[from..]);
    String::from_utf8(out).unwrap_or_else(|_| clean_general(raw))
}

/// The general path of [`clean`]: lossy UTF-8, escapes removed, backspaces applied.
fn clean_general(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let text = ANSI.replace_all(&text, "");
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{8}' => {
                out.pop();
            }
            '\r' | '\0' | '\u{7}' => {}
            c => out.push(c),
        }
    }
    out
}

/// Remove the echoed command (the first line containing it, near the start) and surrounding blank
/// lines.
fn strip_echo(text: &str, command: &str) -> String {
    let body = match text.find(command.trim()) {
        // The echo is at the start, possibly after leftover prompt text; never deep in the output.
        Some(pos) if !command.trim().is_empty() && !text[..pos].contains('\n') => {
            match text[pos..].find('\n') {
                Some(nl) => &text[pos + nl + 1..],
                None => "",
            }
        }
        _ => text,
    };
    body.trim_matches('\n').trim_end().to_owned()
}

/// The last 200 characters of raw output, cleaned, for error messages.
fn tail_for_error(raw: &[u8]) -> String {
    let text = clean(raw);
    let chars: Vec<char> = text.chars().collect();
    let from = chars.len().saturating_sub(200);
    chars[from..].iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_terminal_output() {
        assert_eq!(clean(b"show vlan\r\n\x1b[0mVLAN\r\n"), "show vlan\nVLAN\n");
        assert_eq!(clean(b"ab\x08c\x07\x00"), "ac");
        assert_eq!(clean(b"\x1b[?25h\x1b(Bsw1#"), "sw1#");
        // Invalid UTF-8 from the device does not panic.
        assert_eq!(clean(&[0xff, b'a']), "\u{fffd}a");
    }

    /// The fast path gives exactly what the general one gives, on generated terminal output.
    #[test]
    fn clean_fast_path_matches_the_general_one() {
        let pieces: [&[u8]; 12] = [
            b"sw1#",
            b"\r\n",
            b"\r",
            b"\x00",
            b"\x07",
            b"Gi0/1  up",
            "é".as_bytes(),
            b"\xc3",
            b"\xa9",
            b"\xe2\x82",
            b"\x1b[0m",
            b"\x08",
        ];
        let mut seed = 7u64;
        for _ in 0..20_000 {
            let mut raw = Vec::new();
            for _ in 0..(seed % 9) {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                raw.extend_from_slice(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            assert_eq!(clean(&raw), clean_general(&raw), "{raw:?}");
        }
    }

    #[test]
    fn echo_is_stripped_once() {
        let text = "show vlan\n\nVLAN Name\n1    default\n\n";
        assert_eq!(strip_echo(text, "show vlan"), "VLAN Name\n1    default");
        // The command text deeper in the output is not the echo.
        let no_echo = "line\nshow vlan\n";
        assert_eq!(strip_echo(no_echo, "show vlan"), "line\nshow vlan");
        assert_eq!(strip_echo("terminal length 0\n", "terminal length 0"), "");
    }

    #[test]
    fn prompt_prefilter_never_hides_a_prompt() {
        use super::super::PlatformKind;
        let mut lines: Vec<Vec<u8>> = [
            "sw1#",
            "sw1# ",
            "sw1>\r",
            "sw1(config-if)#",
            "user@host:~$ ",
            "[root@h ~]#",
            "VLAN0100",
            "sw1#\x1b[K",
            "sw1\x08#",
            "sw1#\u{a0}",
            "",
            " ",
            "abc#x",
            "Password:",
            "x$\x07\x00",
        ]
        .iter()
        .map(|l| l.as_bytes().to_vec())
        .collect();
        // Deterministic pseudo-random lines over an alphabet rich in prompt characters.
        let alphabet = b"sw1#>$()-: \r\t\x07\x00\x1b[K\x08\xc2\xa0ab";
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let mut l = Vec::new();
            for _ in 0..(x % 9) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                l.push(alphabet[(x % alphabet.len() as u64) as usize]);
            }
            x = x.wrapping_add(1);
            lines.push(l);
        }
        for kind in PlatformKind::ALL {
            let p = CliPlatform::get(kind);
            for l in &lines {
                let full = p.prompt_mode(clean(l).trim()).is_some();
                assert!(
                    !full || maybe_prompt(p, l),
                    "{kind:?}: {l:?} is a prompt but the prefilter skipped it"
                );
            }
            assert!(!maybe_prompt(p, b"VLAN0100 active"));
        }
    }

    #[test]
    fn tail_is_bounded() {
        let raw = vec![b'x'; 1000];
        assert_eq!(tail_for_error(&raw).len(), 200);
    }
}
