//! Typed NETCONF operations (RFC 6241 §7, §8.3-8.5) rendered to XML.
//!
//! Values (persist ids, datastore names, XPath expressions) are escaped. Caller-supplied XML (config,
//! subtree filters, raw RPCs) is checked to be a balanced fragment without DOCTYPE, XML declaration or
//! end-of-message marker, so it cannot close the `<rpc>` envelope and smuggle in a second operation.

use std::fmt::Write as _;

use quick_xml::escape::escape;
use quick_xml::events::Event;
use quick_xml::reader::Reader;

use super::error::{NetconfError, Result};

pub const CAP_BASE_10: &str = "urn:ietf:params:netconf:base:1.0";
pub const CAP_BASE_11: &str = "urn:ietf:params:netconf:base:1.1";
pub const CAP_CANDIDATE: &str = "urn:ietf:params:netconf:capability:candidate:1.0";
pub const CAP_CONFIRMED_COMMIT_10: &str = "urn:ietf:params:netconf:capability:confirmed-commit:1.0";
pub const CAP_CONFIRMED_COMMIT_11: &str = "urn:ietf:params:netconf:capability:confirmed-commit:1.1";
pub const CAP_VALIDATE_10: &str = "urn:ietf:params:netconf:capability:validate:1.0";
pub const CAP_VALIDATE_11: &str = "urn:ietf:params:netconf:capability:validate:1.1";
pub const CAP_STARTUP: &str = "urn:ietf:params:netconf:capability:startup:1.0";
pub const CAP_WRITABLE_RUNNING: &str = "urn:ietf:params:netconf:capability:writable-running:1.0";
pub const CAP_ROLLBACK_ON_ERROR: &str = "urn:ietf:params:netconf:capability:rollback-on-error:1.0";
pub const CAP_XPATH: &str = "urn:ietf:params:netconf:capability:xpath:1.0";

/// A configuration datastore (RFC 6241 §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Datastore {
    Running,
    Candidate,
    Startup,
}

impl Datastore {
    pub fn as_str(self) -> &'static str {
        match self {
            Datastore::Running => "running",
            Datastore::Candidate => "candidate",
            Datastore::Startup => "startup",
        }
    }
}

/// A `get`/`get-config` filter (RFC 6241 §6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// Subtree filter XML (the content of `<filter type="subtree">`), checked to be a balanced fragment.
    Subtree(String),
    /// XPath filter (needs :xpath); the expression is escaped into the `select` attribute.
    XPath(String),
}

/// `default-operation` of edit-config (RFC 6241 §7.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultOperation {
    Merge,
    Replace,
    None,
}

/// `test-option` of edit-config (needs :validate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestOption {
    TestThenSet,
    Set,
    TestOnly,
}

/// `error-option` of edit-config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorOption {
    StopOnError,
    ContinueOnError,
    RollbackOnError,
}

/// An edit-config request. `config` is the content of `<config>` (e.g. `<interfaces xmlns=...>` or, on
/// Junos, `<configuration>...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditConfig {
    pub target: Datastore,
    pub config: String,
    pub default_operation: Option<DefaultOperation>,
    pub test_option: Option<TestOption>,
    pub error_option: Option<ErrorOption>,
}

impl EditConfig {
    pub fn new(target: Datastore, config: impl Into<String>) -> Self {
        EditConfig {
            target,
            config: config.into(),
            default_operation: None,
            test_option: None,
            error_option: None,
        }
    }
    pub fn default_operation(mut self, op: DefaultOperation) -> Self {
        self.default_operation = Some(op);
        self
    }
    pub fn test_option(mut self, op: TestOption) -> Self {
        self.test_option = Some(op);
        self
    }
    pub fn error_option(mut self, op: ErrorOption) -> Self {
        self.error_option = Some(op);
        self
    }
}

/// One NETCONF operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operation {
    Get {
        filter: Option<Filter>,
    },
    GetConfig {
        source: Datastore,
        filter: Option<Filter>,
    },
    EditConfig(EditConfig),
    Lock(Datastore),
    Unlock(Datastore),
    DiscardChanges,
    Validate(Datastore),
    Commit,
    /// RFC 6241 §8.4.5.1: `<confirmed/>`, optional `confirm-timeout` (seconds, default 600) and `persist`.
    ConfirmedCommit {
        timeout_secs: Option<u32>,
        persist: Option<String>,
    },
    /// A commit that confirms a pending confirmed commit (with `persist-id` if it was persisted).
    ConfirmingCommit {
        persist_id: Option<String>,
    },
    CancelCommit {
        persist_id: Option<String>,
    },
    CloseSession,
    KillSession(u32),
    /// Escape hatch for vendor RPCs (Junos `get-configuration`, `load-configuration`...): the content of
    /// `<rpc>`, checked to be a balanced fragment.
    Raw(String),
}

impl Operation {
    /// Name used in errors and logs (`edit-config`, or the raw RPC's first element name).
    pub fn name(&self) -> String {
        match self {
            Operation::Get { .. } => "get".into(),
            Operation::GetConfig { .. } => "get-config".into(),
            Operation::EditConfig(_) => "edit-config".into(),
            Operation::Lock(_) => "lock".into(),
            Operation::Unlock(_) => "unlock".into(),
            Operation::DiscardChanges => "discard-changes".into(),
            Operation::Validate(_) => "validate".into(),
            Operation::Commit => "commit".into(),
            Operation::ConfirmedCommit { .. } => "confirmed commit".into(),
            Operation::ConfirmingCommit { .. } => "confirming commit".into(),
            Operation::CancelCommit { .. } => "cancel-commit".into(),
            Operation::CloseSession => "close-session".into(),
            Operation::KillSession(_) => "kill-session".into(),
            Operation::Raw(xml) => first_element_name(xml).unwrap_or_else(|| "rpc".into()),
        }
    }

    /// The XML inside `<rpc>`.
    pub fn to_xml(&self) -> Result<String> {
        let mut s = String::new();
        match self {
            Operation::Get { filter } => {
                s.push_str("<get>");
                write_filter(&mut s, filter.as_ref())?;
                s.push_str("</get>");
            }
            Operation::GetConfig { source, filter } => {
                s.push_str("<get-config>");
                write_datastore(&mut s, "source", *source);
                write_filter(&mut s, filter.as_ref())?;
                s.push_str("</get-config>");
            }
            Operation::EditConfig(ec) => {
                check_fragment(&ec.config)?;
                s.push_str("<edit-config>");
                write_datastore(&mut s, "target", ec.target);
                if let Some(op) = ec.default_operation {
                    let v = match op {
                        DefaultOperation::Merge => "merge",
                        DefaultOperation::Replace => "replace",
                        DefaultOperation::None => "none",
                    };
                    write_leaf(&mut s, "default-operation", v);
                }
                if let Some(op) = ec.test_option {
                    let v = match op {
                        TestOption::TestThenSet => "test-then-set",
                        TestOption::Set => "set",
                        TestOption::TestOnly => "test-only",
                    };
                    write_leaf(&mut s, "test-option", v);
                }
                if let Some(op) = ec.error_option {
                    let v = match op {
                        ErrorOption::StopOnError => "stop-on-error",
                        ErrorOption::ContinueOnError => "continue-on-error",
                        ErrorOption::RollbackOnError => "rollback-on-error",
                    };
                    write_leaf(&mut s, "error-option", v);
                }
                s.push_str("<config>");
                s.push_str(&ec.config);
                s.push_str("</config></edit-config>");
            }
            Operation::Lock(ds) => {
                s.push_str("<lock>");
                write_datastore(&mut s, "target", *ds);
                s.push_str("</lock>");
            }
            Operation::Unlock(ds) => {
                s.push_str("<unlock>");
                write_datastore(&mut s, "target", *ds);
                s.push_str("</unlock>");
            }
            Operation::DiscardChanges => s.push_str("<discard-changes/>"),
            Operation::Validate(ds) => {
                s.push_str("<validate>");
                write_datastore(&mut s, "source", *ds);
                s.push_str("</validate>");
            }
            Operation::Commit => s.push_str("<commit/>"),
            Operation::ConfirmedCommit {
                timeout_secs,
                persist,
            } => {
                s.push_str("<commit><confirmed/>");
                if let Some(t) = timeout_secs {
                    if *t == 0 {
                        return Err(NetconfError::InvalidArgument(
                            "confirm-timeout must be at least 1 second".into(),
                        ));
                    }
                    write_leaf(&mut s, "confirm-timeout", &t.to_string());
                }
                if let Some(p) = persist {
                    write_leaf(&mut s, "persist", p);
                }
                s.push_str("</commit>");
            }
            Operation::ConfirmingCommit { persist_id } => match persist_id {
                Some(id) => {
                    s.push_str("<commit>");
                    write_leaf(&mut s, "persist-id", id);
                    s.push_str("</commit>");
                }
                None => s.push_str("<commit/>"),
            },
            Operation::CancelCommit { persist_id } => match persist_id {
                Some(id) => {
                    s.push_str("<cancel-commit>");
                    write_leaf(&mut s, "persist-id", id);
                    s.push_str("</cancel-commit>");
                }
                None => s.push_str("<cancel-commit/>"),
            },
            Operation::CloseSession => s.push_str("<close-session/>"),
            Operation::KillSession(id) => {
                s.push_str("<kill-session>");
                write_leaf(&mut s, "session-id", &id.to_string());
                s.push_str("</kill-session>");
            }
            Operation::Raw(xml) => {
                check_fragment(xml)?;
                if first_element_name(xml).is_none() {
                    return Err(NetconfError::InvalidArgument(
                        "raw RPC contains no element".into(),
                    ));
                }
                s.push_str(xml);
            }
        }
        Ok(s)
    }
}

fn write_leaf(s: &mut String, name: &str, value: &str) {
    // `name` is always one of our literals; only the value comes from callers.
    let _ = write!(s, "<{name}>{}</{name}>", escape(value));
}

fn write_datastore(s: &mut String, wrapper: &str, ds: Datastore) {
    let _ = write!(s, "<{wrapper}><{}/></{wrapper}>", ds.as_str());
}

fn write_filter(s: &mut String, filter: Option<&Filter>) -> Result<()> {
    match filter {
        None => {}
        Some(Filter::Subtree(xml)) => {
            check_fragment(xml)?;
            s.push_str("<filter type=\"subtree\">");
            s.push_str(xml);
            s.push_str("</filter>");
        }
        Some(Filter::XPath(expr)) => {
            let _ = write!(
                s,
                "<filter type=\"xpath\" select=\"{}\"/>",
                escape(expr.as_str())
            );
        }
    }
    Ok(())
}

/// The complete `<rpc>` message.
pub fn rpc_envelope(message_id: &str, inner: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rpc xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\" message-id=\"{}\">{inner}</rpc>",
        escape(message_id)
    )
}

/// The client `hello` (RFC 6241 §8.1). `base11` adds base:1.1 (chunked framing when the server has it).
pub fn client_hello(base11: bool) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<hello xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\"><capabilities>",
    );
    write_leaf(&mut s, "capability", CAP_BASE_10);
    if base11 {
        write_leaf(&mut s, "capability", CAP_BASE_11);
    }
    s.push_str("</capabilities></hello>");
    s
}

/// Check that caller-supplied XML is a balanced fragment (any number of top-level elements and text),
/// without DOCTYPE, XML declaration or the base:1.0 end-of-message marker.
pub fn check_fragment(xml: &str) -> Result<()> {
    let bad = |m: String| NetconfError::InvalidArgument(format!("XML fragment: {m}"));
    if xml.contains("]]>]]>") {
        return Err(bad("contains the end-of-message marker ]]>]]>".into()));
    }
    let mut reader = Reader::from_str(xml);
    let mut depth: usize = 0;
    loop {
        match reader.read_event().map_err(|e| bad(e.to_string()))? {
            Event::Start(_) => depth += 1,
            Event::End(_) => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| bad("unbalanced end tag".into()))?;
            }
            Event::DocType(_) => return Err(bad("DOCTYPE not allowed".into())),
            Event::Decl(_) => return Err(bad("XML declaration not allowed inside an rpc".into())),
            Event::GeneralRef(r) => {
                let name = r.decode().map_err(|e| bad(e.to_string()))?;
                let ok = name.starts_with('#')
                    || matches!(&*name, "lt" | "gt" | "amp" | "apos" | "quot");
                if !ok {
                    return Err(bad(format!("undeclared entity &{name};")));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if depth != 0 {
        return Err(bad("unclosed element".into()));
    }
    Ok(())
}

fn first_element_name(xml: &str) -> Option<String> {
    let mut reader = Reader::from_str(xml);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) => {
                return std::str::from_utf8(e.local_name().as_ref())
                    .ok()
                    .map(str::to_string);
            }
            Ok(Event::Eof) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_typed_operations() {
        let gc = Operation::GetConfig {
            source: Datastore::Running,
            filter: Some(Filter::Subtree(
                "<interfaces xmlns=\"urn:ietf:params:xml:ns:yang:ietf-interfaces\"/>".into(),
            )),
        };
        assert_eq!(
            gc.to_xml().unwrap(),
            "<get-config><source><running/></source><filter type=\"subtree\"><interfaces xmlns=\"urn:ietf:params:xml:ns:yang:ietf-interfaces\"/></filter></get-config>"
        );
        let ec = Operation::EditConfig(
            EditConfig::new(Datastore::Candidate, "<a/>")
                .default_operation(DefaultOperation::Replace)
                .test_option(TestOption::TestThenSet)
                .error_option(ErrorOption::RollbackOnError),
        );
        assert_eq!(
            ec.to_xml().unwrap(),
            "<edit-config><target><candidate/></target><default-operation>replace</default-operation><test-option>test-then-set</test-option><error-option>rollback-on-error</error-option><config><a/></config></edit-config>"
        );
        let cc = Operation::ConfirmedCommit {
            timeout_secs: Some(3),
            persist: Some("run<1>&\"".into()),
        };
        assert_eq!(
            cc.to_xml().unwrap(),
            "<commit><confirmed/><confirm-timeout>3</confirm-timeout><persist>run&lt;1&gt;&amp;&quot;</persist></commit>"
        );
        assert_eq!(
            Operation::CancelCommit {
                persist_id: Some("x".into())
            }
            .to_xml()
            .unwrap(),
            "<cancel-commit><persist-id>x</persist-id></cancel-commit>"
        );
        assert_eq!(
            Operation::ConfirmingCommit { persist_id: None }
                .to_xml()
                .unwrap(),
            "<commit/>"
        );
        assert_eq!(
            Operation::KillSession(7).to_xml().unwrap(),
            "<kill-session><session-id>7</session-id></kill-session>"
        );
        assert_eq!(
            Operation::Get {
                filter: Some(Filter::XPath("/a[b=\"x\" and c<'y']".into()))
            }
            .to_xml()
            .unwrap(),
            "<get><filter type=\"xpath\" select=\"/a[b=&quot;x&quot; and c&lt;&apos;y&apos;]\"/></get>"
        );
        assert_eq!(
            Operation::Raw("<get-software-information/>".into()).name(),
            "get-software-information"
        );
    }

    #[test]
    fn rejects_injection_through_fragments() {
        for bad in [
            "</config></edit-config><kill-session><session-id>1</session-id></kill-session><edit-config><config>",
            "<a>",
            "</a>",
            "<!DOCTYPE a [<!ENTITY x \"y\">]><a/>",
            "<?xml version=\"1.0\"?><a/>",
            "<a>&x;</a>",
            "<a><![CDATA[]]>]]>]]></a>",
            "<a></b>",
        ] {
            let op = Operation::EditConfig(EditConfig::new(Datastore::Candidate, bad));
            assert!(op.to_xml().is_err(), "accepted {bad:?}");
            assert!(
                Operation::Raw(bad.into()).to_xml().is_err(),
                "raw accepted {bad:?}"
            );
        }
        assert!(Operation::Raw("just text".into()).to_xml().is_err());
        assert!(
            Operation::ConfirmedCommit {
                timeout_secs: Some(0),
                persist: None
            }
            .to_xml()
            .is_err()
        );
    }

    #[test]
    fn envelope_and_hello() {
        let env = rpc_envelope("5", "<commit/>");
        assert!(env.ends_with("<rpc xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\" message-id=\"5\"><commit/></rpc>"));
        assert!(client_hello(true).contains(CAP_BASE_11));
        assert!(!client_hello(false).contains(CAP_BASE_11));
    }
}
