//! Recorded sessions the real drivers run on (feature `replay`): what one device answered to each
//! request, served in process so that `facts()`, `observe()` and, where a recording holds the
//! device's answers after a change, `stage`/`verify` run exactly as in production, parsers and all.
//!
//! ```text
//!   Recording (request -> answers, in order)
//!     ├─ CLI (IOS, NX-OS)   CliConn answers `show ...` from it            key: the command
//!     ├─ eAPI (EOS)         ReplayEapi: EapiTransport, one runCmds reply   key: each command
//!     ├─ NETCONF (Junos)    serve_netconf: a NETCONF server on a duplex    key: the rpc's element names
//!     └─ REST (F5)          ReplayRest: RestTransport                      key: the path after /mgmt/(tm/)
//! ```
//!
//! The eAPI and REST adapters implement the drivers' transport traits, so they live in
//! `netgw-drivers` (`drivers/src/replay.rs`); the recording and the NETCONF server are here.
//!
//! Keys are compared in one spelling ([`key`]): lower case, every run of other characters than letters
//! and digits one `_`. So NAPALM's mocked-data file names (`show_inventory___json`,
//! `show_lldp_neighbors__detail`) and ntc-templates' (`cisco_ios_show_version`, stripped by the caller)
//! name the commands they answer. A request not in the recording gets the device's own refusal (a CLI
//! failure string, an eAPI error 1002, an `rpc-error`, a 404), as an unknown command would.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

/// `show inventory | json` and `show_inventory___json` -> `show_inventory_json`.
pub fn key(request: &str) -> String {
    let mut out = String::with_capacity(request.len());
    for c in request.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
}

#[derive(Debug, Default)]
struct Inner {
    answers: BTreeMap<String, VecDeque<String>>,
    asked: Vec<String>,
    sent: Vec<String>,
}

/// One device's recorded answers. Cloning shares it: the test keeps a handle to see what the driver
/// asked and sent.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    inner: Arc<Mutex<Inner>>,
}

impl Recording {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A test that panicked while holding the lock has failed already; its answers are still usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Record one more answer to `request`. Several answers to one request are given in order (the
    /// device before and after a change); the last is repeated.
    pub fn add(&self, request: &str, answer: impl Into<String>) {
        self.lock()
            .answers
            .entry(key(request))
            .or_default()
            .push_back(answer.into());
    }

    fn pop(inner: &mut Inner, k: &str) -> Option<String> {
        let q = inner.answers.get_mut(k)?;
        if q.len() > 1 {
            q.pop_front()
        } else {
            q.front().cloned()
        }
    }

    /// The answer to exactly `request`.
    pub fn answer(&self, request: &str) -> Option<String> {
        let mut inner = self.lock();
        inner.asked.push(request.to_owned());
        Self::pop(&mut inner, &key(request))
    }

    /// The answer to `request` or, failing that, to its longest recorded prefix of whole words (an
    /// rpc recorded without arguments answers the same rpc with them).
    pub fn answer_prefix(&self, request: &str) -> Option<String> {
        let mut inner = self.lock();
        inner.asked.push(request.to_owned());
        let k = key(request);
        let found = inner
            .answers
            .keys()
            .filter(|r| k == **r || k.starts_with(&format!("{r}_")))
            .max_by_key(|r| r.len())
            .cloned()?;
        Self::pop(&mut inner, &found)
    }

    /// Note configuration sent to the device (lines, XML, REST calls).
    pub fn note_sent(&self, what: impl Into<String>) {
        self.lock().sent.push(what.into());
    }

    /// Every request asked, in order.
    pub fn asked(&self) -> Vec<String> {
        self.lock().asked.clone()
    }

    /// Everything sent that changes the device, in order.
    pub fn sent(&self) -> Vec<String> {
        self.lock().sent.clone()
    }
}

mod netconf {
    use super::Recording;
    use crate::netconf::reply::parse_document;
    use crate::netconf::{Framing, NetconfCodec, XmlElement};
    use bytes::Bytes;
    use futures::{SinkExt, StreamExt};
    use tokio::io::DuplexStream;
    use tokio_util::codec::Framed;

    const HELLO: &str = r#"<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities><capability>urn:ietf:params:netconf:base:1.0</capability><capability>urn:ietf:params:netconf:base:1.1</capability><capability>urn:ietf:params:netconf:capability:candidate:1.0</capability><capability>urn:ietf:params:netconf:capability:confirmed-commit:1.1</capability><capability>http://xml.juniper.net/netconf/junos/1.0</capability></capabilities><session-id>1</session-id></hello>"#;
    const NS: &str = "urn:ietf:params:xml:ns:netconf:base:1.0";

    /// The rpc's element names in document order (`get-interface-information terse`), its key.
    fn rpc_key(rpc: &XmlElement) -> String {
        fn walk(e: &XmlElement, out: &mut Vec<String>) {
            out.push(e.name.clone());
            for c in e.elements() {
                walk(c, out);
            }
        }
        let mut out = Vec::new();
        for c in rpc.elements() {
            walk(c, &mut out);
        }
        out.join(" ")
    }

    /// A recorded reply as an `<rpc-reply>` with `id`: a recorded `<rpc-reply>` keeps its own
    /// namespace declarations (its children use their prefixes); a bare element is wrapped.
    fn reply(recorded: &str, id: &str) -> String {
        let body = recorded.trim();
        let body = match body.strip_prefix("<?xml") {
            Some(rest) => rest.split_once("?>").map_or(rest, |(_, b)| b).trim(),
            None => body,
        };
        match body.strip_prefix("<rpc-reply") {
            Some(rest) => format!("<rpc-reply message-id=\"{id}\"{rest}"),
            None => format!("<rpc-reply xmlns=\"{NS}\" message-id=\"{id}\">{body}</rpc-reply>"),
        }
    }

    fn refusal(id: &str, what: &str) -> String {
        format!(
            "<rpc-reply xmlns=\"{NS}\" message-id=\"{id}\"><rpc-error><error-type>protocol</error-type>\
             <error-tag>operation-not-supported</error-tag><error-severity>error</error-severity>\
             <error-message>{what}: not in the recording</error-message></rpc-error></rpc-reply>"
        )
    }

    /// What the device says to one rpc: reads from the recording, changes noted and acknowledged.
    fn answer(rec: &Recording, rpc: &XmlElement, id: &str) -> String {
        let k = rpc_key(rpc);
        let first = k.split(' ').next().unwrap_or_default();
        let reads = first.starts_with("get") || first == "command";
        if reads {
            return match rec.answer_prefix(&k) {
                Some(r) => reply(&r, id),
                None => refusal(id, first),
            };
        }
        rec.note_sent(k);
        format!("<rpc-reply xmlns=\"{NS}\" message-id=\"{id}\"><ok/></rpc-reply>")
    }

    /// Serve `rec` as a NETCONF device on `io` until the client closes the session or the pipe.
    pub async fn serve_netconf(io: DuplexStream, rec: Recording) {
        let mut io = Framed::new(io, NetconfCodec::default());
        if io.send(Bytes::from_static(HELLO.as_bytes())).await.is_err() {
            return;
        }
        let mut hello_seen = false;
        while let Some(Ok(msg)) = io.next().await {
            let Ok(root) = parse_document(&String::from_utf8_lossy(&msg)) else {
                return;
            };
            if !hello_seen {
                hello_seen = true;
                if root.name == "hello" {
                    if String::from_utf8_lossy(&msg).contains("base:1.1") {
                        io.codec_mut().set_framing(Framing::Chunked);
                    }
                    continue;
                }
            }
            let id = root.attr("message-id").unwrap_or_default().to_owned();
            let closing = root.elements().any(|e| e.name == "close-session");
            let out = if closing {
                format!("<rpc-reply xmlns=\"{NS}\" message-id=\"{id}\"><ok/></rpc-reply>")
            } else {
                answer(&rec, &root, &id)
            };
            if io.send(Bytes::from(out)).await.is_err() || closing {
                return;
            }
        }
    }
}

pub use netconf::serve_netconf;

/// A NETCONF session with a recorded device served in process.
pub async fn netconf_session(
    device: &str,
    rec: Recording,
) -> Result<crate::netconf::NetconfSsh, crate::netconf::NetconfError> {
    let (client_end, device_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(serve_netconf(device_end, rec));
    let stream = tokio_util::either::Either::Right(client_end);
    crate::netconf::NetconfSsh::over(stream, device).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_join_file_names_and_commands() {
        assert_eq!(key("show inventory | json"), key("show_inventory___json"));
        assert_eq!(
            key("show lldp neighbors  detail"),
            "show_lldp_neighbors_detail"
        );
        assert_eq!(key("show running-config"), "show_running_config");
        assert_ne!(key("show interfaces"), key("show interfaces switchport"));
    }

    #[test]
    fn answers_in_order_the_last_repeated_and_prefixes_by_whole_words() {
        let r = Recording::new();
        r.add("show vlan brief", "before");
        r.add("show vlan brief", "after");
        assert_eq!(r.answer("show vlan brief").as_deref(), Some("before"));
        assert_eq!(r.answer("show vlan brief").as_deref(), Some("after"));
        assert_eq!(r.answer("show vlan brief").as_deref(), Some("after"));
        assert_eq!(r.answer("show vlan"), None);
        r.add("get-interface-information", "x");
        assert_eq!(
            r.answer_prefix("get-interface-information terse")
                .as_deref(),
            Some("x")
        );
        assert_eq!(r.answer_prefix("get-interface"), None);
        assert_eq!(r.asked().len(), 6);
    }
}
