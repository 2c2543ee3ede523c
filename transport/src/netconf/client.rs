//! NETCONF client session, generic over the byte stream (tests drive it with `tokio::io::duplex`; only
//! [`super::connect_ssh`] knows SSH).
//!
//! ```text
//!   NetconfClient::handshake(stream)        hello exchange in ]]>]]> framing (RFC 6242 §4.1)
//!        | both hellos have base:1.1 ?  -> codec switched to chunked framing
//!        v
//!   rpc(op)  = timeout(operation) { send <rpc message-id=N>  (one write per message)
//!                                   read until rpc-reply with message-id N
//!                                   (notifications and replies to abandoned ids skipped) }
//!   send_ahead([op...])              the RPCs written at once, before their replies (RFC 6241 §4.5
//!                                   answers in order); each later rpc(op) naming the next one sent
//!                                   ahead reads its reply instead of sending it again
//! ```
//! Reads go through a `Framed` buffer, so a timed-out RPC leaves the stream consistent: its late reply
//! is recognised by message-id and dropped. A framing or I/O error poisons the session.
//!
//! Sending ahead is for a driver that knows its next requests, to spend one round trip on several
//! (what a device far away costs is round trips). A request sent ahead that the caller then does not
//! ask for (an earlier reply changed its course) has still been executed by the server: send ahead only
//! reads, and writes that are harmless in every course; its reply is dropped.

use std::collections::{HashSet, VecDeque};

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_util::codec::Framed;

use super::codec::{DEFAULT_MAX_MESSAGE_SIZE, Framing, NetconfCodec};
use super::error::{NetconfError, Result};
use super::ops::{
    CAP_BASE_10, CAP_BASE_11, Datastore, EditConfig, Filter, Operation, client_hello, rpc_envelope,
};
use super::reply::{RpcReply, ServerHello, parse_document, parse_hello};
use crate::Timeouts;

/// Session options.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Device name used in errors (`get-config on sw1 timed out after 30s`).
    pub device: String,
    /// `operation` bounds each RPC (and the hello exchange).
    pub timeouts: Timeouts,
    /// Upper bound for one message from the peer.
    pub max_message_size: usize,
    /// Advertise base:1.1 (chunked framing when the server has it too). Off forces `]]>]]>` framing.
    pub base11: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            device: "device".into(),
            timeouts: Timeouts::default(),
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            base11: true,
        }
    }
}

impl ClientOptions {
    pub fn new(device: impl Into<String>, timeouts: Timeouts) -> Self {
        ClientOptions {
            device: device.into(),
            timeouts,
            ..ClientOptions::default()
        }
    }
}

/// A NETCONF session.
pub struct NetconfClient<S> {
    framed: Framed<S, NetconfCodec>,
    device: String,
    timeouts: Timeouts,
    hello: ServerHello,
    next_id: u64,
    /// message-ids of RPCs whose reply we stopped waiting for (timeouts), or have not asked for yet.
    abandoned: HashSet<String>,
    /// RPCs sent ahead, in order: the operation's XML and its message-id.
    ahead: VecDeque<(String, String)>,
    /// Why the session can no longer be used, after a framing/I/O/protocol error.
    broken: Option<String>,
}

impl<S> std::fmt::Debug for NetconfClient<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetconfClient")
            .field("device", &self.device)
            .field("session_id", &self.hello.session_id)
            .field("framing", &self.framed.codec().framing())
            .finish_non_exhaustive()
    }
}

/// Capability comparison ignoring `?module=...` parameters. The RFC 4741-era spelling in the XML
/// namespace form (`urn:ietf:params:xml:ns:netconf:base:1.0`, `...:xml:ns:netconf:capability:...`),
/// which Junos lists next to the standard one and fake-switches uses alone, counts as the same URI.
fn cap_matches(advertised: &str, uri: &str) -> bool {
    fn norm(s: &str) -> &str {
        let s = s.split('?').next().unwrap_or(s).trim();
        s.strip_prefix("urn:ietf:params:xml:ns:netconf:")
            .unwrap_or(s)
    }
    fn norm_uri(s: &str) -> &str {
        let s = norm(s);
        s.strip_prefix("urn:ietf:params:netconf:").unwrap_or(s)
    }
    norm_uri(advertised) == norm_uri(uri)
}

async fn read_message<S: AsyncRead + AsyncWrite + Unpin>(
    framed: &mut Framed<S, NetconfCodec>,
) -> Result<String> {
    match framed.next().await {
        None => Err(NetconfError::Closed),
        Some(Err(e)) => Err(e),
        Some(Ok(bytes)) => String::from_utf8(bytes.to_vec())
            .map_err(|e| NetconfError::Xml(format!("message is not UTF-8: {e}"))),
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> NetconfClient<S> {
    /// Exchange hellos on `stream` and negotiate framing (RFC 6241 §8.1, RFC 6242 §4.1).
    pub async fn handshake(stream: S, opts: ClientOptions) -> Result<Self> {
        let device = opts.device.clone();
        let limit = opts.timeouts.operation;
        match tokio::time::timeout(limit, Self::handshake_inner(stream, opts)).await {
            Ok(r) => r.map_err(|e| e.context(format!("hello exchange with {device}"))),
            Err(_) => Err(NetconfError::Timeout {
                operation: "hello exchange".into(),
                device,
                limit,
            }),
        }
    }

    async fn handshake_inner(stream: S, opts: ClientOptions) -> Result<Self> {
        let mut framed = Framed::new(stream, NetconfCodec::new(opts.max_message_size));
        // Our hello goes in its own write, before anything else (fake-switches drops an RPC that shares
        // a write with the hello).
        framed.send(Bytes::from(client_hello(opts.base11))).await?;
        let hello = parse_hello(&read_message(&mut framed).await?)?;
        let has = |uri: &str| hello.capabilities.iter().any(|c| cap_matches(c, uri));
        let (base10, base11) = (has(CAP_BASE_10), has(CAP_BASE_11));
        if !base10 && !base11 {
            return Err(NetconfError::Protocol(
                "server advertises neither base:1.0 nor base:1.1".into(),
            ));
        }
        if opts.base11 && base11 {
            framed.codec_mut().set_framing(Framing::Chunked);
        } else if !base10 {
            return Err(NetconfError::Protocol(
                "server only speaks base:1.1 but the client disabled it".into(),
            ));
        }
        tracing::debug!(device = %opts.device, session_id = ?hello.session_id, framing = ?framed.codec().framing(), "netconf session up");
        Ok(NetconfClient {
            framed,
            device: opts.device,
            timeouts: opts.timeouts,
            hello,
            next_id: 1,
            abandoned: HashSet::new(),
            ahead: VecDeque::new(),
            broken: None,
        })
    }

    pub fn device(&self) -> &str {
        &self.device
    }

    /// The server's session-id (from its hello).
    pub fn session_id(&self) -> Option<u32> {
        self.hello.session_id
    }

    /// The server's capabilities, as advertised.
    pub fn capabilities(&self) -> &[String] {
        &self.hello.capabilities
    }

    /// Whether the server advertised `uri` (ignoring `?module=...` parameters).
    pub fn has_capability(&self, uri: &str) -> bool {
        self.hello.capabilities.iter().any(|c| cap_matches(c, uri))
    }

    /// The framing in force after the hello exchange.
    pub fn framing(&self) -> Framing {
        self.framed.codec().framing()
    }

    /// Send one operation and wait for its reply, bounded by `Timeouts.operation`. An `rpc-reply` with
    /// errors of severity `error` is `Err(NetconfError::Rpc)`; warnings come back in `RpcReply::warnings`.
    pub async fn rpc(&mut self, op: &Operation) -> Result<RpcReply> {
        let reply = self.send(op).await?;
        reply
            .into_result()
            .map_err(|e| e.context(format!("{} on {}", op.name(), self.device)))
    }

    /// A read-only vendor RPC (`xml` is the content of `<rpc>`) whose reply may answer for several
    /// members: errors about members that did not answer, beside the data of those that did, come back
    /// in `RpcReply::member_errors` ([`RpcReply::into_partial_result`]); any other error is
    /// `Err(NetconfError::Rpc)` as for [`Client::rpc`]. Not for configuration RPCs.
    pub async fn rpc_read(&mut self, xml: &str) -> Result<RpcReply> {
        let op = Operation::Raw(xml.to_string());
        let reply = self.send(&op).await?;
        reply
            .into_partial_result()
            .map_err(|e| e.context(format!("{} on {}", op.name(), self.device)))
    }

    /// Write `ops` at once, before any reply: each is answered by the next [`Client::rpc`] (or any
    /// call that sends an operation) asking for the same operation in the same order. Asking for
    /// anything else first drops what was sent ahead and not yet asked for (its replies skipped as
    /// they come). Operations already sent ahead, next in line and in this order, are not sent again.
    /// Bounded by `Timeouts.operation`.
    pub async fn send_ahead(&mut self, ops: &[Operation]) -> Result<()> {
        self.usable()?;
        let xmls = ops
            .iter()
            .map(Operation::to_xml)
            .collect::<Result<Vec<_>>>()?;
        if xmls.len() <= self.ahead.len() && xmls.iter().zip(&self.ahead).all(|(x, (a, _))| x == a)
        {
            return Ok(());
        }
        // What was sent ahead and not asked for stays abandoned: its replies are skipped.
        self.ahead.clear();
        let mut msgs = Vec::with_capacity(ops.len());
        for xml in xmls {
            let id = self.next_id.to_string();
            self.next_id += 1;
            msgs.push(rpc_envelope(&id, &xml));
            // Abandoned until asked for: a reply nobody asks for is skipped.
            self.abandoned.insert(id.clone());
            self.ahead.push_back((xml, id));
        }
        let limit = self.timeouts.operation;
        let write = async {
            for m in msgs {
                self.framed.feed(Bytes::from(m)).await?;
            }
            SinkExt::<Bytes>::flush(&mut self.framed).await
        };
        match tokio::time::timeout(limit, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(self.poison(e)),
            Err(_) => Err(self.poison(NetconfError::Timeout {
                operation: "send-ahead".into(),
                device: self.device.clone(),
                limit,
            })),
        }
    }

    /// An error once a framing, I/O or protocol error has made the session unusable.
    fn usable(&self) -> Result<()> {
        match &self.broken {
            Some(why) => Err(NetconfError::Protocol(format!(
                "session unusable after an earlier error: {why}"
            ))),
            None => Ok(()),
        }
    }

    /// Send one operation and wait for its reply (its `rpc-error`s not yet judged), bounded by
    /// `Timeouts.operation`. An operation sent ahead is not sent again: its reply is read.
    async fn send(&mut self, op: &Operation) -> Result<RpcReply> {
        let name = op.name();
        let limit = self.timeouts.operation;
        let xml = op.to_xml()?;
        let sent = match self.ahead.front() {
            Some((x, _)) if *x == xml => self.ahead.pop_front().map(|(_, id)| id),
            _ => {
                self.ahead.clear();
                None
            }
        };
        let id = sent.clone().unwrap_or_else(|| self.next_id.to_string());
        let fut = async {
            self.usable()?;
            if sent.is_none() {
                self.next_id += 1;
                // Abandoned until answered: a caller that drops this future (a node timeout or an
                // abort stops a run at any await) leaves the id here, so its late reply is skipped by
                // the next request on the session instead of being taken for that request's answer.
                self.abandoned.insert(id.clone());
                if let Err(e) = self.framed.send(Bytes::from(rpc_envelope(&id, &xml))).await {
                    return Err(self.poison(e));
                }
            }
            let r = self.receive(&id).await;
            self.abandoned.remove(&id);
            r
        };
        match tokio::time::timeout(limit, fut).await {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(e)) => Err(e.context(format!("{name} on {}", self.device))),
            Err(_) => {
                self.abandoned.insert(id);
                Err(NetconfError::Timeout {
                    operation: name,
                    device: self.device.clone(),
                    limit,
                })
            }
        }
    }

    fn poison(&mut self, e: NetconfError) -> NetconfError {
        self.broken = Some(e.to_string());
        e
    }

    /// Read until the reply to `id`, skipping notifications and replies to abandoned requests.
    async fn receive(&mut self, id: &str) -> Result<RpcReply> {
        loop {
            let raw = match read_message(&mut self.framed).await {
                Ok(raw) => raw,
                Err(e) => return Err(self.poison(e)),
            };
            // A reply we cannot parse cannot be matched to its request either: the session is done.
            let root = match parse_document(&raw) {
                Ok(root) => root,
                Err(e) => return Err(self.poison(e)),
            };
            if root.name == "notification" {
                tracing::debug!(device = %self.device, "skipping notification");
                continue;
            }
            let reply = match RpcReply::from_root(raw, root) {
                Ok(r) => r,
                Err(e) => return Err(self.poison(e)),
            };
            match reply.message_id.as_deref() {
                Some(got) if got == id => return Ok(reply),
                Some(got) if self.abandoned.remove(got) => {
                    tracing::debug!(device = %self.device, message_id = got, "dropping a reply nobody waits for");
                }
                Some(got) => {
                    let e = NetconfError::MessageIdMismatch {
                        expected: id.to_string(),
                        got: got.to_string(),
                    };
                    return Err(self.poison(e));
                }
                // RFC 6241 §4.1: a server that cannot read the message-id answers without one
                // (malformed-message); with requests sent ahead it cannot be matched to one.
                None if self.ahead.is_empty() => return Ok(reply),
                None => {
                    return Err(self.poison(NetconfError::Protocol(
                        "a reply without a message-id while several requests were outstanding"
                            .into(),
                    )));
                }
            }
        }
    }

    /// `<get>` (state and configuration).
    pub async fn get(&mut self, filter: Option<Filter>) -> Result<RpcReply> {
        self.rpc(&Operation::Get { filter }).await
    }

    /// `<get-config>`.
    pub async fn get_config(
        &mut self,
        source: Datastore,
        filter: Option<Filter>,
    ) -> Result<RpcReply> {
        self.rpc(&Operation::GetConfig { source, filter }).await
    }

    /// `<get-config>` returning the raw XML inside `<data>` (an error if the reply has no `<data>`).
    pub async fn get_config_xml(
        &mut self,
        source: Datastore,
        filter: Option<Filter>,
    ) -> Result<String> {
        let reply = self.get_config(source, filter).await?;
        match reply.data_xml() {
            Some(x) => Ok(x.to_string()),
            None => Err(
                NetconfError::Protocol("get-config reply has no <data>".into())
                    .context(format!("get-config on {}", self.device)),
            ),
        }
    }

    /// The running configuration (optionally filtered) as XML: read it back after every change rather
    /// than trusting an `<ok/>` (netconfd answers ok to a commit after validate and loses the change).
    pub async fn running_config(&mut self, filter: Option<Filter>) -> Result<String> {
        self.get_config_xml(Datastore::Running, filter).await
    }

    /// `<edit-config>`.
    pub async fn edit_config(&mut self, edit: EditConfig) -> Result<RpcReply> {
        self.rpc(&Operation::EditConfig(edit)).await
    }

    pub async fn lock(&mut self, target: Datastore) -> Result<RpcReply> {
        self.rpc(&Operation::Lock(target)).await
    }

    pub async fn unlock(&mut self, target: Datastore) -> Result<RpcReply> {
        self.rpc(&Operation::Unlock(target)).await
    }

    pub async fn discard_changes(&mut self) -> Result<RpcReply> {
        self.rpc(&Operation::DiscardChanges).await
    }

    pub async fn validate(&mut self, source: Datastore) -> Result<RpcReply> {
        self.rpc(&Operation::Validate(source)).await
    }

    pub async fn commit(&mut self) -> Result<RpcReply> {
        self.rpc(&Operation::Commit).await
    }

    /// Confirmed commit (RFC 6241 §8.4): reverted by the server unless confirmed within `timeout_secs`
    /// (server default 600 s when `None`). With `persist`, a later session can confirm or cancel it.
    pub async fn confirmed_commit(
        &mut self,
        timeout_secs: Option<u32>,
        persist: Option<&str>,
    ) -> Result<RpcReply> {
        self.rpc(&Operation::ConfirmedCommit {
            timeout_secs,
            persist: persist.map(str::to_string),
        })
        .await
    }

    /// Confirm a pending confirmed commit (`persist_id` when it was given a `persist` token).
    pub async fn confirming_commit(&mut self, persist_id: Option<&str>) -> Result<RpcReply> {
        self.rpc(&Operation::ConfirmingCommit {
            persist_id: persist_id.map(str::to_string),
        })
        .await
    }

    /// `<cancel-commit>` (RFC 6241 §8.4.4.1): revert a pending confirmed commit now.
    pub async fn cancel_commit(&mut self, persist_id: Option<&str>) -> Result<RpcReply> {
        self.rpc(&Operation::CancelCommit {
            persist_id: persist_id.map(str::to_string),
        })
        .await
    }

    pub async fn kill_session(&mut self, session_id: u32) -> Result<RpcReply> {
        self.rpc(&Operation::KillSession(session_id)).await
    }

    /// A vendor RPC: `xml` is the content of `<rpc>` (e.g. `<get-software-information/>`).
    pub async fn rpc_raw(&mut self, xml: &str) -> Result<RpcReply> {
        self.rpc(&Operation::Raw(xml.to_string())).await
    }

    /// `<close-session>`, then shut the stream down.
    pub async fn close_session(mut self) -> Result<()> {
        let r = self.rpc(&Operation::CloseSession).await;
        let _ = self.framed.get_mut().shutdown().await;
        r.map(|_| ())
    }

    /// Give back the underlying stream (e.g. to close the SSH channel).
    pub fn into_inner(self) -> S {
        self.framed.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netconf::error::{ErrorTag, Severity};
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, DuplexStream};

    const SERVER_HELLO_11: &str = r#"<?xml version="1.0" encoding="UTF-8"?><hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities><capability>urn:ietf:params:netconf:base:1.0</capability><capability>urn:ietf:params:netconf:base:1.1</capability><capability>urn:ietf:params:netconf:capability:candidate:1.0</capability></capabilities><session-id>42</session-id></hello>"#;
    const SERVER_HELLO_10: &str = r#"<hello><capabilities><capability>urn:ietf:params:netconf:base:1.0</capability></capabilities><session-id>3</session-id></hello>"#;

    /// A scripted server on the other end of a duplex pipe: reads whole frames, answers with canned
    /// replies in which `{id}` is replaced by the request's message-id.
    struct Server {
        io: Framed<DuplexStream, NetconfCodec>,
    }

    impl Server {
        async fn recv(&mut self) -> String {
            String::from_utf8(self.io.next().await.unwrap().unwrap().to_vec()).unwrap()
        }
        async fn send(&mut self, s: &str) {
            self.io.send(Bytes::from(s.to_string())).await.unwrap();
        }
        fn chunked(&mut self) {
            self.io.codec_mut().set_framing(Framing::Chunked);
        }
        async fn reply(&mut self, body: &str) -> String {
            let req = self.recv().await;
            let id = message_id(&req);
            self.send(&body.replace("{id}", &id)).await;
            req
        }
    }

    fn message_id(req: &str) -> String {
        let root = parse_document(req).unwrap();
        root.attr("message-id").unwrap().to_string()
    }

    fn opts() -> ClientOptions {
        ClientOptions {
            device: "sw1".into(),
            timeouts: Timeouts {
                operation: Duration::from_secs(5),
                ..Timeouts::default()
            },
            ..ClientOptions::default()
        }
    }

    async fn pair(
        server_hello: &'static str,
        opts: ClientOptions,
    ) -> (NetconfClient<DuplexStream>, Server) {
        let (a, b) = tokio::io::duplex(1 << 16);
        let mut server = Server {
            io: Framed::new(b, NetconfCodec::default()),
        };
        let srv = tokio::spawn(async move {
            server.send(server_hello).await;
            let hello = server.recv().await;
            assert!(hello.contains("<hello"));
            if hello.contains("base:1.1") && server_hello.contains("base:1.1") {
                server.chunked();
            }
            server
        });
        let client = NetconfClient::handshake(a, opts).await.unwrap();
        (client, srv.await.unwrap())
    }

    #[tokio::test]
    async fn negotiates_chunked_and_runs_rpcs() {
        let (mut c, mut s) = pair(SERVER_HELLO_11, opts()).await;
        assert_eq!(c.framing(), Framing::Chunked);
        assert_eq!(c.session_id(), Some(42));
        assert!(c.has_capability(crate::netconf::ops::CAP_CANDIDATE));
        let srv = tokio::spawn(async move {
            let req = s.reply(r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="{id}"><data><top xmlns="urn:t"><v>1</v></top></data></rpc-reply>"#).await;
            assert!(
                req.contains("<get-config><source><running/></source></get-config>"),
                "{req}"
            );
            let req = s.reply(r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="{id}"><ok/></rpc-reply>"#).await;
            assert!(req.contains("<lock><target><candidate/></target></lock>"));
            s
        });
        let xml = c.running_config(None).await.unwrap();
        assert_eq!(xml, r#"<top xmlns="urn:t"><v>1</v></top>"#);
        assert!(c.lock(Datastore::Candidate).await.unwrap().ok);
        srv.await.unwrap();
    }

    #[test]
    fn capability_spellings() {
        assert!(cap_matches(
            "urn:ietf:params:xml:ns:netconf:base:1.0",
            CAP_BASE_10
        ));
        assert!(cap_matches(
            " urn:ietf:params:netconf:base:1.1 ",
            CAP_BASE_11
        ));
        assert!(!cap_matches(
            "urn:ietf:params:netconf:base:1.0",
            CAP_BASE_11
        ));
        assert!(cap_matches(
            "urn:ietf:params:xml:ns:netconf:capability:candidate:1.0",
            crate::netconf::ops::CAP_CANDIDATE
        ));
        assert!(cap_matches(
            "urn:ietf:params:netconf:capability:url:1.0?scheme=file",
            "urn:ietf:params:netconf:capability:url:1.0"
        ));
        assert!(!cap_matches("urn:vendor:base:1.0", CAP_BASE_10));
    }

    #[tokio::test]
    async fn base10_server_keeps_eom_framing() {
        let (mut c, mut s) = pair(SERVER_HELLO_10, opts()).await;
        assert_eq!(c.framing(), Framing::EndOfMessage);
        let srv = tokio::spawn(async move {
            s.reply(r#"<rpc-reply xmlns:junos="http://xml.juniper.net/junos/12.1X46/junos" message-id="{id}"><software-information><host-name>sw1</host-name></software-information></rpc-reply>"#).await;
        });
        let r = c.rpc_raw("<get-software-information/>").await.unwrap();
        assert_eq!(
            r.root
                .path(&["software-information", "host-name"])
                .unwrap()
                .text(),
            "sw1"
        );
        srv.await.unwrap();
    }

    #[tokio::test]
    async fn client_without_base11_stays_eom() {
        let mut o = opts();
        o.base11 = false;
        let (c, _s) = pair(SERVER_HELLO_11, o).await;
        assert_eq!(c.framing(), Framing::EndOfMessage);
    }

    #[tokio::test]
    async fn rpc_error_is_typed_and_has_context() {
        let (mut c, mut s) = pair(SERVER_HELLO_11, opts()).await;
        let srv = tokio::spawn(async move {
            s.reply(r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="{id}"><rpc-error><error-type>protocol</error-type><error-tag>lock-denied</error-tag><error-severity>error</error-severity><error-info><session-id>9</session-id></error-info></rpc-error></rpc-reply>"#).await;
        });
        let err = c.lock(Datastore::Candidate).await.unwrap_err();
        assert!(err.has_tag(&ErrorTag::LockDenied));
        assert_eq!(err.rpc_errors()[0].info_value("session-id"), Some("9"));
        assert!(
            err.to_string()
                .starts_with("in lock on sw1: device returned error lock-denied"),
            "{err}"
        );
        srv.await.unwrap();
    }

    #[tokio::test]
    async fn warnings_come_back_with_success() {
        let (mut c, mut s) = pair(SERVER_HELLO_11, opts()).await;
        let srv = tokio::spawn(async move {
            s.reply(r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="{id}"><rpc-error><error-severity>warning</error-severity><error-message>uncommitted changes</error-message></rpc-error><ok/></rpc-reply>"#).await;
        });
        let r = c.commit().await.unwrap();
        assert_eq!(r.warnings.len(), 1);
        assert_eq!(r.warnings[0].severity, Severity::Warning);
        srv.await.unwrap();
    }

    /// py-junos-eznc's `sw_info_dual_other_re_off` reply (tests/unit/facts/rpc-reply, Apache-2.0),
    /// trimmed: an rpc-error for the RE that is off beside the other RE's answer.
    const OTHER_RE_OFF: &str = r#"<rpc-reply message-id="{id}"><rpc-error><error-type>protocol</error-type><error-tag>operation-failed</error-tag><error-severity>error</error-severity><error-message>
Could not connect to re0 : No route to host
</error-message></rpc-error><multi-routing-engine-results><multi-routing-engine-item><re-name>re1</re-name><software-information><host-name>R1_re01</host-name></software-information></multi-routing-engine-item></multi-routing-engine-results></rpc-reply>"#;

    #[tokio::test]
    async fn a_read_answered_by_one_member_gives_its_data_and_the_others_errors() {
        let (mut c, mut s) = pair(SERVER_HELLO_11, opts()).await;
        let srv = tokio::spawn(async move {
            s.reply(OTHER_RE_OFF).await;
            s.reply(r#"<rpc-reply message-id="{id}"><rpc-error><error-severity>error</error-severity><error-message>Could not connect to re0</error-message></rpc-error><multi-routing-engine-results><multi-routing-engine-item><re-name>re1</re-name></multi-routing-engine-item></multi-routing-engine-results></rpc-reply>"#).await;
            s.reply(OTHER_RE_OFF).await;
        });
        let r = c.rpc_read("<get-software-information/>").await.unwrap();
        assert!(r.errors.is_empty());
        assert_eq!(r.member_errors.len(), 1);
        assert!(
            r.member_errors[0]
                .message
                .as_deref()
                .is_some_and(|m| m.contains("Could not connect to re0")),
            "{:?}",
            r.member_errors
        );
        let host = r.root.path(&[
            "multi-routing-engine-results",
            "multi-routing-engine-item",
            "software-information",
            "host-name",
        ]);
        assert_eq!(host.map(|h| h.text()), Some("R1_re01".into()));
        // No member answered with data: the errors are the RPC's.
        let err = c.rpc_read("<get-software-information/>").await.unwrap_err();
        assert_eq!(err.rpc_errors().len(), 1, "{err}");
        // The same reply to a plain RPC (configuration RPCs use these) stays a failure.
        let err = c.rpc_raw("<get-software-information/>").await.unwrap_err();
        assert_eq!(err.rpc_errors().len(), 1, "{err}");
        srv.await.unwrap();
    }

    #[tokio::test]
    async fn message_id_mismatch_poisons_session() {
        let (mut c, mut s) = pair(SERVER_HELLO_11, opts()).await;
        let srv = tokio::spawn(async move {
            let _ = s.recv().await;
            s.send(r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="999"><ok/></rpc-reply>"#).await;
            s
        });
        let err = c.commit().await.unwrap_err();
        assert!(
            matches!(err.root(), NetconfError::MessageIdMismatch { .. }),
            "{err}"
        );
        let _s = srv.await.unwrap();
        let err = c.commit().await.unwrap_err();
        assert!(err.to_string().contains("unusable"), "{err}");
    }

    const OK: &str = r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="{id}"><ok/></rpc-reply>"#;

    /// Requests sent ahead all reach the server before it answers any (one round trip), and each is
    /// answered to the call that asks for it, in order, without being sent twice.
    #[tokio::test]
    async fn requests_sent_ahead_are_answered_to_the_calls_that_ask_for_them() {
        let (mut c, mut s) = pair(SERVER_HELLO_11, opts()).await;
        c.send_ahead(&[
            Operation::Lock(Datastore::Candidate),
            Operation::DiscardChanges,
        ])
        .await
        .unwrap();
        // The server reads both before answering: a client waiting for the first reply would hang.
        let (lock, discard) = (s.recv().await, s.recv().await);
        assert!(lock.contains("<lock>") && discard.contains("<discard-changes/>"));
        let srv = tokio::spawn(async move {
            s.send(&OK.replace("{id}", &message_id(&lock))).await;
            s.send(&OK.replace("{id}", &message_id(&discard))).await;
            let next = s.reply(OK).await;
            assert!(next.contains("<commit/>"), "{next}");
        });
        assert!(c.lock(Datastore::Candidate).await.unwrap().ok);
        // Already sent ahead and next in line: not sent twice.
        c.send_ahead(&[Operation::DiscardChanges]).await.unwrap();
        assert!(c.discard_changes().await.unwrap().ok);
        assert!(c.commit().await.unwrap().ok);
        srv.await.unwrap();
    }

    /// Asking for something else than what was sent ahead drops it: its reply is skipped, never taken
    /// for the answer to the request actually made.
    #[tokio::test]
    async fn a_request_sent_ahead_and_not_asked_for_is_skipped() {
        let (mut c, mut s) = pair(SERVER_HELLO_11, opts()).await;
        c.send_ahead(&[
            Operation::Lock(Datastore::Candidate),
            Operation::DiscardChanges,
        ])
        .await
        .unwrap();
        let srv = tokio::spawn(async move {
            let (lock, discard) = (s.recv().await, s.recv().await);
            s.send(&OK.replace("{id}", &message_id(&lock))).await;
            s.send(&format!(r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="{}"><rpc-error><error-type>protocol</error-type><error-tag>in-use</error-tag><error-severity>error</error-severity></rpc-error></rpc-reply>"#, message_id(&discard))).await;
            let next = s.reply(OK).await;
            assert!(next.contains("<unlock>"), "{next}");
        });
        assert!(c.lock(Datastore::Candidate).await.unwrap().ok);
        // Not the discard sent ahead: an unlock, answered with its own reply.
        assert!(c.unlock(Datastore::Candidate).await.unwrap().ok);
        srv.await.unwrap();
    }

    #[tokio::test]
    async fn notifications_are_skipped() {
        let (mut c, mut s) = pair(SERVER_HELLO_11, opts()).await;
        let srv = tokio::spawn(async move {
            let req = s.recv().await;
            s.send(r#"<notification xmlns="urn:ietf:params:xml:ns:netconf:notification:1.0"><eventTime>2020-01-01T00:00:00Z</eventTime></notification>"#).await;
            s.send(&format!(r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="{}"><ok/></rpc-reply>"#, message_id(&req))).await;
        });
        assert!(c.discard_changes().await.unwrap().ok);
        srv.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn timeout_names_operation_device_limit_and_late_reply_is_dropped() {
        let mut o = opts();
        o.timeouts.operation = Duration::from_secs(2);
        let (mut c, mut s) = pair(SERVER_HELLO_11, o).await;
        let err = c.get_config(Datastore::Running, None).await.unwrap_err();
        assert!(err.is_timeout());
        assert_eq!(err.to_string(), "get-config on sw1 timed out after 2s");
        let req1 = s.recv().await;
        let srv = tokio::spawn(async move {
            // Late reply to the abandoned request, then the real one.
            s.send(&format!(r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="{}"><data/></rpc-reply>"#, message_id(&req1))).await;
            s.reply(r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="{id}"><ok/></rpc-reply>"#).await;
        });
        assert!(c.commit().await.unwrap().ok);
        srv.await.unwrap();
    }

    #[tokio::test]
    async fn a_dropped_request_s_late_reply_is_skipped() {
        let (mut c, mut s) = pair(SERVER_HELLO_11, opts()).await;
        // The caller gives up on the request (its future dropped, as a node timeout does) after
        // it was sent, before the reply.
        tokio::select! {
            _ = c.get_config(Datastore::Running, None) => panic!("no reply was sent"),
            _ = tokio::time::sleep(Duration::from_millis(50)) => {}
        }
        let req1 = s.recv().await;
        let srv = tokio::spawn(async move {
            s.send(&format!(r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="{}"><data/></rpc-reply>"#, message_id(&req1))).await;
            s.reply(r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="{id}"><ok/></rpc-reply>"#).await;
        });
        assert!(c.commit().await.unwrap().ok);
        srv.await.unwrap();
    }

    #[tokio::test]
    async fn hello_is_its_own_write_and_closed_peer_is_an_error() {
        let (a, mut b) = tokio::io::duplex(1 << 16);
        let client = tokio::spawn(NetconfClient::handshake(a, opts()));
        let mut buf = vec![0u8; 4096];
        let n = b.read(&mut buf).await.unwrap();
        assert!(buf[..n].ends_with(b"</hello>]]>]]>"));
        drop(b);
        let err = client.await.unwrap().unwrap_err();
        assert!(matches!(err.root(), NetconfError::Closed), "{err}");
    }

    #[tokio::test]
    async fn hostile_hello_rejected() {
        let (a, b) = tokio::io::duplex(1 << 16);
        let mut server = Server {
            io: Framed::new(b, NetconfCodec::default()),
        };
        tokio::spawn(async move {
            server
                .send(r#"<!DOCTYPE hello [<!ENTITY a "b">]><hello/>"#)
                .await;
            let _ = server.recv().await;
        });
        let err = NetconfClient::handshake(a, opts()).await.unwrap_err();
        assert!(matches!(err.root(), NetconfError::DtdRejected), "{err}");
    }
}
