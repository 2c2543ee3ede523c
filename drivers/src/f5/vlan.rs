//! VLANs: `GET /mgmt/tm/net/vlan?expandSubcollections=true` parsed into netgw's model, and the
//! request bodies that create or change one.
//!
//! Mapping (netgw `Vlan` <- BIG-IP `net vlan`):
//! * `id` = the VLAN's `tag` (802.1Q id). BIG-IP identifies a VLAN by its *name*; netgw by its id. A
//!   VLAN without a tag, or a second VLAN with a tag already seen, is left out of the model (logged).
//! * `name` = the object name (`External`), without its partition. netgw manages VLANs in `/Common`
//!   (where network objects live); a desired name may be written `/Common/web` and means `web`, any
//!   other partition is refused by [`validate_vlan`]. VLANs observed in other partitions keep their
//!   full path for requests.
//! * `description` = `description`.
//! * Members: the `interfaces` subcollection (`interfacesReference.items` when expanded, or the answer
//!   of `GET .../vlan/~Common~X/interfaces`): each item has a `name` (an interface such as `1.1`, or a
//!   trunk) and `tagged: true` or `untagged: true`. f5-common-python treats the two as mutually
//!   exclusive; the only samples (F5 MOCKs) say `tagged: false`, read here as untagged, and so is an item
//!   with neither (BIG-IP's default for a new member is untagged).
//!
//! A rename is a delete and a create with the same tag in one transaction (BIG-IP object names cannot
//! be changed through iControl REST), carrying over the VLAN's other settings; the device refuses it
//! (and the whole transaction) while something such as a self IP still refers to the old name.

use netgw_models::resource::{Vlan, VlanId};
use serde_json::{Map, Value, json};

/// The partition netgw creates VLANs in.
pub const PARTITION: &str = "Common";
pub const VLAN_COLLECTION: &str = "/mgmt/tm/net/vlan";
/// BIG-IP object names: this many characters at most (conservative; see [`validate_f5_name`]).
pub const MAX_NAME_LEN: usize = 64;

/// One VLAN member.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct VlanMember {
    /// An interface (`1.1`) or trunk (`lag1`) name.
    pub name: String,
    pub tagged: bool,
}

/// One `net vlan` object as the device reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct F5Vlan {
    pub name: String,
    pub partition: Option<String>,
    /// `/Common/External`.
    pub full_path: String,
    pub tag: Option<u16>,
    pub description: Option<String>,
    /// `None` when the answer did not include the interfaces subcollection.
    pub members: Option<Vec<VlanMember>>,
    /// The object as received (for a rename, which re-creates it with the same settings).
    pub raw: Value,
}

impl F5Vlan {
    /// The REST path of this object: `/mgmt/tm/net/vlan/~Common~External`.
    pub fn path(&self) -> String {
        vlan_path(&self.full_path)
    }
}

/// `/Common/web` -> `/mgmt/tm/net/vlan/~Common~web`; a bare `web` is taken as `/Common/web`.
pub fn vlan_path(full_path: &str) -> String {
    let fp = if full_path.starts_with('/') {
        full_path.to_owned()
    } else {
        format!("/{PARTITION}/{full_path}")
    };
    format!("{VLAN_COLLECTION}/{}", fp.replace('/', "~"))
}

/// The name netgw uses for a desired VLAN name: `/Common/web` -> `web`.
pub fn local_name(name: &str) -> &str {
    name.strip_prefix("/Common/").unwrap_or(name)
}

fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// Parse one interfaces-subcollection item.
fn parse_member(item: &Value) -> Option<VlanMember> {
    let name = text(item, "name")?;
    let tagged = item.get("tagged").and_then(Value::as_bool) == Some(true)
        && item.get("untagged").and_then(Value::as_bool) != Some(true);
    Some(VlanMember { name, tagged })
}

/// `GET /mgmt/tm/net/vlan/~Common~X/interfaces`: a collection `{"items": [...]}`, or a bare array
/// (as F5's own test stubs hold it). Items without a name are skipped.
pub fn parse_vlan_interfaces(v: &Value) -> Vec<VlanMember> {
    let items = match v {
        Value::Array(a) => Some(a),
        other => other.get("items").and_then(Value::as_array),
    };
    let mut out: Vec<VlanMember> = items
        .into_iter()
        .flatten()
        .filter_map(parse_member)
        .collect();
    out.sort();
    out
}

/// `GET /mgmt/tm/net/vlan` (optionally with `expandSubcollections=true`).
pub fn parse_vlans(v: &Value) -> Vec<F5Vlan> {
    let mut out = Vec::new();
    for item in super::items(v) {
        let Some(name) = text(item, "name") else {
            continue;
        };
        let partition = text(item, "partition");
        let full_path = text(item, "fullPath").unwrap_or_else(|| match &partition {
            Some(p) => format!("/{p}/{name}"),
            None => format!("/{PARTITION}/{name}"),
        });
        let tag = item
            .get("tag")
            .and_then(Value::as_u64)
            .and_then(|t| u16::try_from(t).ok());
        let members = item
            .get("interfacesReference")
            .and_then(|r| r.get("items"))
            .map(parse_vlan_interfaces)
            // A non-expanded `interfaces` array (some releases inline it).
            .or_else(|| {
                item.get("interfaces")
                    .filter(|i| i.is_array())
                    .map(parse_vlan_interfaces)
            });
        out.push(F5Vlan {
            name,
            partition,
            full_path,
            tag,
            description: text(item, "description"),
            members,
            raw: item.clone(),
        });
    }
    out
}

/// The VLANs in netgw's model, by id. Untagged objects and duplicate tags are left out.
pub fn to_model(vlans: &[F5Vlan]) -> Vec<Vlan> {
    let mut out: Vec<Vlan> = Vec::new();
    for v in vlans {
        let Some(id) = v.tag.and_then(|t| VlanId::new(i64::from(t)).ok()) else {
            tracing::debug!(vlan = %v.full_path, tag = ?v.tag, "VLAN without a usable tag left out");
            continue;
        };
        if out.iter().any(|o| o.id == id) {
            tracing::warn!(vlan = %v.full_path, tag = id.get(), "second VLAN with the same tag left out");
            continue;
        }
        out.push(Vlan {
            id,
            name: Some(v.name.clone()),
            description: v.description.clone(),
            state: Default::default(),
        });
    }
    out.sort_by_key(|v| v.id);
    out
}

/// BIG-IP object name rules as netgw applies them: a letter first, then letters, digits, `_`, `-`, `.`;
/// at most [`MAX_NAME_LEN`] characters. (tmsh accepts more, e.g. a leading `_`; this is the set that is
/// safe in a REST path and in every tmsh context.)
pub fn validate_f5_name(name: &str) -> Result<(), NameUnfit> {
    if name.is_empty() {
        return Err(NameUnfit::Empty);
    }
    if name.len() > MAX_NAME_LEN {
        return Err(NameUnfit::TooLong(name.len()));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(NameUnfit::FirstNotLetter(name.to_owned()));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(NameUnfit::Character(name.to_owned(), c));
    }
    Ok(())
}

/// A name BIG-IP does not take for an object (a VLAN, here).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameUnfit {
    #[error("a BIG-IP object name must not be empty")]
    Empty,
    #[error("BIG-IP object names are at most {MAX_NAME_LEN} characters ({0} given)")]
    TooLong(usize),
    #[error("BIG-IP object name {0:?} must start with a letter")]
    FirstNotLetter(String),
    #[error("BIG-IP object name {0:?} contains {1:?}; allowed are letters, digits, '_', '-', '.'")]
    Character(String, char),
    #[error("VLAN name {0:?}: netgw manages VLANs in partition /Common only")]
    Partition(String),
}

/// Vendor limits on a desired VLAN: its name (partition prefix `/Common/` allowed, others refused).
pub fn validate_vlan(v: &Vlan) -> Result<(), NameUnfit> {
    if let Some(n) = &v.name {
        if n.starts_with('/') && !n.starts_with("/Common/") {
            return Err(NameUnfit::Partition(n.clone()));
        }
        validate_f5_name(local_name(n))?;
    }
    Ok(())
}

/// A member as BIG-IP takes it in a `POST`/`PATCH` body.
pub fn render_member(m: &VlanMember) -> Value {
    if m.tagged {
        json!({"name": m.name, "tagged": true})
    } else {
        json!({"name": m.name, "untagged": true})
    }
}

pub fn render_members(members: &[VlanMember]) -> Value {
    Value::Array(members.iter().map(render_member).collect())
}

/// The body of `POST /mgmt/tm/net/vlan` for a new VLAN.
pub fn render_create(
    name: &str,
    tag: VlanId,
    description: Option<&str>,
    members: &[VlanMember],
) -> Value {
    let mut o = Map::new();
    o.insert("name".into(), json!(local_name(name)));
    o.insert("partition".into(), json!(PARTITION));
    o.insert("tag".into(), json!(tag.get()));
    if let Some(d) = description {
        o.insert("description".into(), json!(d));
    }
    o.insert("interfaces".into(), render_members(members));
    Value::Object(o)
}

/// Read-only or identity properties that a create must not carry over from an observed object.
const NOT_COPIED: &[&str] = [
    "kind",
    "name",
    "fullPath",
    "generation",
    "selfLink",
    "interfacesReference",
    "interfaces",
    "ifIndex",
    "partition",
]
.as_slice();

/// The body that re-creates `old` under a new name (a rename): its settings, new name, members.
pub fn render_recreate(
    old: &F5Vlan,
    new_name: &str,
    description: Option<&str>,
    members: &[VlanMember],
) -> Value {
    let mut o: Map<String, Value> = old
        .raw
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| !NOT_COPIED.contains(&k.as_str()) && k.as_str() != "description")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    o.insert("name".into(), json!(local_name(new_name)));
    o.insert(
        "partition".into(),
        json!(old.partition.as_deref().unwrap_or(PARTITION)),
    );
    if let Some(d) = description {
        o.insert("description".into(), json!(d));
    }
    o.insert("interfaces".into(), render_members(members));
    Value::Object(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: i64) -> VlanId {
        VlanId::new(n).unwrap()
    }

    #[test]
    fn f5_vlan_parse_expanded_and_plain() {
        let v = json!({"items": [
            {"name": "External", "partition": "Common", "fullPath": "/Common/External", "tag": 4094,
             "interfacesReference": {"link": "x", "isSubcollection": true, "items": [
                {"name": "1.2", "tagged": true}, {"name": "1.1", "untagged": true}]}},
            {"name": "HA", "partition": "Common", "fullPath": "/Common/HA", "tag": 4093, "description": "ha link",
             "interfacesReference": {"link": "x", "isSubcollection": true}},
            {"name": "untagged-obj"},
            {"tag": 5}
        ]});
        let vl = parse_vlans(&v);
        assert_eq!(vl.len(), 3);
        assert_eq!(
            vl[0].members.as_deref(),
            Some(
                &[
                    VlanMember {
                        name: "1.1".into(),
                        tagged: false
                    },
                    VlanMember {
                        name: "1.2".into(),
                        tagged: true
                    }
                ][..]
            )
        );
        assert_eq!(vl[1].members, None);
        assert_eq!(vl[2].full_path, "/Common/untagged-obj");
        assert_eq!(vl[0].path(), "/mgmt/tm/net/vlan/~Common~External");
        let m = to_model(&vl);
        assert_eq!(m.len(), 2, "the untagged object is left out");
        assert_eq!(
            (
                m[0].id.get(),
                m[0].name.as_deref(),
                m[0].description.as_deref()
            ),
            (4093, Some("HA"), Some("ha link"))
        );
    }

    #[test]
    fn f5_vlan_duplicate_tags_keep_the_first() {
        let v = json!({"items": [{"name": "a", "tag": 10}, {"name": "b", "tag": 10}, {"name": "c", "tag": 0}]});
        let m = to_model(&parse_vlans(&v));
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].name.as_deref(), Some("a"));
    }

    #[test]
    fn f5_vlan_members_from_mock_shapes() {
        // F5's stubs (terraform, declarative onboarding) say `tagged: false` for an untagged member.
        let a = parse_vlan_interfaces(
            &json!([{"name": "1.1", "tagged": true}, {"name": "1.2", "tagged": false}]),
        );
        let b = parse_vlan_interfaces(
            &json!({"items": [{"name": "1.1", "tagged": true}, {"name": "1.2"}]}),
        );
        assert_eq!(a, b);
        assert!(a[0].tagged && !a[1].tagged);
        assert!(parse_vlan_interfaces(&json!({"kind": "x"})).is_empty());
    }

    #[test]
    fn f5_vlan_names_and_partitions() {
        assert!(validate_f5_name("External_2.v-1").is_ok());
        assert!(validate_f5_name("1vlan").is_err());
        assert!(validate_f5_name("has space").is_err());
        assert!(validate_f5_name(&"a".repeat(65)).is_err());
        assert!(validate_f5_name(&"a".repeat(64)).is_ok());
        let mut v = Vlan::new(id(10));
        v.name = Some("/Common/web".into());
        assert!(validate_vlan(&v).is_ok());
        v.name = Some("/Tenant/web".into());
        assert!(matches!(validate_vlan(&v), Err(NameUnfit::Partition(_))));
        v.name = Some("-web".into());
        assert!(validate_vlan(&v).is_err());
        assert_eq!(vlan_path("web"), "/mgmt/tm/net/vlan/~Common~web");
        assert_eq!(vlan_path("/Tenant/web"), "/mgmt/tm/net/vlan/~Tenant~web");
    }

    #[test]
    fn f5_vlan_render_create_and_recreate() {
        let members = [
            VlanMember {
                name: "1.1".into(),
                tagged: true,
            },
            VlanMember {
                name: "1.2".into(),
                tagged: false,
            },
        ];
        assert_eq!(
            render_create("/Common/web", id(10), Some("front"), &members),
            json!({"name": "web", "partition": "Common", "tag": 10, "description": "front",
                   "interfaces": [{"name": "1.1", "tagged": true}, {"name": "1.2", "untagged": true}]})
        );
        let old = &parse_vlans(
            &json!({"items": [{"kind": "tm:net:vlan:vlanstate", "name": "old", "partition": "Common",
            "fullPath": "/Common/old", "generation": 3, "selfLink": "x", "tag": 20, "mtu": 9000, "ifIndex": 5,
            "description": "d", "interfacesReference": {"link": "x"}}]}),
        )[0];
        assert_eq!(
            render_recreate(old, "new", None, &members[..1]),
            json!({"tag": 20, "mtu": 9000, "name": "new", "partition": "Common", "interfaces": [{"name": "1.1", "tagged": true}]})
        );
    }
}
