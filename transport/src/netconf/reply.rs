//! Parsing of NETCONF messages from the peer: `hello` and `rpc-reply` (RFC 6241 §4.2-4.4, §8.1).
//!
//! Messages are parsed into a small owned tree ([`XmlElement`]) with resolved namespaces, so prefixed
//! replies (`<nc:rpc-reply xmlns:nc=...>`), default-namespace replies and Junos replies without any
//! NETCONF namespace all parse the same way; elements are matched on their local name, and the NETCONF
//! elements (`ok`, `data`, `rpc-error`) must be in the base namespace or in none.
//!
//! Every element keeps the byte range of its content in the source, so callers get `<data>` both as a
//! tree and as the raw inner XML string. Note that the raw string may use prefixes declared on an
//! ancestor (e.g. on `rpc-reply`); the tree carries the resolved namespaces.
//!
//! The tree is built for a few lookups per message and dropped, and a Junos facts reply holds thousands
//! of elements, so it is kept lean: a namespace URI is one shared string per message (every element of
//! a reply repeats the same few), and whitespace-only text beside child elements (the indentation of
//! pretty-printed replies) is not kept: it is formatting, and no caller reads text of an element that
//! has child elements except to ignore it. A leaf's text, whitespace included, is kept as sent.
//!
//! Hostile input: DOCTYPE (and so any entity declaration) is rejected, undeclared entities are rejected,
//! nesting depth is bounded, and nothing here panics on peer data.

use std::ops::Range;
use std::sync::Arc;

use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;

use super::error::{ErrorInfo, ErrorTag, ErrorType, NetconfError, Result, RpcError, Severity};

/// The NETCONF base namespace (RFC 6241 §3.1).
pub const BASE_NS: &str = "urn:ietf:params:xml:ns:netconf:base:1.0";

/// Maximum element nesting accepted from a peer (real replies nest < 30 deep).
pub const MAX_DEPTH: usize = 256;

/// An XML attribute as written (qualified name) with its unescaped value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlAttribute {
    pub name: String,
    pub value: String,
}

/// A child node: element or (merged, unescaped) text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum XmlNode {
    Element(XmlElement),
    Text(String),
}

/// An element of a parsed message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlElement {
    /// Local name (`rpc-reply` for `<nc:rpc-reply>`).
    pub name: String,
    /// Prefix as written, if any.
    pub prefix: Option<String>,
    /// Resolved namespace URI, if the element is in one (shared by the elements of a message).
    pub namespace: Option<Arc<str>>,
    pub attributes: Vec<XmlAttribute>,
    pub children: Vec<XmlNode>,
    /// Byte range of the element's content (between start and end tag) in the parsed source.
    pub content_span: Range<usize>,
}

impl XmlElement {
    /// Direct child elements.
    pub fn elements(&self) -> impl Iterator<Item = &XmlElement> {
        self.children.iter().filter_map(|c| match c {
            XmlNode::Element(e) => Some(e),
            XmlNode::Text(_) => None,
        })
    }

    /// First direct child element with this local name.
    pub fn child(&self, name: &str) -> Option<&XmlElement> {
        self.elements().find(|e| e.name == name)
    }

    /// All direct child elements with this local name.
    pub fn children_named<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = &'a XmlElement> + 'a {
        self.elements().filter(move |e| e.name == name)
    }

    /// Follow a path of local names through first matching children: `el.path(&["interfaces", "interface"])`.
    pub fn path(&self, names: &[&str]) -> Option<&XmlElement> {
        names.iter().try_fold(self, |el, n| el.child(n))
    }

    /// Concatenated text of the direct text children (unescaped, not trimmed).
    pub fn text(&self) -> String {
        self.children
            .iter()
            .filter_map(|c| match c {
                XmlNode::Text(t) => Some(t.as_str()),
                XmlNode::Element(_) => None,
            })
            .collect()
    }

    /// Text of the first child named `name`, trimmed.
    pub fn child_text(&self, name: &str) -> Option<String> {
        self.child(name).map(|c| c.text().trim().to_string())
    }

    /// Attribute value by qualified name (`junos:style`) or, failing that, by local name (`style`).
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|a| a.name == name)
            .or_else(|| {
                self.attributes
                    .iter()
                    .find(|a| a.name.rsplit(':').next() == Some(name))
            })
            .map(|a| a.value.as_str())
    }

    /// In the NETCONF base namespace or in no namespace (Junos omits it on some replies).
    pub fn is_netconf(&self, name: &str) -> bool {
        self.name == name && self.namespace.as_deref().is_none_or(|ns| ns == BASE_NS)
    }

    /// The raw content of this element in `source` (the string it was parsed from).
    pub fn inner_xml<'s>(&self, source: &'s str) -> &'s str {
        source.get(self.content_span.clone()).unwrap_or("")
    }
}

fn xml_err(e: impl std::fmt::Display) -> NetconfError {
    NetconfError::Xml(e.to_string())
}

fn utf8(b: &[u8]) -> Result<String> {
    std::str::from_utf8(b).map(str::to_string).map_err(xml_err)
}

/// The namespace URIs of one message, each allocated once.
#[derive(Default)]
struct Namespaces(Vec<Arc<str>>);

impl Namespaces {
    fn get(&mut self, uri: &[u8]) -> Result<Arc<str>> {
        let uri = std::str::from_utf8(uri).map_err(xml_err)?;
        if let Some(known) = self.0.iter().find(|n| &***n == uri) {
            return Ok(known.clone());
        }
        let new: Arc<str> = Arc::from(uri);
        self.0.push(new.clone());
        Ok(new)
    }
}

fn new_element(
    namespaces: &mut Namespaces,
    ns: ResolveResult<'_>,
    e: &BytesStart<'_>,
) -> Result<XmlElement> {
    let namespace = match ns {
        ResolveResult::Bound(n) => Some(namespaces.get(n.as_ref())?),
        // An undeclared prefix: keep the element, without a namespace.
        ResolveResult::Unbound | ResolveResult::Unknown(_) => None,
    };
    let qname = e.name();
    let name = utf8(qname.local_name().as_ref())?;
    let prefix = match qname.prefix() {
        Some(p) => Some(utf8(p.as_ref())?),
        None => None,
    };
    let mut attributes = Vec::new();
    for a in e.attributes() {
        let a = a.map_err(xml_err)?;
        // unescape_value resolves only the predefined and character references: an undeclared entity
        // is an error.
        let value = a.unescape_value().map_err(xml_err)?.into_owned();
        attributes.push(XmlAttribute {
            name: utf8(a.key.as_ref())?,
            value,
        });
    }
    Ok(XmlElement {
        name,
        prefix,
        namespace,
        attributes,
        children: Vec::new(),
        content_span: 0..0,
    })
}

fn is_blank(t: &str) -> bool {
    t.bytes().all(|b| b.is_ascii_whitespace())
}

/// A child element starts: whitespace-only text just before it was indentation.
fn drop_indentation(stack: &mut [XmlElement]) {
    if let Some(parent) = stack.last_mut()
        && matches!(parent.children.last(), Some(XmlNode::Text(t)) if is_blank(t))
    {
        parent.children.pop();
    }
}

fn push_text(stack: &mut [XmlElement], text: &str) -> Result<()> {
    match stack.last_mut() {
        Some(parent) => {
            match parent.children.last_mut() {
                Some(XmlNode::Text(t)) => t.push_str(text),
                // Whitespace after a child element is indentation (see the module comment).
                Some(XmlNode::Element(_)) if is_blank(text) => {}
                _ => parent.children.push(XmlNode::Text(text.to_string())),
            }
            Ok(())
        }
        None if text.chars().all(char::is_whitespace) => Ok(()),
        None => Err(NetconfError::Xml("text outside the root element".into())),
    }
}

fn predefined_entity(name: &str) -> Option<&'static str> {
    Some(match name {
        "lt" => "<",
        "gt" => ">",
        "amp" => "&",
        "apos" => "'",
        "quot" => "\"",
        _ => return None,
    })
}

/// Parse one XML document (a NETCONF message) into its root element.
pub fn parse_document(xml: &str) -> Result<XmlElement> {
    let mut reader = NsReader::from_str(xml);
    let mut stack: Vec<XmlElement> = Vec::new();
    let mut root: Option<XmlElement> = None;
    let mut namespaces = Namespaces::default();

    fn attach(
        stack: &mut [XmlElement],
        root: &mut Option<XmlElement>,
        el: XmlElement,
    ) -> Result<()> {
        match stack.last_mut() {
            Some(parent) => parent.children.push(XmlNode::Element(el)),
            None if root.is_some() => {
                return Err(NetconfError::Xml("more than one root element".into()));
            }
            None => *root = Some(el),
        }
        Ok(())
    }

    loop {
        let before = usize::try_from(reader.buffer_position()).map_err(xml_err)?;
        let (ns, event) = reader.read_resolved_event().map_err(xml_err)?;
        match event {
            Event::Start(e) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(NetconfError::Xml(format!(
                        "elements nested deeper than {MAX_DEPTH}"
                    )));
                }
                drop_indentation(&mut stack);
                let mut el = new_element(&mut namespaces, ns, &e)?;
                let start = usize::try_from(reader.buffer_position()).map_err(xml_err)?;
                el.content_span = start..start;
                stack.push(el);
            }
            Event::Empty(e) => {
                drop_indentation(&mut stack);
                let mut el = new_element(&mut namespaces, ns, &e)?;
                let end = usize::try_from(reader.buffer_position()).map_err(xml_err)?;
                el.content_span = end..end;
                attach(&mut stack, &mut root, el)?;
            }
            Event::End(_) => {
                let mut el = stack
                    .pop()
                    .ok_or_else(|| NetconfError::Xml("unexpected end tag".into()))?;
                el.content_span.end = before;
                attach(&mut stack, &mut root, el)?;
            }
            Event::Text(t) => {
                let s = t.xml10_content().map_err(xml_err)?;
                push_text(&mut stack, &s)?;
            }
            Event::CData(c) => {
                let s = c.decode().map_err(xml_err)?;
                push_text(&mut stack, &s)?;
            }
            Event::GeneralRef(r) => {
                if let Some(ch) = r.resolve_char_ref().map_err(xml_err)? {
                    push_text(&mut stack, ch.encode_utf8(&mut [0u8; 4]))?;
                } else {
                    let name = r.decode().map_err(xml_err)?;
                    match predefined_entity(&name) {
                        Some(s) => push_text(&mut stack, s)?,
                        None => {
                            return Err(NetconfError::Xml(format!("undeclared entity &{name};")));
                        }
                    }
                }
            }
            Event::DocType(_) => return Err(NetconfError::DtdRejected),
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
            Event::Eof => break,
        }
    }
    if let Some(open) = stack.last() {
        return Err(NetconfError::Xml(format!(
            "unclosed element <{}>",
            open.name
        )));
    }
    root.ok_or_else(|| NetconfError::Xml("empty message (no root element)".into()))
}

/// What the server said in its `hello` (RFC 6241 §8.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerHello {
    pub capabilities: Vec<String>,
    pub session_id: Option<u32>,
}

/// Parse the server's `hello`.
pub fn parse_hello(xml: &str) -> Result<ServerHello> {
    let root = parse_document(xml)?;
    if !root.is_netconf("hello") {
        return Err(NetconfError::Protocol(format!(
            "expected <hello>, got <{}>",
            root.name
        )));
    }
    let capabilities: Vec<String> = root
        .child("capabilities")
        .map(|c| {
            c.children_named("capability")
                .map(|c| c.text().trim().to_string())
                .collect()
        })
        .unwrap_or_default();
    if capabilities.is_empty() {
        return Err(NetconfError::Protocol(
            "server hello lists no capabilities".into(),
        ));
    }
    let session_id = match root.child_text("session-id") {
        None => None,
        Some(s) => match s.parse::<u32>() {
            Ok(id) if id > 0 => Some(id),
            _ => {
                return Err(NetconfError::Protocol(format!(
                    "invalid session-id {s:?} in server hello"
                )));
            }
        },
    };
    Ok(ServerHello {
        capabilities,
        session_id,
    })
}

/// A parsed `rpc-reply`.
#[derive(Debug, Clone)]
pub struct RpcReply {
    pub message_id: Option<String>,
    /// `<ok/>` was present.
    pub ok: bool,
    /// `rpc-error`s of severity `error`.
    pub errors: Vec<RpcError>,
    /// `rpc-error`s of severity `warning`: not failures, returned alongside the result.
    pub warnings: Vec<RpcError>,
    /// Errors about members that did not answer, in a reply other members did answer (see
    /// [`RpcReply::into_partial_result`]); empty otherwise.
    pub member_errors: Vec<RpcError>,
    /// The whole reply as a tree.
    pub root: XmlElement,
    raw: String,
}

impl RpcReply {
    /// Parse an `rpc-reply` message.
    pub fn parse(xml: &str) -> Result<RpcReply> {
        let root = parse_document(xml)?;
        Self::from_root(xml.to_string(), root)
    }

    /// Build from an already parsed document.
    pub fn from_root(raw: String, root: XmlElement) -> Result<RpcReply> {
        if !root.is_netconf("rpc-reply") {
            return Err(NetconfError::Protocol(format!(
                "expected <rpc-reply>, got <{}>",
                root.name
            )));
        }
        let message_id = root.attr("message-id").map(str::to_string);
        let ok = root.elements().any(|e| e.is_netconf("ok"));
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        // RFC 6241 puts rpc-error directly under rpc-reply; Junos also nests them in
        // `<load-configuration-results>` / `<commit-results>`.
        let nested = root
            .elements()
            .filter(|e| e.name.ends_with("-results"))
            .flat_map(|e| e.elements());
        for el in root
            .elements()
            .chain(nested)
            .filter(|e| e.is_netconf("rpc-error"))
        {
            let err = parse_rpc_error(el, &raw);
            match err.severity {
                Severity::Error => errors.push(err),
                Severity::Warning => warnings.push(err),
            }
        }
        Ok(RpcReply {
            message_id,
            ok,
            errors,
            warnings,
            member_errors: Vec::new(),
            root,
            raw,
        })
    }

    /// The message as received.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// Everything inside `<rpc-reply>` (vendor RPCs such as Junos `get-software-information` answer
    /// with their own element there instead of `<data>`).
    pub fn inner_xml(&self) -> &str {
        self.root.inner_xml(&self.raw)
    }

    /// The `<data>` element (answers to `get` / `get-config`).
    pub fn data(&self) -> Option<&XmlElement> {
        self.root.elements().find(|e| e.is_netconf("data"))
    }

    /// The raw XML inside `<data>`.
    pub fn data_xml(&self) -> Option<&str> {
        self.data().map(|d| d.inner_xml(&self.raw))
    }

    /// The raw content of any element of this reply.
    pub fn xml_of(&self, el: &XmlElement) -> &str {
        el.inner_xml(&self.raw)
    }

    /// `Err(NetconfError::Rpc)` when the reply carries errors of severity `error`.
    pub fn into_result(self) -> Result<RpcReply> {
        if self.errors.is_empty() {
            Ok(self)
        } else {
            Err(NetconfError::Rpc {
                errors: self.errors,
                warnings: self.warnings,
            })
        }
    }
}

impl RpcReply {
    /// For read RPCs run on every member of a multi-RE system or virtual chassis (`show version
    /// invoke-on all-routing-engines`): Junos answers with an `rpc-error` for a member it cannot reach
    /// ("Could not connect to re0 : No route to host") beside the `multi-routing-engine-results` of the
    /// members that answered. Such a reply gives the answered members' data, its errors kept in
    /// `member_errors` (PyEZ reads the answered RE the same way). Without an answered member the errors
    /// are the RPC's, and this is [`RpcReply::into_result`]. Never for configuration RPCs: a failed
    /// member there is a failed change.
    pub fn into_partial_result(mut self) -> Result<RpcReply> {
        if !self.errors.is_empty() && self.has_answered_member() {
            self.member_errors = std::mem::take(&mut self.errors);
            return Ok(self);
        }
        self.into_result()
    }

    /// A `multi-routing-engine-item` holding more than its member's name.
    fn has_answered_member(&self) -> bool {
        self.root
            .elements()
            .filter(|e| e.name == "multi-routing-engine-results")
            .flat_map(|r| r.elements())
            .filter(|i| i.name == "multi-routing-engine-item")
            .any(|i| i.elements().any(|c| c.name != "re-name"))
    }
}

fn parse_rpc_error(el: &XmlElement, raw: &str) -> RpcError {
    let text = |n: &str| el.child_text(n).filter(|s| !s.is_empty());
    let severity = match text("error-severity").as_deref() {
        Some("warning") => Severity::Warning,
        // Anything else, including a missing or unknown severity, counts as an error: never turn an
        // unrecognised failure into success.
        _ => Severity::Error,
    };
    let mut info = Vec::new();
    if let Some(ei) = el.child("error-info") {
        for c in ei.elements() {
            let value = if c.elements().next().is_some() {
                c.inner_xml(raw).trim().to_string()
            } else {
                c.text().trim().to_string()
            };
            info.push(ErrorInfo {
                name: c.name.clone(),
                value,
            });
        }
        let t = ei.text();
        if info.is_empty() && !t.trim().is_empty() {
            info.push(ErrorInfo {
                name: "error-info".into(),
                value: t.trim().to_string(),
            });
        }
    }
    RpcError {
        error_type: text("error-type").map(|s| ErrorType::parse(&s)),
        tag: text("error-tag").map(|s| ErrorTag::parse(&s)),
        severity,
        app_tag: text("error-app-tag"),
        path: text("error-path"),
        message: text("error-message"),
        info,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixed_reply_with_data() {
        let xml = r#"<nc:rpc-reply xmlns:nc="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="7"><nc:data><top xmlns="urn:x">a&amp;b&#x41;<![CDATA[<raw>]]></top></nc:data></nc:rpc-reply>"#;
        let r = RpcReply::parse(xml).unwrap();
        assert_eq!(r.message_id.as_deref(), Some("7"));
        assert!(!r.ok);
        let data = r.data().unwrap();
        assert_eq!(data.namespace.as_deref(), Some(BASE_NS));
        let top = data.child("top").unwrap();
        assert_eq!(top.namespace.as_deref(), Some("urn:x"));
        assert_eq!(top.text(), "a&bA<raw>");
        assert_eq!(
            r.data_xml().unwrap(),
            r#"<top xmlns="urn:x">a&amp;b&#x41;<![CDATA[<raw>]]></top>"#
        );
    }

    #[test]
    fn ok_reply_default_namespace() {
        let r = RpcReply::parse(r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="1"><ok/></rpc-reply>"#)
            .unwrap();
        assert!(r.ok && r.errors.is_empty() && r.data().is_none());
    }

    #[test]
    fn foreign_namespace_ok_is_not_netconf_ok() {
        let r = RpcReply::parse(r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><ok xmlns="urn:vendor"/></rpc-reply>"#).unwrap();
        assert!(!r.ok);
    }

    #[test]
    fn rfc6241_multiple_errors() {
        // RFC 6241 §4.3, second example: two errors in one reply.
        let xml = r#"<rpc-reply message-id="101" xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" xmlns:xc="urn:ietf:params:xml:ns:netconf:base:1.0">
  <rpc-error>
    <error-type>application</error-type>
    <error-tag>invalid-value</error-tag>
    <error-severity>error</error-severity>
    <error-path xmlns:t="http://example.com/schema/1.2/config">
      /t:top/t:interface[t:name="Ethernet0/0"]/t:mtu
    </error-path>
    <error-message xml:lang="en">
      MTU value 25000 is not within range 256..9192
    </error-message>
  </rpc-error>
  <rpc-error>
    <error-type>application</error-type>
    <error-tag>invalid-value</error-tag>
    <error-severity>error</error-severity>
    <error-path xmlns:t="http://example.com/schema/1.2/config">
      /t:top/t:interface[t:name="Ethernet1/0"]/t:address/t:name
    </error-path>
    <error-message xml:lang="en">
      Invalid IP address for interface Ethernet1/0
    </error-message>
  </rpc-error>
</rpc-reply>"#;
        let r = RpcReply::parse(xml).unwrap();
        assert_eq!(r.errors.len(), 2);
        let e = &r.errors[0];
        assert_eq!(e.error_type, Some(ErrorType::Application));
        assert_eq!(e.tag, Some(ErrorTag::InvalidValue));
        assert_eq!(
            e.path.as_deref(),
            Some(r#"/t:top/t:interface[t:name="Ethernet0/0"]/t:mtu"#)
        );
        assert_eq!(
            e.message.as_deref(),
            Some("MTU value 25000 is not within range 256..9192")
        );
        let err = r.into_result().unwrap_err();
        assert!(err.has_tag(&ErrorTag::InvalidValue));
        assert!(err.to_string().contains("Ethernet1/0"), "{err}");
    }

    #[test]
    fn lock_denied_error_info() {
        // RFC 6241 §7.5 lock-denied example.
        let xml = r#"<rpc-reply message-id="101" xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">
  <rpc-error>
    <error-type>protocol</error-type>
    <error-tag>lock-denied</error-tag>
    <error-severity>error</error-severity>
    <error-message>
      Lock failed, lock is already held
    </error-message>
    <error-info>
      <session-id>454</session-id>
    </error-info>
  </rpc-error>
</rpc-reply>"#;
        let r = RpcReply::parse(xml).unwrap();
        assert_eq!(r.errors[0].tag, Some(ErrorTag::LockDenied));
        assert_eq!(r.errors[0].info_value("session-id"), Some("454"));
    }

    #[test]
    fn warnings_only_is_success() {
        let xml = r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="3">
<rpc-error><error-type>protocol</error-type><error-tag>operation-failed</error-tag><error-severity>warning</error-severity><error-message>statement not found</error-message></rpc-error>
<rpc-error><error-severity>warning</error-severity><error-message>second</error-message></rpc-error>
<ok/>
</rpc-reply>"#;
        let r = RpcReply::parse(xml).unwrap().into_result().unwrap();
        assert!(r.ok);
        assert_eq!(r.warnings.len(), 2);
        assert_eq!(r.warnings[0].severity, Severity::Warning);
    }

    #[test]
    fn structured_error_info() {
        let xml = r#"<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><rpc-error><error-type>application</error-type><error-tag>data-exists</error-tag><error-severity>error</error-severity><error-info><bad-element>vlan</bad-element><x:detail xmlns:x="urn:x"><x:a>1</x:a></x:detail></error-info></rpc-error></rpc-reply>"#;
        let r = RpcReply::parse(xml).unwrap();
        let e = &r.errors[0];
        assert_eq!(e.info_value("bad-element"), Some("vlan"));
        assert_eq!(e.info_value("detail"), Some("<x:a>1</x:a>"));
    }

    #[test]
    fn dtd_and_entities_rejected() {
        let bomb = r#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><rpc-reply><data>&lol2;</data></rpc-reply>"#;
        assert!(matches!(
            RpcReply::parse(bomb),
            Err(NetconfError::DtdRejected)
        ));
        let undeclared = r#"<rpc-reply><data>&xxe;</data></rpc-reply>"#;
        assert!(matches!(
            RpcReply::parse(undeclared),
            Err(NetconfError::Xml(_))
        ));
        let in_attr = r#"<rpc-reply message-id="&xxe;"/>"#;
        assert!(RpcReply::parse(in_attr).is_err());
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        for bad in [
            "",
            "   ",
            "<rpc-reply>",
            "<rpc-reply></data>",
            "</rpc-reply>",
            "<a/><b/>",
            "text",
            "<rpc-reply><ok/></rpc-reply>trailing",
            "<hello/>",
            "<rpc-reply \u{0}/>",
            "<rpc-reply a='1' a='2'/>",
        ] {
            assert!(RpcReply::parse(bad).is_err(), "accepted {bad:?}");
        }
        let deep = "<a>".repeat(MAX_DEPTH + 1);
        assert!(parse_document(&deep).is_err());
    }

    #[test]
    fn hello_parsing() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities><capability>urn:ietf:params:netconf:base:1.0</capability><capability>
urn:ietf:params:netconf:base:1.1
</capability></capabilities><session-id>4</session-id></hello>"#;
        let h = parse_hello(xml).unwrap();
        assert_eq!(h.session_id, Some(4));
        assert_eq!(h.capabilities[1], "urn:ietf:params:netconf:base:1.1");
        assert!(parse_hello("<hello><capabilities/></hello>").is_err());
        assert!(parse_hello("<hello><capabilities><capability>x</capability></capabilities><session-id>0</session-id></hello>").is_err());
        assert!(parse_hello("<rpc-reply/>").is_err());
    }

    // Real replies (transport/tests/fixtures/netconf/SOURCES.md).
    macro_rules! fixture {
        ($p:literal) => {
            include_str!(concat!("../../tests/fixtures/netconf/", $p))
        };
    }

    #[test]
    fn junos_get_configuration_without_netconf_namespace() {
        let r = RpcReply::parse(fixture!(
            "junos/get-configuration/firefly/get-configuration.xml"
        ))
        .unwrap();
        assert!(r.errors.is_empty() && r.warnings.is_empty() && r.message_id.is_none());
        let cfg = r.root.child("configuration").unwrap();
        assert_eq!(cfg.attr("junos:commit-user"), Some("rick"));
        assert_eq!(cfg.attr("commit-seconds"), Some("1395678872"));
        assert_eq!(
            cfg.path(&["system", "host-name"]).unwrap().text(),
            "firefly"
        );
        assert!(
            r.inner_xml()
                .trim_start()
                .starts_with("<configuration junos:commit-seconds")
        );
        assert!(r.xml_of(cfg).contains("<host-name>firefly</host-name>"));
    }

    #[test]
    fn indentation_is_dropped_and_leaf_text_kept_as_sent() {
        let xml = "<rpc-reply xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\">\n  <data>\n    \
                   <description>  two spaces  </description>\n    <blank> </blank>\n    \
                   <mixed>a <b/> c<e/>\t</mixed>\n  </data>\n</rpc-reply>";
        let root = parse_document(xml).unwrap();
        let data = root.child("data").unwrap();
        // Only elements: the newlines and indentation around them are not children.
        assert_eq!(data.children.len(), 3);
        assert!(data.text().is_empty());
        assert_eq!(data.child("description").unwrap().text(), "  two spaces  ");
        assert_eq!(data.child("blank").unwrap().text(), " ");
        // Text that is not only whitespace stays where it was, whitespace after the last element goes.
        let mixed = data.child("mixed").unwrap();
        assert_eq!(mixed.text(), "a  c");
        assert_eq!(mixed.children.len(), 4);
        // The raw content is untouched.
        assert!(data.inner_xml(xml).starts_with("\n    <description>"));
        // One namespace string for the whole message.
        let (r, d) = (
            root.namespace.clone().unwrap(),
            data.namespace.clone().unwrap(),
        );
        assert!(Arc::ptr_eq(&r, &d) && &*r == BASE_NS);
    }

    #[test]
    fn junos_software_information_variants() {
        let r = RpcReply::parse(fixture!(
            "junos/get-software-information/srx3600_base_ns/sw_info_simple_get-software-information.xml"
        ))
        .unwrap();
        assert_eq!(r.root.namespace.as_deref(), Some(BASE_NS));
        let si = r.root.child("software-information").unwrap();
        assert_eq!(si.child_text("product-model").as_deref(), Some("srx3600"));
        assert_eq!(si.children_named("package-information").count(), 2);

        let r = RpcReply::parse(fixture!(
            "junos/get-software-information/multi_re/get-software-information_RE0-RE0.xml"
        ))
        .unwrap();
        let items: Vec<_> = r
            .root
            .child("multi-routing-engine-results")
            .unwrap()
            .children_named("multi-routing-engine-item")
            .map(|i| i.child_text("re-name").unwrap_or_default())
            .collect();
        assert!(!items.is_empty() && items[0] == "abc-re0", "{items:?}");
    }

    #[test]
    fn junos_nested_default_namespaces_and_attributes() {
        let r = RpcReply::parse(fixture!(
            "junos/get-chassis-inventory/firefly/get-chassis-inventory.xml"
        ))
        .unwrap();
        let inv = r.root.child("chassis-inventory").unwrap();
        assert_eq!(
            inv.namespace.as_deref(),
            Some("http://xml.juniper.net/junos/12.1X46/junos-chassis")
        );
        assert!(inv.path(&["chassis", "name"]).is_some());

        let r = RpcReply::parse(fixture!(
            "junos/get-interface-information/ex/personality_ex_get-interface-information.xml"
        ))
        .unwrap();
        let ii = r.root.child("interface-information").unwrap();
        assert_eq!(ii.attr("junos:style"), Some("terse"));
        assert!(ii.children_named("physical-interface").count() >= 1);

        let r = RpcReply::parse(fixture!(
            "junos/get-lldp-neighbors-information/brief/get-lldp-neighbors-information.xml"
        ))
        .unwrap();
        let n = r.root.child("lldp-neighbors-information").unwrap();
        assert!(n.children_named("lldp-neighbor-information").count() >= 1);
    }

    #[test]
    fn napalm_junos_payloads_inside_a_reply() {
        // napalm stores the content of the reply; wrap it the way the device sends it.
        for (payload, needle) in [
            (
                fixture!(
                    "junos/get-configuration/napalm_text_committed/get_config__database_committed__format_text.xml"
                ),
                "host-name some-switch;",
            ),
            (
                fixture!("junos/get-vlan-information/napalm_vlan/get-vlan-information.xml"),
                "VLAN10",
            ),
        ] {
            let xml = format!(
                "<rpc-reply xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\" xmlns:junos=\"http://xml.juniper.net/junos/18.1R3/junos\" message-id=\"4\">\n{payload}\n</rpc-reply>"
            );
            let r = RpcReply::parse(&xml).unwrap();
            assert!(r.inner_xml().contains(needle));
            let first = r.root.elements().next().unwrap();
            let text: String = first.text()
                + &first
                    .elements()
                    .map(|e| e.children.len().to_string())
                    .collect::<String>();
            assert!(!text.is_empty());
        }
    }

    #[test]
    fn junos_commit_with_only_a_warning_is_success() {
        // A Junos 21.1 commit answered with one rtlogd warning and <ok/>, its fields padded with
        // newlines; go-netconf's TestNewRPCReply (mistsys fork, 3b99162) asserts it is no error.
        let r = RpcReply::parse(fixture!(
            "junos/rpc-error/security-log-warning/commit-warning.xml"
        ))
        .unwrap()
        .into_result()
        .unwrap();
        assert!(r.ok);
        assert!(r.errors.is_empty());
        assert_eq!(r.warnings.len(), 1);
        let w = &r.warnings[0];
        assert_eq!(w.severity, Severity::Warning);
        assert!(
            w.message
                .as_deref()
                .is_some_and(|m| m.contains("Stream Logging to an external logging server"))
        );
        assert_eq!(w.info_value("bad-element").map(str::trim), Some("report"));
    }

    #[test]
    fn junos_load_configuration_errors_nested_in_results() {
        let r = RpcReply::parse(fixture!(
            "junos/rpc-error/load-configuration-error/load-configuration-error.xml"
        ))
        .unwrap();
        assert_eq!(
            r.message_id.as_deref(),
            Some("urn:uuid:15ceca00-904e-11e4-94ad-5c514f91ab3f")
        );
        assert_eq!(r.errors.len(), 2);
        assert_eq!(r.errors[0].info_value("bad-element"), Some("system1"));
        assert_eq!(r.errors[0].message.as_deref(), Some("syntax error"));
        assert_eq!(r.errors[1].info_value("bad-element"), Some("}"));
        assert_eq!(r.errors[0].tag, None);
        let err = r.into_result().unwrap_err();
        assert!(
            err.to_string()
                .contains("syntax error [bad-element=system1]"),
            "{err}"
        );
    }

    #[test]
    fn junos_odd_error_fields() {
        let r =
            RpcReply::parse(fixture!("junos/rpc-error/get-rpc-error/get-rpc-error.xml")).unwrap();
        assert_eq!(r.errors.len(), 1, "unknown severity must count as an error");
        let e = &r.errors[0];
        assert_eq!(e.path.as_deref(), Some("error-path"));
        assert_eq!(e.info_value("error-info"), Some("..."));

        let bare = fixture!("junos/rpc-error/permission-denied/get-permission-denied.xml");
        assert!(matches!(
            RpcReply::parse(bare),
            Err(NetconfError::Protocol(_))
        ));
        let r = RpcReply::parse(&format!("<rpc-reply>{bare}</rpc-reply>")).unwrap();
        assert_eq!(
            r.errors[0].info_value("bad-element"),
            Some("get-permission-denied")
        );
        assert_eq!(r.errors[0].message.as_deref(), Some("permission denied"));
    }

    #[test]
    fn yuma123_hello_and_typed_errors() {
        let h = parse_hello(fixture!("yuma123/hello/netconfd-2.13/hello.xml")).unwrap();
        assert!(
            h.capabilities
                .iter()
                .any(|c| c == "urn:ietf:params:netconf:base:1.1")
        );
        assert!(
            h.capabilities
                .iter()
                .any(|c| c.contains("with-defaults:1.0?basic-mode=explicit&also-supported"))
        );
        assert!(h.session_id.is_some());

        let r = RpcReply::parse(fixture!("yuma123/lock/lock-denied/rpc-reply.xml")).unwrap();
        let e = &r.errors[0];
        assert_eq!(
            (e.error_type.clone(), e.tag.clone()),
            (Some(ErrorType::Protocol), Some(ErrorTag::LockDenied))
        );
        assert_eq!(e.app_tag.as_deref(), Some("no-access"));
        assert_eq!(e.info_value("session-id"), Some("1"));
        assert_eq!(e.info_value("error-number"), Some("268"));

        let r = RpcReply::parse(fixture!(
            "yuma123/edit-config/unknown-element/rpc-reply.xml"
        ))
        .unwrap();
        let e = &r.errors[0];
        assert_eq!(e.tag, Some(ErrorTag::UnknownElement));
        assert_eq!(
            e.path.as_deref(),
            Some("/nc:rpc/nc:edit-config/nc:config/if:interfaces/if:interface[if:name='e1']")
        );
        assert_eq!(e.info_value("bad-element"), Some("if:no-such-leaf"));

        let r =
            RpcReply::parse(fixture!("yuma123/edit-config/invalid-value/rpc-reply.xml")).unwrap();
        assert_eq!(r.errors[0].tag, Some(ErrorTag::InvalidValue));
        assert_eq!(r.errors[0].info_value("bad-value"), Some("maybe"));

        let r =
            RpcReply::parse(fixture!("yuma123/commit/persist-id-base10/rpc-reply.xml")).unwrap();
        assert_eq!(
            r.errors[0].message.as_deref(),
            Some("base:1.1 protocol not enabled")
        );
    }
}
