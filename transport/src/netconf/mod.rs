//! NETCONF (RFC 6241) over SSH (RFC 6242): framing codec, client, rpc-reply parsing.
//!
//! ```text
//!   connect_ssh(&SshTarget) ── SshSession::connect ── subsystem("netconf") ──▶ SubsystemStream
//!                                                                                  │
//!   NetconfClient<S: AsyncRead + AsyncWrite>  ◀── handshake (hello, framing) ──────┘
//!     ├─ codec.rs   RFC 6242 framing: ]]>]]> (base:1.0) and chunked (base:1.1)
//!     ├─ ops.rs     typed operations rendered to XML (escaped values, checked fragments)
//!     ├─ reply.rs   hello / rpc-reply parsing: <ok/>, <data>, rpc-error (RFC 6241 §4.3)
//!     └─ error.rs   NetconfError, RpcError
//! ```
//! Only [`connect_ssh`] knows SSH; tests drive [`NetconfClient`] over `tokio::io::duplex`.

pub mod client;
pub mod codec;
pub mod error;
pub mod ops;
pub mod reply;

use std::ops::{Deref, DerefMut};

pub use client::{ClientOptions, NetconfClient};
pub use codec::{Framing, NetconfCodec};
pub use error::{ErrorInfo, ErrorTag, ErrorType, FramingError, NetconfError, RpcError, Severity};
pub use ops::{
    Datastore, DefaultOperation, EditConfig, ErrorOption, Filter, Operation, TestOption,
};
pub use reply::{RpcReply, ServerHello, XmlElement, XmlNode};

use crate::ssh::{SshSession, SshTarget, SubsystemStream};

/// What a session's NETCONF messages travel on: the SSH subsystem, or (feature `replay`) an in-process
/// pipe to a recorded device.
pub type NetconfStream = tokio_util::either::Either<SubsystemStream, tokio::io::DuplexStream>;

/// A NETCONF session over SSH: the client plus the SSH connection that carries it. Derefs to
/// [`NetconfClient`], so every operation is available directly.
#[derive(Debug)]
pub struct NetconfSsh {
    client: NetconfClient<NetconfStream>,
    /// `None` for a replayed session.
    ssh: Option<SshSession>,
}

impl Deref for NetconfSsh {
    type Target = NetconfClient<NetconfStream>;
    fn deref(&self) -> &Self::Target {
        &self.client
    }
}

impl DerefMut for NetconfSsh {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.client
    }
}

impl NetconfSsh {
    /// `<close-session>`, then close the SSH connection. Both are attempted; the first error is returned.
    pub async fn close(self) -> Result<(), NetconfError> {
        let r = self.client.close_session().await;
        let Some(ssh) = self.ssh else { return r };
        let s = ssh
            .close()
            .await
            .map_err(|e| NetconfError::Ssh(Box::new(e)));
        r.and(s)
    }

    /// A session over any NETCONF stream, without SSH (a replayed device, `crate::replay`).
    pub async fn over(stream: NetconfStream, device: &str) -> Result<NetconfSsh, NetconfError> {
        let options = ClientOptions {
            device: device.to_owned(),
            ..ClientOptions::default()
        };
        let client = NetconfClient::handshake(stream, options).await?;
        Ok(NetconfSsh { client, ssh: None })
    }

    /// The SSH session (e.g. to check whether it is closed); `None` for a replayed session.
    pub fn ssh(&self) -> Option<&SshSession> {
        self.ssh.as_ref()
    }
}

/// Connect over SSH, open the `netconf` subsystem (RFC 6242 §3) and exchange hellos. The device name
/// and timeouts come from `target`; framing advertisement and message size bound use the defaults.
pub async fn connect_ssh(target: &SshTarget) -> Result<NetconfSsh, NetconfError> {
    connect_ssh_with(target, ClientOptions::default()).await
}

/// [`connect_ssh`] with options; `options.device` and `options.timeouts` are replaced by the target's.
pub async fn connect_ssh_with(
    target: &SshTarget,
    mut options: ClientOptions,
) -> Result<NetconfSsh, NetconfError> {
    let ctx = || {
        format!(
            "netconf connect to {} ({}:{})",
            target.device, target.host, target.port
        )
    };
    let ssh = SshSession::connect(target)
        .await
        .map_err(|e| NetconfError::Ssh(Box::new(e)).context(ctx()))?;
    let stream = match ssh.subsystem("netconf").await {
        Ok(s) => s,
        Err(e) => {
            let _ = ssh.close().await;
            return Err(NetconfError::Ssh(Box::new(e)).context(ctx()));
        }
    };
    options.device = target.device.clone();
    options.timeouts = target.timeouts;
    match NetconfClient::handshake(tokio_util::either::Either::Left(stream), options).await {
        Ok(client) => Ok(NetconfSsh {
            client,
            ssh: Some(ssh),
        }),
        Err(e) => {
            let _ = ssh.close().await;
            Err(e)
        }
    }
}
