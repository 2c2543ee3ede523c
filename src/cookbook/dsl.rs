//! Roles and environments written in Chef's Ruby DSL (`roles/NAME.rb`, `environments/NAME.rb`), read
//! as `knife role from file` and `knife environment from file` read them (`Chef::Role#from_file`,
//! `Chef::Environment#from_file`): each top-level statement is one DSL call whose arguments the
//! cookbook evaluator computes; the result is the JSON object the server would store, parsed as a
//! `.json` file is. Anything else at the top level (a conditional, a loop, another method) is refused
//! with file and line: netgw never runs the file.

use super::CookbookError;
use super::ruby::{self, Program};
use lib_ruby_parser::Node;
use serde_json::{Map, Value, json};
use std::path::Path;

/// The DSL of `Chef::Role` and of `Chef::Environment` (with their aliases), and the JSON key each
/// call sets.
const ROLE_DSL: [(&str, &str); 10] = [
    ("name", "name"),
    ("description", "description"),
    ("run_list", "run_list"),
    ("recipes", "run_list"),
    ("env_run_lists", "env_run_lists"),
    ("env_run_list", "env_run_lists"),
    ("env_run_lists_add", "env_run_lists"),
    ("env_run_list_add", "env_run_lists"),
    ("default_attributes", "default_attributes"),
    ("override_attributes", "override_attributes"),
];
const ENVIRONMENT_DSL: [(&str, &str); 6] = [
    ("name", "name"),
    ("description", "description"),
    ("cookbook_versions", "cookbook_versions"),
    ("cookbook", "cookbook_versions"),
    ("default_attributes", "default_attributes"),
    ("override_attributes", "override_attributes"),
];

/// A role file's JSON object (`json_class` and `chef_type` as knife writes them).
pub fn role(path: &Path, text: &str) -> Result<Value, CookbookError> {
    document(
        path,
        text,
        &ROLE_DSL,
        json!({"json_class": "Chef::Role", "chef_type": "role"}),
    )
}

/// An environment file's JSON object.
pub fn environment(path: &Path, text: &str) -> Result<Value, CookbookError> {
    let base = json!({"json_class": "Chef::Environment", "chef_type": "environment"});
    document(path, text, &ENVIRONMENT_DSL, base)
}

fn document(
    path: &Path,
    text: &str,
    dsl: &[(&str, &str)],
    base: Value,
) -> Result<Value, CookbookError> {
    ruby::on_ruby_stack(path, || {
        let program = ruby::parse(path, text)?;
        let Value::Object(mut doc) = base else {
            return Ok(base);
        };
        for stmt in &program.statements {
            call(&program, stmt, dsl, &mut doc)?;
        }
        Ok(Value::Object(doc))
    })
}

fn call(
    p: &Program,
    stmt: &Node,
    dsl: &[(&str, &str)],
    doc: &mut Map<String, Value>,
) -> Result<(), CookbookError> {
    let known = || dsl.iter().map(|(m, _)| *m).collect::<Vec<_>>().join(", ");
    let Node::Send(s) = stmt else {
        return Err(p.error(
            stmt.expression(),
            ruby::describe(stmt),
            format!("only the DSL's calls ({}) are read from this file", known()),
        ));
    };
    let Some((method, key)) = dsl
        .iter()
        .find(|(m, _)| *m == s.method_name && s.recv.is_none())
    else {
        return Err(p.error(
            &s.expression_l,
            ruby::describe(stmt),
            format!("not a method of this DSL (it has {})", known()),
        ));
    };
    let args = s
        .args
        .iter()
        .map(|a| super::eval::expression(p, a))
        .collect::<Result<Vec<Value>, _>>()?;
    let bad = |why: &str| p.error(&s.expression_l, format!("`{method}`"), why.to_owned());
    let value = match (*method, args.as_slice()) {
        // Without arguments a reader (`Chef::Role#run_list`), which changes nothing.
        ("run_list" | "recipes", []) => return Ok(()),
        // `run_list "recipe[a]", "role[b]"` or `run_list ["recipe[a]"]`, flattened as
        // `Chef::RunList#reset!` flattens them.
        ("run_list" | "recipes", args) => flat(args),
        ("env_run_lists" | "env_run_list" | "env_run_lists_add" | "env_run_list_add", [v]) => {
            let Value::Object(lists) = v else {
                return Err(bad("takes a hash of environment names to run-lists"));
            };
            return env_run_lists(doc, lists, method.ends_with("_add")).map_err(|why| bad(&why));
        }
        // `cookbook "nginx", "~> 2.0"` adds one constraint (`Chef::Environment#cookbook` takes both).
        ("cookbook", [Value::String(cb), c @ Value::String(_)]) => {
            let mut versions = doc.get(*key).cloned().unwrap_or_else(|| json!({}));
            versions[cb.as_str()] = c.clone();
            versions
        }
        ("cookbook", _) => return Err(bad("takes a cookbook name and a version constraint")),
        (_, [one]) => one.clone(),
        _ => return Err(bad("takes one argument")),
    };
    if *key == "cookbook_versions" {
        check_versions(&value).map_err(|why| bad(&why))?;
    }
    doc.insert((*key).to_owned(), value);
    Ok(())
}

/// `Chef::Environment.validate_cookbook_versions`: a hash of version constraints
/// (`Chef::VersionConstraint`: `OP X.Y[.Z]`).
fn check_versions(v: &Value) -> Result<(), String> {
    let Value::Object(m) = v else {
        return Err("takes a hash of cookbook names to version constraints".into());
    };
    for (cb, c) in m {
        if c.as_str()
            .and_then(super::metadata::parse_constraint)
            .is_none()
        {
            return Err(format!(
                "{cb}: {c} is not a version constraint (`~> 1.2`, `>= 1.0.0`, `= 2.1.0`)"
            ));
        }
    }
    Ok(())
}

/// `Chef::RunList#reset!`'s `args.flatten`.
fn flat(args: &[Value]) -> Value {
    fn push(v: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Array(items) => items.iter().for_each(|i| push(i, out)),
            other => out.push(other.clone()),
        }
    }
    let mut out = Vec::new();
    args.iter().for_each(|a| push(a, &mut out));
    Value::Array(out)
}

/// `Chef::Role#env_run_lists` (`add`: `#env_run_lists_add`). The role's `run_list` is its
/// `_default` entry in Chef, so a `_default` here replaces it; `env_run_lists` replaces every other
/// entry and needs `_default`, as Chef does. Each value is `Array(v)`: nil is an empty list.
fn env_run_lists(
    doc: &mut Map<String, Value>,
    lists: &Map<String, Value>,
    add: bool,
) -> Result<(), String> {
    if !add && !lists.contains_key("_default") {
        return Err(
            "needs a \"_default\" key, as Chef requires (its run-list is the role's run_list)"
                .into(),
        );
    }
    let mut envs = match (add, doc.get("env_run_lists")) {
        (true, Some(Value::Object(m))) => m.clone(),
        _ => Map::new(),
    };
    for (env, list) in lists {
        let list = match list {
            Value::Null => Value::Array(Vec::new()),
            other => flat(std::slice::from_ref(other)),
        };
        if env == "_default" {
            doc.insert("run_list".into(), list);
        } else {
            envs.insert(env.clone(), list);
        }
    }
    doc.insert("env_run_lists".into(), Value::Object(envs));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_as_knife_reads_it() {
        let text = r#"
name "access"
description "access switches"
run_list "recipe[netdev::vlans]", "role[base]"
env_run_lists "_default" => "recipe[netdev::vlans]", "prod" => ["role[base]"], "lab" => nil
default_attributes(
  "netdev" => { "vlans" => { "100" => { "name" => "servers" } } }
)
override_attributes "netdev" => { "vlan_policy" => "merge" }
"#;
        let v = role(Path::new("roles/access.rb"), text).unwrap();
        assert_eq!(v["name"], "access");
        assert_eq!(v["run_list"], json!(["recipe[netdev::vlans]"]));
        assert_eq!(v["env_run_lists"]["prod"], json!(["role[base]"]));
        assert_eq!(v["env_run_lists"]["lab"], json!([]));
        assert!(v["env_run_lists"].get("_default").is_none());
        assert_eq!(
            v["default_attributes"]["netdev"]["vlans"]["100"]["name"],
            "servers"
        );
        assert_eq!(v["override_attributes"]["netdev"]["vlan_policy"], "merge");
        assert_eq!(v["json_class"], "Chef::Role");
    }

    #[test]
    fn an_environment_with_cookbook_constraints() {
        let text = "name 'prod'\ncookbook 'netdev', '~> 1.2'\ncookbook 'fabric', '>= 0.0.0'\ndefault_attributes({'a' => 1})\n";
        let v = environment(Path::new("environments/prod.rb"), text).unwrap();
        assert_eq!(
            v["cookbook_versions"],
            json!({"netdev": "~> 1.2", "fabric": ">= 0.0.0"})
        );
        assert_eq!(v["default_attributes"]["a"], 1);
    }

    #[test]
    fn anything_but_the_dsl_is_refused_with_file_and_line() {
        for (text, line, what) in [
            ("name 'x'\nrun_lst 'recipe[a]'\n", 2, "run_lst"),
            (
                "name 'x'\nif true\n  run_list 'a'\nend\n",
                2,
                "only the DSL's calls",
            ),
            ("name 'x'\nFile.read('/etc/passwd')\n", 2, "read"),
            ("name 'x'\ndefault_attributes 'a' => `id`\n", 2, ""),
            ("name 'x'\nenv_run_lists 'prod' => []\n", 2, "_default"),
        ] {
            let e = role(Path::new("roles/x.rb"), text).unwrap_err().to_string();
            assert!(
                e.contains(&format!("roles/x.rb:{line}")) || e.contains(&format!("line {line}")),
                "{text}: {e}"
            );
            assert!(e.contains(what), "{text}: {e}");
        }
    }
}
