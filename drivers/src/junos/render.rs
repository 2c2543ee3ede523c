//! A tiny XML tree for rendering Junos configuration, and helpers to walk parsed replies.
//!
//! Every value goes through [`escape`]: names, descriptions and VLAN lists never reach the device
//! unescaped, whatever characters they hold (the models validate them too, but rendering does not rely
//! on that).

use super::config::{JunosConfig, Style, configuration, parse_config};
use super::vlan::generated_name;
use crate::netconf_txn::escape;
use crate::transport::netconf::{XmlElement, XmlNode};
use netgw_models::plan::Plan;
use netgw_models::resource::{Link, Vlan};
use std::collections::BTreeSet;

/// An element to render. Names are ours (literals); attribute values and text are escaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct El {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub text: Option<String>,
    pub children: Vec<El>,
}

impl El {
    pub fn new(name: &str) -> Self {
        El {
            name: name.to_string(),
            attrs: Vec::new(),
            text: None,
            children: Vec::new(),
        }
    }

    /// `<name>text</name>`.
    pub fn leaf(name: &str, text: impl Into<String>) -> Self {
        El {
            text: Some(text.into()),
            ..El::new(name)
        }
    }

    /// `<name operation="delete"/>` (Junos accepts the unqualified attribute in edit-config).
    pub fn delete(name: &str) -> Self {
        El::new(name).attr("operation", "delete")
    }

    pub fn attr(mut self, name: &str, value: &str) -> Self {
        self.attrs.push((name.to_string(), value.to_string()));
        self
    }

    pub fn child(mut self, c: El) -> Self {
        self.children.push(c);
        self
    }

    pub fn children(mut self, cs: impl IntoIterator<Item = El>) -> Self {
        self.children.extend(cs);
        self
    }

    pub fn push(&mut self, c: El) {
        self.children.push(c);
    }

    /// The first direct child named `name`, created when missing.
    pub fn entry(&mut self, name: &str) -> &mut El {
        let pos = match self.children.iter().position(|c| c.name == name) {
            Some(p) => p,
            None => {
                self.children.push(El::new(name));
                self.children.len() - 1
            }
        };
        &mut self.children[pos]
    }

    pub fn to_xml(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    fn write(&self, s: &mut String) {
        s.push('<');
        s.push_str(&self.name);
        for (k, v) in &self.attrs {
            s.push(' ');
            s.push_str(k);
            s.push_str("=\"");
            s.push_str(&escape(v));
            s.push('"');
        }
        if self.text.is_none() && self.children.is_empty() {
            s.push_str("/>");
            return;
        }
        s.push('>');
        if let Some(t) = &self.text {
            s.push_str(&escape(t));
        }
        for c in &self.children {
            c.write(s);
        }
        s.push_str("</");
        s.push_str(&self.name);
        s.push('>');
    }
}

/// Convert a parsed element back into a renderable one: local names, text, children; attributes are
/// dropped (Junos meta attributes such as `junos:changed-seconds` are not configuration).
pub fn from_parsed(el: &XmlElement) -> El {
    let mut out = El::new(&el.name);
    let has_elements = el.elements().next().is_some();
    for c in &el.children {
        match c {
            XmlNode::Element(e) => out.children.push(from_parsed(e)),
            XmlNode::Text(t) if !has_elements => {
                let t = t.trim();
                if !t.is_empty() {
                    out.text = Some(t.to_string());
                }
            }
            XmlNode::Text(_) => {}
        }
    }
    out
}

/// Depth-first search for the first element named `name` (the element itself included).
pub fn find<'a>(el: &'a XmlElement, name: &str) -> Option<&'a XmlElement> {
    if el.name == name {
        return Some(el);
    }
    el.elements().find_map(|c| find(c, name))
}

/// Trimmed text of a direct child, `None` when missing or empty (fake-switches pads values with
/// newlines, real Junos does in some replies too).
pub fn text(el: &XmlElement, name: &str) -> Option<String> {
    el.child_text(name).filter(|s| !s.is_empty())
}

/// The configuration that puts the resources a plan touched back as they were in `pre` (the running
/// configuration recorded before the change), for a device that cannot cancel a confirmed commit.
/// `now` is the running configuration after the commit: only what exists there is deleted (deleting a
/// missing statement is a warning on Junos and aborts the edit on fake-switches).
pub fn render_restore(
    pre_root: &XmlElement,
    now: &JunosConfig,
    plan: &Plan,
    style: Style,
) -> Option<El> {
    let pre_cfg_el = configuration(pre_root);
    let pre = parse_config(pre_root);
    let (outer, inner) = match style {
        Style::Mx => ("bridge-domains", "domain"),
        Style::Ex | Style::Els => ("vlans", "vlan"),
    };
    // Every name a touched VLAN had or was given.
    let mut names: BTreeSet<String> = BTreeSet::new();
    let (lag_ifs, bound) = super::lag::touched(plan, style);
    for id in bound {
        let n = pre.vlans.iter().chain(&now.vlans);
        names.extend(n.filter(|v| v.id == Some(id.get())).map(|v| v.name.clone()));
    }
    for ch in &plan.vlans {
        let id = ch.id.get();
        for v in pre
            .vlans
            .iter()
            .chain(&now.vlans)
            .filter(|v| v.id == Some(id))
        {
            names.insert(v.name.clone());
        }
        for v in [&ch.before, &ch.after].into_iter().flatten() {
            if let Some(n) = &v.name {
                names.insert(n.clone());
            }
        }
        names.insert(generated_name(ch.id));
    }
    let pre_vlan_els: Vec<&XmlElement> = pre_cfg_el
        .and_then(|c| c.child(outer))
        .map(|v| v.children_named(inner).collect())
        .unwrap_or_default();
    let mut vlan_deletes = Vec::new();
    let mut vlan_adds = Vec::new();
    for n in &names {
        if now.vlan_by_name(n).is_some() {
            vlan_deletes.push(
                El::new(inner)
                    .attr("operation", "delete")
                    .child(El::leaf("name", n)),
            );
        }
        if let Some(el) = pre_vlan_els
            .iter()
            .find(|e| text(e, "name").as_deref() == Some(n.as_str()))
        {
            vlan_adds.push(from_parsed(el));
        }
    }
    let pre_ifs: Vec<&XmlElement> = pre_cfg_el
        .and_then(|c| c.child("interfaces"))
        .map(|i| i.children_named("interface").collect())
        .unwrap_or_default();
    let mut ifs = Vec::new();
    let mut seen = BTreeSet::new();
    let touched = plan.links.iter().map(|ch| &ch.after.name).chain(&lag_ifs);
    for n in touched {
        if !seen.insert(n.clone()) {
            continue;
        }
        match pre_ifs
            .iter()
            .find(|e| text(e, "name").as_deref() == Some(n.as_str()))
        {
            Some(el) => {
                let mut r = from_parsed(el);
                r.attrs.push(("operation".into(), "replace".into()));
                ifs.push(r);
            }
            None if now.interface(n).is_some() => {
                ifs.push(
                    El::new("interface")
                        .attr("operation", "delete")
                        .child(El::leaf("name", n)),
                );
            }
            None => {}
        }
    }
    let mut cfg = El::new("configuration");
    if !vlan_deletes.is_empty() || !vlan_adds.is_empty() {
        cfg.push(El::new(outer).children(vlan_deletes).children(vlan_adds));
    }
    if !ifs.is_empty() {
        cfg.push(El::new("interfaces").children(ifs));
    }
    (!cfg.children.is_empty()).then_some(cfg)
}

fn vlan_line(v: &Vlan) -> String {
    let mut s = format!("vlan {}", v.id);
    if let Some(n) = &v.name {
        s.push_str(&format!(" name {n}"));
    }
    if let Some(d) = &v.description {
        s.push_str(&format!(" description {d:?}"));
    }
    s
}

fn link_line(l: &Link) -> String {
    let mut s = format!("interface {}", l.name);
    if let Some(d) = &l.description {
        s.push_str(&format!(" description {d:?}"));
    }
    if l.enabled == Some(false) {
        s.push_str(" disabled");
    }
    if let Some(m) = l.mtu {
        s.push_str(&format!(" mtu {m}"));
    }
    if let Some(m) = l.mode {
        s.push_str(&format!(" mode {m}"));
    }
    if let Some(v) = l.access_vlan {
        s.push_str(&format!(" access-vlan {v}"));
    }
    if let Some(v) = &l.trunk_vlans {
        s.push_str(&format!(" trunk-vlans {v}"));
    }
    if let Some(v) = l.native_vlan {
        s.push_str(&format!(" native-vlan {v}"));
    }
    s
}

/// A diff netgw computes when the device shows none: one line per VLAN and link, `-` for running,
/// `+` for candidate, only lines that differ.
pub fn computed_diff(running: (&[Vlan], &[Link]), candidate: (&[Vlan], &[Link])) -> String {
    let lines = |(v, l): (&[Vlan], &[Link])| -> Vec<String> {
        v.iter()
            .map(vlan_line)
            .chain(l.iter().map(link_line))
            .collect()
    };
    let before = lines(running);
    let after = lines(candidate);
    let mut out = String::new();
    for b in before.iter().filter(|b| !after.contains(b)) {
        out.push_str(&format!("- {b}\n"));
    }
    for a in after.iter().filter(|a| !before.contains(a)) {
        out.push_str(&format!("+ {a}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::netconf::reply::parse_document;

    #[test]
    fn values_are_escaped() {
        let e = El::new("vlan")
            .child(El::leaf("name", "a<b>&\"c'"))
            .child(El::delete("description"));
        assert_eq!(
            e.to_xml(),
            "<vlan><name>a&lt;b&gt;&amp;&quot;c&apos;</name><description operation=\"delete\"/></vlan>"
        );
        // What we render parses back to the same text.
        let doc = parse_document(&e.to_xml()).unwrap();
        assert_eq!(text(&doc, "name").as_deref(), Some("a<b>&\"c'"));
    }

    #[test]
    fn parsed_elements_round_trip_without_attributes() {
        let doc = parse_document(
            "<configuration xmlns:junos=\"x\"><vlans><vlan junos:changed=\"1\"><name>\n web \n</name><vlan-id>10</vlan-id></vlan></vlans></configuration>",
        )
        .unwrap();
        let vlan = find(&doc, "vlan").unwrap();
        assert_eq!(
            from_parsed(vlan).to_xml(),
            "<vlan><name>web</name><vlan-id>10</vlan-id></vlan>"
        );
        let mut e = El::new("a");
        e.entry("b").push(El::leaf("c", "1"));
        e.entry("b").push(El::leaf("d", "2"));
        assert_eq!(e.to_xml(), "<a><b><c>1</c><d>2</d></b></a>");
    }
}
