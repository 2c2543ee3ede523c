//! Method calls, blocks and resources of the evaluator ([`super`]).

use super::{Eval, RESOURCE_KINDS, ResourceDecl, Root, is_node, precedence, type_name};
use crate::cookbook::CookbookError;
use lib_ruby_parser::Node;
use lib_ruby_parser::nodes::{Block, Send};
use serde_json::Value;
use std::collections::HashMap;

/// `Chef::Log`.
fn is_chef_log(n: &Node) -> bool {
    matches!(n, Node::Const(c) if c.name == "Log"
        && matches!(c.scope.as_deref(), Some(Node::Const(p)) if p.name == "Chef" && p.scope.is_none()))
}

/// `Chef::EncryptedDataBagItem`.
fn is_encrypted_item_class(n: &Node) -> bool {
    matches!(n, Node::Const(c) if c.name == "EncryptedDataBagItem"
        && matches!(c.scope.as_deref(), Some(Node::Const(p)) if p.name == "Chef" && p.scope.is_none()))
}

/// A block parameter: a name, or `(a, b)` destructuring.
enum Param {
    Name(String),
    Destructure(Vec<Param>),
}

impl Eval<'_> {
    pub(super) fn send(&mut self, n: &Node, s: &Send) -> Result<Value, CookbookError> {
        let Some(r) = s.recv.as_deref() else {
            return self.call(n, s);
        };
        if is_chef_log(r)
            && matches!(
                s.method_name.as_str(),
                "debug" | "info" | "warn" | "error" | "fatal"
            )
        {
            // Logging changes nothing netgw computes; the message is still evaluated (and checked).
            self.args(s)?;
            return Ok(Value::Null);
        }
        if is_node(r) {
            return self.node_method(n, s);
        }
        if is_encrypted_item_class(r) {
            return self.data_bag(n, s);
        }
        if let Some(v) = self.literal_match(n, r, s)? {
            return Ok(v);
        }
        if is_platform_version(r) {
            let recv = self.platform_version(n, &s.method_name)?;
            let args = self.args(s)?;
            return self.method(n, &s.method_name, recv, args, false);
        }
        let (recv, mash) = self.receiver(r)?;
        let args = self.args(s)?;
        self.method(n, &s.method_name, recv, args, mash)
    }

    /// `x =~ /lit/`, `x !~ /lit/`, `x.match?(/lit/)` and `/lit/ =~ x` where the pattern is plain
    /// text (letters, digits, `_`, `-`, no flags): Onigmo matches it literally, so Ruby's answer is
    /// the character index of the first occurrence or nil (`!~`, `match?`: whether it occurs). `x`
    /// is a String or nil (`nil =~ re` is nil). Any other regular expression stays refused.
    fn literal_match(
        &mut self,
        n: &Node,
        r: &Node,
        s: &Send,
    ) -> Result<Option<Value>, CookbookError> {
        let m = s.method_name.as_str();
        let (subject, pattern) = match (m, s.args.as_slice()) {
            ("=~" | "!~" | "match?", [a]) if literal_regexp(a).is_some() => (r, a),
            ("=~", [a]) if literal_regexp(r).is_some() => (a, r),
            _ => return Ok(None),
        };
        let Some(text) = literal_regexp(pattern) else {
            return Ok(None);
        };
        let found = match self.eval(subject)? {
            Value::String(x) => x.find(&text).map(|i| x[..i].chars().count()),
            Value::Null if m != "match?" => None,
            v => {
                return Err(self.err(
                    n.expression(),
                    format!("`{m}` on {}", type_name(&v)),
                    "a regular expression is matched against a String or nil only",
                ));
            }
        };
        Ok(Some(match m {
            "=~" => found.map(Value::from).unwrap_or(Value::Null),
            "!~" => Value::Bool(found.is_none()),
            _ => Value::Bool(found.is_some()),
        }))
    }

    /// chef-utils' `platform_version` is `ChefUtils::VersionString.new(node['platform_version'])`, a
    /// String whose comparisons (`==`, `<`, `=~`, `satisfies?` ...) compare versions. Its String
    /// methods are evaluated on the fact; anything else is refused.
    fn platform_version(&mut self, n: &Node, method: &str) -> Result<Value, CookbookError> {
        const AS_STRING: [&str; 10] = [
            "to_i",
            "to_f",
            "to_s",
            "to_str",
            "split",
            "start_with?",
            "end_with?",
            "include?",
            "empty?",
            "length",
        ];
        if !AS_STRING.contains(&method) {
            return Err(self.err(
                n.expression(),
                format!("`platform_version.{method}`"),
                "platform_version is a ChefUtils::VersionString, which compares as versions: use node['platform_version'] with to_i, to_f, split or value_for_platform",
            ));
        }
        match self.fact("platform_version") {
            v @ Value::String(_) => Ok(v),
            // `VersionString.new(nil)` is `''`.
            Value::Null => Ok(Value::String(String::new())),
            v => Err(self.err(
                n.expression(),
                "`platform_version`",
                format!(
                    "the node's platform_version is {} (String.new raises TypeError)",
                    type_name(&v)
                ),
            )),
        }
    }

    /// A call's receiver, and whether it is node attributes (see [`super::lookup`]).
    fn receiver(&mut self, r: &Node) -> Result<(Value, bool), CookbookError> {
        Ok(match self.root(r)? {
            Root::Node => (self.merged().clone(), true),
            Root::Level(c, path) => {
                let keys: super::Keys = path.into_iter().map(|k| (k, r)).collect();
                (self.read_level(c, &keys, r.expression())?, true)
            }
            Root::Value(v) => (v, matches!(r, Node::Index(_)) && self.rooted_in_node(r)),
        })
    }

    pub(super) fn args(&mut self, s: &Send) -> Result<Vec<Value>, CookbookError> {
        let mut out = Vec::with_capacity(s.args.len());
        for a in &s.args {
            if matches!(a, Node::BlockPass(_)) {
                return Err(self.err(
                    a.expression(),
                    "block argument `&`",
                    "pass an explicit block",
                ));
            }
            out.push(self.eval(a)?);
        }
        Ok(out)
    }

    /// A call without a receiver: `node`, a precedence level, `include_recipe`, a resource, or (inside
    /// a resource block) a property.
    fn call(&mut self, n: &Node, s: &Send) -> Result<Value, CookbookError> {
        let name = s.method_name.as_str();
        if s.args.is_empty() {
            if name == "node" {
                return Ok(self.merged().clone());
            }
            if let Some(c) = precedence(name) {
                return Ok(self.level(c));
            }
        }
        // Chef's resources have the platform helpers too (`Chef::DSL::Universal`).
        if let Some(v) = self.platform_helper(n, s)? {
            return Ok(v);
        }
        // Chef's resources read data bags too (`Chef::Resource` includes `Chef::DSL::DataQuery`).
        if matches!(name, "data_bag_item" | "data_bag") && self.host.is_some() {
            return self.data_bag(n, s);
        }
        if self.current.is_some() {
            return self.property(n, s);
        }
        if name == "include_recipe" {
            return self.include(n, s);
        }
        // An attribute file is evaluated on the node (`instance_eval`): `attribute?` is the node's.
        if self.host.is_none() && name == "attribute?" {
            return self.node_method(n, s);
        }
        if self.host.is_none() && name == "include_attribute" {
            return self.include_attribute(n, s);
        }
        if RESOURCE_KINDS.contains(&name) {
            return self.resource(n, s, None);
        }
        if super::resources::is_host_resource(name) {
            return Err(self.host_resource(n, name));
        }
        if matches!(
            name,
            "data_bag_item" | "data_bag" | "search" | "encrypted_data_bag_item"
        ) {
            return Err(self.err(
                n.expression(),
                format!("call to `{name}`"),
                "netgw reads data bag items in recipes only (the repo's data_bags/BAG/ITEM.json, or the Chef server's when cookbooks come from it; `data_bag_item` or `Chef::EncryptedDataBagItem.load`) and runs no searches; put the values in attributes, roles or environments",
            ));
        }
        Err(self.unsupported(n))
    }

    fn property(&mut self, n: &Node, s: &Send) -> Result<Value, CookbookError> {
        let name = s.method_name.clone();
        let mut args = self.args(s)?;
        let value = match (name.as_str(), args.len()) {
            (_, 0) => {
                return Err(self.err(
                    n.expression(),
                    format!("`{name}` without a value"),
                    "reading a resource property back is not evaluated",
                ));
            }
            ("action", _) => {
                let list = if args.len() == 1 {
                    args.remove(0)
                } else {
                    Value::Array(args)
                };
                let list = match list {
                    Value::Array(a) => a,
                    other => vec![other],
                };
                let actions = list
                    .iter()
                    .map(|a| self.text(n, a))
                    .collect::<Result<Vec<_>, _>>()?;
                if let Some(d) = self.current.as_mut() {
                    d.actions = actions;
                }
                return Ok(Value::Null);
            }
            (_, 1) => args.remove(0),
            _ => Value::Array(args),
        };
        if self.common_property(n, &name, &value)? {
            return Ok(Value::Null);
        }
        // A property holds what Chef would pass on: Symbols as their Strings.
        let value = super::value::chef_value(&value).map_err(|what| {
            self.err(n.expression(), format!("`{name}`"), format!("holds {what}"))
        })?;
        if let Some(d) = self.current.as_mut() {
            d.properties.push((name, value));
        }
        Ok(Value::Null)
    }

    /// `data_bag('bag')`, `data_bag_item('bag', 'item')` or `Chef::EncryptedDataBagItem.load('bag',
    /// 'item')`, from the host's data bags (the repo's `data_bags/` or the Chef server's), encrypted
    /// items decrypted with the run's configured secret. A secret given in the recipe (a third
    /// argument, `load_secret(PATH)`) names a file on the Chef node, not on the gateway: refused.
    fn data_bag(&mut self, n: &Node, s: &Send) -> Result<Value, CookbookError> {
        let name = match s.recv {
            Some(_) => format!("Chef::EncryptedDataBagItem.{}", s.method_name),
            None => s.method_name.clone(),
        };
        let explicit = matches!(
            name.as_str(),
            "data_bag_item" | "Chef::EncryptedDataBagItem.load"
        ) && s.args.len() == 3;
        if explicit || name == "Chef::EncryptedDataBagItem.load_secret" {
            return Err(self.err(
                n.expression(),
                format!("`{name}` with a secret of its own"),
                "netgw decrypts data bag items with the secret file it is given \
                 (--encrypted-data-bag-secret, Chef's encrypted_data_bag_secret); drop the secret \
                 argument, as chef-client decrypts with that setting too",
            ));
        }
        let args = self.args(s)?;
        let texts: Vec<&str> = args.iter().filter_map(Value::as_str).collect();
        let (bag, item) = match (name.as_str(), texts.as_slice()) {
            ("data_bag", [bag]) if args.len() == 1 => (*bag, None),
            ("data_bag_item" | "Chef::EncryptedDataBagItem.load", [bag, item])
                if args.len() == 2 =>
            {
                (*bag, Some(*item))
            }
            _ => {
                let want = match name.as_str() {
                    "data_bag" => "takes a bag name (a string)",
                    "data_bag_item" | "Chef::EncryptedDataBagItem.load" => {
                        "takes a bag name and an item name (strings)"
                    }
                    _ => "is not evaluated (netgw reads items with `load`)",
                };
                return Err(self.err(n.expression(), format!("`{name}`"), want));
            }
        };
        let at = self.err(n.expression(), format!("`{name}`"), "");
        match (self.host.as_deref_mut(), item) {
            (Some(host), Some(item)) if s.recv.is_some() => {
                host.encrypted_data_bag_item(bag, item, &at)
            }
            (Some(host), _) => host.data_bag(bag, item, &at),
            (None, _) => Err(at.because(
                "data bags are read in recipes only (Chef's attribute files have none)".into(),
            )),
        }
    }

    fn include(&mut self, n: &Node, s: &Send) -> Result<Value, CookbookError> {
        let names = self.args(s)?;
        if self.host.is_none() {
            return Err(self.err(
                n.expression(),
                "`include_recipe`",
                "only recipes can include recipes (this is an attribute file)",
            ));
        }
        // The included recipe reads what this one has assigned so far.
        self.flush();
        self.merged = None;
        for v in names {
            let Value::String(name) = v else {
                return Err(self.err(
                    n.expression(),
                    "`include_recipe`",
                    format!("takes recipe names, found {}", type_name(&v)),
                ));
            };
            let at = self.err(n.expression(), format!("`include_recipe {name:?}`"), "");
            if let Some(host) = self.host.as_deref_mut() {
                host.include_recipe(&name, self.attrs, at)?;
            }
        }
        self.merged = None;
        Ok(Value::Null)
    }

    /// A resource declaration, with or without a block of properties.
    fn resource(
        &mut self,
        n: &Node,
        s: &Send,
        body: Option<&Node>,
    ) -> Result<Value, CookbookError> {
        if self.host.is_none() {
            return Err(self.err(
                n.expression(),
                format!("resource `{}`", s.method_name),
                "resources belong in recipes, not attribute files",
            ));
        }
        let name = match self.args(s)?.as_slice() {
            [Value::String(v)] => v.clone(),
            [Value::Number(v)] => v.to_string(),
            other => {
                return Err(self.err(
                    n.expression(),
                    format!("resource `{}`", s.method_name),
                    format!("takes one name (a string), found {} arguments", other.len()),
                ));
            }
        };
        if self.current.is_some() {
            return Err(self.err(
                n.expression(),
                format!("resource `{}`", s.method_name),
                "declared inside another resource's block",
            ));
        }
        self.current = Some(ResourceDecl {
            kind: s.method_name.clone(),
            name,
            path: self.p.path.clone(),
            line: self.p.line(n.expression()),
            properties: Vec::new(),
            actions: Vec::new(),
        });
        self.scopes.push(HashMap::new());
        let r = self.eval_body(body);
        self.scopes.pop();
        let decl = self.current.take();
        r?;
        if let Some(d) = &decl {
            self.refuse_host_link(d)?;
        }
        self.resources.extend(decl);
        Ok(Value::Null)
    }

    /// Chef's `include_attribute 'cb::file'` (`'cb'` is `cb::default`): loads the file now unless
    /// the run loaded it already (chef-client's compiler loads every file through it, so a file
    /// included early is not loaded again in its turn).
    fn include_attribute(&mut self, n: &Node, s: &Send) -> Result<Value, CookbookError> {
        let mut specs = Vec::new();
        for a in self.args(s)? {
            match a {
                Value::Array(list) => specs.extend(list),
                v => specs.push(v),
            }
        }
        // The included file reads what this one has assigned so far.
        self.flush();
        self.merged = None;
        for spec in &specs {
            let Some(spec) = spec.as_str() else {
                return Err(self.err(
                    n.expression(),
                    "`include_attribute`",
                    format!(
                        "takes attribute file names ('cb::file'), found {}",
                        type_name(spec)
                    ),
                ));
            };
            // Chef's `/(.+?)::(.+)/`: the first `::` after at least one character, with more after.
            let sep = spec
                .char_indices()
                .skip(1)
                .find(|(i, _)| spec[*i..].starts_with("::"));
            let full = match sep {
                Some((i, _)) if spec.len() > i + 2 => spec.to_string(),
                _ => format!("{spec}::default"),
            };
            let at = self.err(n.expression(), format!("`include_attribute {spec:?}`"), "");
            let Some(loader) = self.loader.as_deref_mut() else {
                return Err(at.because("this evaluation loads no other attribute files".into()));
            };
            loader.include_attribute(&full, self.attrs, at)?;
        }
        self.merged = None;
        Ok(Value::Bool(true))
    }

    fn node_method(&mut self, n: &Node, s: &Send) -> Result<Value, CookbookError> {
        let name = s.method_name.as_str();
        if let Some(c) = precedence(name)
            && s.args.is_empty()
        {
            return Ok(self.level(c));
        }
        if name == "name" && s.args.is_empty() {
            return self.node_name(n);
        }
        let args = self.args(s)?;
        let merged = self.merged().clone();
        let refuse = |why: super::Refusal| {
            self.err(n.expression(), format!("`node.{name}`"), why.to_string())
        };
        match (name, args.as_slice()) {
            ("attribute?" | "key?" | "has_key?" | "include?", [k]) => {
                let m = super::value::as_hash(&merged).cloned().unwrap_or_default();
                Ok(Value::Bool(
                    super::lookup(&m, k, true).map_err(refuse)?.is_some(),
                ))
            }
            ("dig" | "read", keys) if !keys.is_empty() => {
                super::methods::dig(&merged, keys, true).map_err(refuse)
            }
            _ => Err(self.err(
                n.expression(),
                format!("`node.{name}`"),
                "not an attribute read netgw can evaluate before the run (use node['...'])",
            )),
        }
    }

    /// `node.name`: the name of the node the run is for (Chef's `Node#name`, not an attribute).
    fn node_name(&self, n: &Node) -> Result<Value, CookbookError> {
        let name = match (self.host.as_deref(), self.loader.as_deref()) {
            (Some(h), _) => h.node_name(),
            (None, Some(l)) => l.node_name(),
            (None, None) => None,
        };
        name.map(Value::String).ok_or_else(|| {
            self.err(
                n.expression(),
                "`node.name`",
                "this evaluation is for no node (its name is known only in a node's run)",
            )
        })
    }

    pub(super) fn block(&mut self, n: &Node, b: &Block) -> Result<Value, CookbookError> {
        let Node::Send(call) = &*b.call else {
            return Err(self.unsupported(n));
        };
        let Some(recv) = call.recv.as_deref() else {
            if RESOURCE_KINDS.contains(&call.method_name.as_str()) && self.current.is_none() {
                return self.resource(n, call, b.body.as_deref());
            }
            if super::resources::is_host_resource(&call.method_name) && self.current.is_none() {
                return Err(self.host_resource(n, &call.method_name));
            }
            let why = if self.current.is_some() {
                "guards and notifications run Ruby at converge time; netgw never runs code"
            } else {
                "outside the Ruby subset netgw evaluates statically (see docs/cookbooks.md); nothing is run"
            };
            return Err(self.err(
                n.expression(),
                format!("block passed to `{}`", call.method_name),
                why,
            ));
        };
        let alias = self.alias_target(recv)?;
        let recv = match &alias {
            Some((root, c, path)) => {
                let keys: super::Keys = path.iter().map(|k| (k.clone(), root)).collect();
                self.read_level(*c, &keys, recv.expression())?
            }
            None => self.eval(recv)?,
        };
        self.check_iterator(n, &call.method_name, &recv)?;
        if !call.args.is_empty() {
            return Err(self.err(
                n.expression(),
                format!("`{}` with arguments", call.method_name),
                "iterators take no arguments here",
            ));
        }
        let params = match b.args.as_deref() {
            None => Vec::new(),
            Some(Node::Args(a)) => a
                .args
                .iter()
                .map(|p| self.param(p))
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(self.unsupported(other)),
        };
        if call.method_name == "tap" {
            return self.tap(n, recv, alias, &params, b.body.as_deref());
        }
        self.iterate(n, &call.method_name, recv, &params, b.body.as_deref())
    }

    /// The level path a `tap` receiver names (`default['a']['b']`), so its block parameter writes
    /// through to the level.
    fn alias_target(
        &mut self,
        recv: &Node,
    ) -> Result<Option<(lib_ruby_parser::Node, super::Component, Vec<String>)>, CookbookError> {
        if !self.names_level(super::chain_root(recv)) {
            return Ok(None);
        }
        let (root, raw) = self.chain(recv)?;
        let Root::Level(c, prefix) = self.root(root)? else {
            return Ok(None);
        };
        let keys = self.attr_keys(prefix, root, &raw)?;
        Ok(Some((
            root.clone(),
            c,
            keys.into_iter().map(|(k, _)| k).collect(),
        )))
    }

    /// `x.tap { |y| ... }`: the block runs once with the receiver; a level path's parameter reads
    /// and writes the level.
    fn tap(
        &mut self,
        n: &Node,
        recv: Value,
        alias: Option<(Node, super::Component, Vec<String>)>,
        params: &[Param],
        body: Option<&Node>,
    ) -> Result<Value, CookbookError> {
        self.step(n.expression())?;
        let mut scope = HashMap::new();
        bind(params, vec![recv.clone()], &mut scope);
        let saved = self.aliases.clone();
        for name in scope.keys() {
            self.aliases.remove(name);
        }
        if let (Some((_, c, path)), Some(Param::Name(p))) = (&alias, params.first()) {
            self.aliases.insert(p.clone(), (*c, path.clone()));
        }
        self.scopes.push(scope);
        let r = self.eval_body(body);
        self.scopes.pop();
        self.aliases = saved;
        r?;
        match alias {
            Some((root, c, path)) => {
                let keys: super::Keys = path.into_iter().map(|k| (k, &root)).collect();
                self.read_level(c, &keys, n.expression())
            }
            None => Ok(recv),
        }
    }

    fn param(&self, p: &Node) -> Result<Param, CookbookError> {
        match p {
            Node::Arg(a) => Ok(Param::Name(a.name.clone())),
            Node::Procarg0(a) => match a.args.as_slice() {
                [one] => self.param(one),
                many => Ok(Param::Destructure(
                    many.iter()
                        .map(|p| self.param(p))
                        .collect::<Result<_, _>>()?,
                )),
            },
            Node::Mlhs(m) => Ok(Param::Destructure(
                m.items
                    .iter()
                    .map(|p| self.param(p))
                    .collect::<Result<_, _>>()?,
            )),
            other => Err(self.err(
                other.expression(),
                "block parameter",
                format!("{} parameters are not supported", other.str_type()),
            )),
        }
    }

    /// One run of a block body with its parameters bound (they shadow outer names and aliases).
    fn run_block(
        &mut self,
        params: &[Param],
        yielded: Vec<Value>,
        body: Option<&Node>,
    ) -> Result<Value, CookbookError> {
        let mut scope = HashMap::new();
        bind(params, yielded, &mut scope);
        let saved = (!self.aliases.is_empty()).then(|| self.aliases.clone());
        if saved.is_some() {
            for name in scope.keys() {
                self.aliases.remove(name);
            }
        }
        self.scopes.push(scope);
        let r = self.eval_body(body);
        self.scopes.pop();
        if let Some(saved) = saved {
            self.aliases = saved;
        }
        r
    }

    fn iterate(
        &mut self,
        n: &Node,
        method: &str,
        recv: Value,
        params: &[Param],
        body: Option<&Node>,
    ) -> Result<Value, CookbookError> {
        let items = self.items(n, &recv)?;
        let mut results = Vec::with_capacity(items.len());
        let mut kept = 0usize;
        for (i, item) in items.iter().enumerate() {
            self.step(n.expression())?;
            let yielded = match method {
                "each_with_index" => vec![item.clone(), Value::from(i)],
                "each_key" => vec![first(item)],
                "each_value" => vec![second(item)],
                _ => vec![item.clone()],
            };
            let r = self.run_block(params, yielded, body)?;
            let stop = Self::stops(method, &r);
            // Only `map`, `flat_map` and `sum` use the block's values (counted as they grow);
            // the others need their truth.
            let r = match method {
                "map" | "collect" | "flat_map" | "sum" => {
                    kept = kept.saturating_add(super::value::measure(&r, super::MAX_VALUE_DEPTH).0);
                    self.within_value_bound(n, kept)?;
                    r
                }
                _ => Value::Bool(super::truthy(&r)),
            };
            results.push(r);
            if stop {
                break;
            }
        }
        self.finish_iterator(n, method, recv, &items, results)
    }
}

fn bind(params: &[Param], mut yielded: Vec<Value>, scope: &mut HashMap<String, Value>) {
    // Ruby splats a single yielded array over several block parameters.
    if params.len() > 1
        && yielded.len() == 1
        && let Some(Value::Array(a)) = yielded.first()
    {
        yielded = a.clone();
    }
    for (i, p) in params.iter().enumerate() {
        let v = yielded.get(i).cloned().unwrap_or(Value::Null);
        match p {
            Param::Name(name) => {
                scope.insert(name.clone(), v);
            }
            Param::Destructure(sub) => {
                let parts = match v {
                    Value::Array(a) => a,
                    other => vec![other],
                };
                bind_all(sub, parts, scope);
            }
        }
    }
}

fn bind_all(params: &[Param], parts: Vec<Value>, scope: &mut HashMap<String, Value>) {
    for (i, p) in params.iter().enumerate() {
        let v = parts.get(i).cloned().unwrap_or(Value::Null);
        match p {
            Param::Name(name) => {
                scope.insert(name.clone(), v);
            }
            Param::Destructure(sub) => bind(sub, vec![v], scope),
        }
    }
}

fn first(item: &Value) -> Value {
    item.as_array()
        .and_then(|a| a.first())
        .cloned()
        .unwrap_or(Value::Null)
}

fn second(item: &Value) -> Value {
    item.as_array()
        .and_then(|a| a.get(1))
        .cloned()
        .unwrap_or(Value::Null)
}

/// A bare `platform_version` call (chef-utils).
fn is_platform_version(n: &Node) -> bool {
    matches!(n, Node::Send(s) if s.recv.is_none() && s.args.is_empty() && s.method_name == "platform_version")
}

/// The text of a regular expression that matches only itself: one static part of letters, digits,
/// `_` and `-`, without flags.
fn literal_regexp(n: &Node) -> Option<String> {
    let Node::Regexp(re) = n else { return None };
    if re.options.is_some() {
        return None;
    }
    let [Node::Str(part)] = re.parts.as_slice() else {
        return None;
    };
    let text = String::from_utf8(part.value.raw.clone()).ok()?;
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    plain.then_some(text)
}
