//! The SSH server under the NETCONF (Junos) and CLI (IOS, NX-OS) simulators (russh).
//!
//! ```text
//!   TcpListener (one per device) ── accept ── FaultStream ── russh::server::run_stream(Conn)
//!       Conn: password auth against the device (auth-fail fault), session channels kept until a
//!             request says what they are for:
//!             subsystem "netconf" (Junos) ─▶ task: junos::serve_netconf(channel stream)
//!             pty + shell (IOS, NX-OS)    ─▶ task: cli::serve_shell(channel)
//! ```
//! One host key and one `russh::server::Config` for the whole lab: key generation and config are
//! per-process costs, not per device.

use super::Device;
use super::cli::CliSim;
use super::fault::{ConnCtl, FaultStream};
use super::junos::JunosSim;
use russh::keys::PrivateKey;
use russh::keys::ssh_key::private::Ed25519Keypair;
use russh::server::{Auth, ChannelOpenHandle, Msg, Session};
use russh::{Channel, ChannelId};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// What a device's SSH server runs.
#[derive(Clone)]
pub enum SshApp {
    Netconf(Arc<JunosSim>),
    Cli(Arc<CliSim>),
}

impl SshApp {
    fn device(&self) -> &Arc<Device> {
        match self {
            SshApp::Netconf(j) => &j.dev,
            SshApp::Cli(c) => &c.dev,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SshSetupError {
    #[error("random seed for the host key: {0}")]
    Random(String),
}

/// The lab's host key (ed25519, fresh per run) and server configuration.
pub fn server_config() -> Result<Arc<russh::server::Config>, SshSetupError> {
    use ring::rand::SecureRandom;
    let mut seed = [0u8; 32];
    ring::rand::SystemRandom::new()
        .fill(&mut seed)
        .map_err(|e| SshSetupError::Random(e.to_string()))?;
    let key = PrivateKey::from(Ed25519Keypair::from_seed(&seed));
    let config = russh::server::Config {
        server_id: russh::SshId::Standard("SSH-2.0-netgw-lab".into()),
        keys: vec![key],
        // Refusals are immediate: the auth-fail fault should not cost the client a second per try.
        auth_rejection_time: Duration::from_millis(10),
        auth_rejection_time_initial: Some(Duration::from_millis(0)),
        inactivity_timeout: Some(Duration::from_secs(900)),
        nodelay: true,
        // Small per-channel buffers: thousands of idle devices must stay cheap.
        channel_buffer_size: 16,
        window_size: 1 << 20,
        ..Default::default()
    };
    Ok(Arc::new(config))
}

/// The public host key line (`ssh-ed25519 AAAA...`) for known-hosts files.
pub fn host_key_openssh(config: &russh::server::Config) -> Option<String> {
    config
        .keys
        .first()
        .and_then(|k| k.public_key().to_openssh().ok())
}

struct Conn {
    app: SshApp,
    ctl: Arc<ConnCtl>,
    channels: HashMap<ChannelId, Channel<Msg>>,
    pty: bool,
}

impl russh::server::Handler for Conn {
    type Error = russh::Error;

    async fn auth_password(&mut self, user: &str, password: &str) -> Result<Auth, Self::Error> {
        self.app.device().faults.delay().await;
        if self.app.device().check_login(user, password) {
            Ok(Auth::Accept)
        } else {
            Ok(Auth::reject())
        }
    }

    async fn channel_open_session(
        &mut self,
        channel: Channel<Msg>,
        reply: ChannelOpenHandle,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        if self.channels.len() >= 8 {
            reply
                .reject(russh::ChannelOpenFailure::ResourceShortage)
                .await;
            return Ok(());
        }
        self.channels.insert(channel.id(), channel);
        reply.accept().await;
        Ok(())
    }

    async fn pty_request(
        &mut self,
        channel: ChannelId,
        _term: &str,
        _col_width: u32,
        _row_height: u32,
        _pix_width: u32,
        _pix_height: u32,
        _modes: &[(russh::Pty, u32)],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        self.pty = true;
        session.channel_success(channel)
    }

    async fn subsystem_request(
        &mut self,
        channel: ChannelId,
        name: &str,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        match (&self.app, name, self.channels.remove(&channel)) {
            (SshApp::Netconf(j), "netconf", Some(ch)) => {
                session.channel_success(channel)?;
                let j = j.clone();
                let ctl = self.ctl.clone();
                tokio::spawn(async move { j.serve_netconf(ch, ctl).await });
                Ok(())
            }
            (_, _, ch) => {
                if let Some(ch) = ch {
                    self.channels.insert(channel, ch);
                }
                session.channel_failure(channel)
            }
        }
    }

    async fn shell_request(
        &mut self,
        channel: ChannelId,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        match (&self.app, self.channels.remove(&channel)) {
            (SshApp::Cli(c), Some(ch)) => {
                session.channel_success(channel)?;
                let c = c.clone();
                let ctl = self.ctl.clone();
                tokio::spawn(async move { c.serve_shell(ch, ctl).await });
                Ok(())
            }
            (_, ch) => {
                if let Some(ch) = ch {
                    self.channels.insert(channel, ch);
                }
                session.channel_failure(channel)
            }
        }
    }

    async fn exec_request(
        &mut self,
        channel: ChannelId,
        _data: &[u8],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.channel_failure(channel)
    }
}

/// Serve SSH for one device on `listener` until the task is dropped (aborted).
pub async fn serve(listener: TcpListener, config: Arc<russh::server::Config>, app: SshApp) {
    let limit = app.device().faults.reset_after_bytes;
    loop {
        let (tcp, _) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let ctl = ConnCtl::new(limit);
        let stream = FaultStream::new(tcp, ctl.clone());
        let handler = Conn {
            app: app.clone(),
            ctl,
            channels: HashMap::new(),
            pty: false,
        };
        let config = config.clone();
        let session = app.device().sessions.open();
        tokio::spawn(async move {
            let _session = session;
            match russh::server::run_stream(config, stream, handler).await {
                Ok(running) => {
                    if let Err(e) = running.await {
                        tracing::debug!(error = %e, "SSH session ended");
                    }
                }
                Err(e) => tracing::debug!(error = %e, "SSH handshake failed"),
            }
        });
    }
}
