//! The resources netgw manages on a device: VLANs and links (interfaces).
//!
//! Desired resources leave a property `None` when it is not managed; observed resources carry what the
//! device reported. Values are validated here with rules common to every vendor (ids 1..4094, no
//! control characters, a conservative character set that no CLI can misread); drivers add their own
//! limits (length, reserved names) before sending anything.

use crate::error::ModelError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A VLAN id, 1..=4094 (0 and 4095 are reserved by IEEE 802.1Q).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct VlanId(u16);

impl VlanId {
    pub fn new(id: i64) -> Result<Self, ModelError> {
        if (1..=4094).contains(&id) {
            Ok(VlanId(id as u16))
        } else {
            Err(ModelError::InvalidField {
                context: "vlan".into(),
                field: "id".into(),
                reason: format!("{id} is out of range (1..4094)"),
            })
        }
    }

    pub fn get(self) -> u16 {
        self.0
    }

    pub fn parse(s: &str) -> Result<Self, ModelError> {
        let t = s.trim();
        let n: i64 = t.parse().map_err(|_| ModelError::InvalidField {
            context: "vlan".into(),
            field: "id".into(),
            reason: format!("{s:?} is not a number"),
        })?;
        VlanId::new(n)
    }
}

impl fmt::Display for VlanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl<'de> Deserialize<'de> for VlanId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        match &v {
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => VlanId::new(i),
                None => Err(ModelError::InvalidField {
                    context: "vlan".into(),
                    field: "id".into(),
                    reason: format!("{n} is not an integer"),
                }),
            },
            serde_json::Value::String(s) => VlanId::parse(s),
            other => Err(ModelError::InvalidField {
                context: "vlan".into(),
                field: "id".into(),
                reason: format!("{other} is not a VLAN id"),
            }),
        }
        .map_err(serde::de::Error::custom)
    }
}

/// A set of VLAN ids, normalised: `1-10,21-30` and its expansion are the same set. A bitmap of the
/// 4,096 ids (512 bytes): a trunk's allowed list is often everything, 1-4094, which as a tree of ids
/// cost a fifth of an EOS converge's instructions to build and drop.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct VlanSet(Box<[u64; 64]>);

impl Default for VlanSet {
    fn default() -> Self {
        VlanSet(Box::new([0; 64]))
    }
}

impl fmt::Debug for VlanSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VlanSet({:?})", self.to_range_string())
    }
}

impl VlanSet {
    pub fn new() -> Self {
        VlanSet::default()
    }

    /// The full range 1..=4094 (what `switchport trunk allowed vlan all` means).
    pub fn all() -> Self {
        let mut s = VlanSet::new();
        s.insert_range(1, 4094);
        s
    }

    /// Add `a..=b` (both within 0..=4095).
    fn insert_range(&mut self, a: u16, b: u16) {
        let mut v = a;
        while v <= b {
            let (w, bit) = (usize::from(v / 64), v % 64);
            if bit == 0 && b - v >= 63 {
                self.0[w] = u64::MAX;
                v += 64;
            } else {
                self.0[w] |= 1 << bit;
                v += 1;
            }
            if v == 0 {
                break;
            }
        }
    }

    pub fn parse(s: &str) -> Result<Self, ModelError> {
        let bad = |reason: String| ModelError::InvalidField {
            context: "vlan list".into(),
            field: s.to_owned(),
            reason,
        };
        let t = s.trim();
        if t.eq_ignore_ascii_case("all") {
            return Ok(VlanSet::all());
        }
        if t.is_empty() || t.eq_ignore_ascii_case("none") {
            return Ok(VlanSet::new());
        }
        let mut set = VlanSet::new();
        for part in t.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(bad("has an empty element".into()));
            }
            match part.split_once('-') {
                Some((a, b)) => {
                    let a = VlanId::parse(a).map_err(|e| bad(e.to_string()))?.get();
                    let b = VlanId::parse(b).map_err(|e| bad(e.to_string()))?.get();
                    if a > b {
                        return Err(bad(format!("range {part} runs backwards")));
                    }
                    set.insert_range(a, b);
                }
                None => {
                    set.insert(VlanId::parse(part).map_err(|e| bad(e.to_string()))?);
                }
            }
        }
        Ok(set)
    }

    pub fn from_ids(ids: impl IntoIterator<Item = VlanId>) -> Self {
        let mut s = VlanSet::new();
        for id in ids {
            s.insert(id);
        }
        s
    }

    fn has(&self, v: u16) -> bool {
        self.0[usize::from(v / 64)] & (1 << (v % 64)) != 0
    }

    pub fn contains(&self, id: VlanId) -> bool {
        self.has(id.get())
    }

    pub fn insert(&mut self, id: VlanId) {
        let v = id.get();
        self.0[usize::from(v / 64)] |= 1 << (v % 64);
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The ids, low to high.
    pub fn ids(&self) -> impl Iterator<Item = VlanId> + '_ {
        self.0.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let bit = w.trailing_zeros();
                w &= w - 1;
                Some(VlanId(i as u16 * 64 + bit as u16))
            })
        })
    }

    pub fn union(&self, other: &VlanSet) -> VlanSet {
        let mut out = self.clone();
        for (a, b) in out.0.iter_mut().zip(other.0.iter()) {
            *a |= b;
        }
        out
    }

    pub fn difference(&self, other: &VlanSet) -> VlanSet {
        let mut out = self.clone();
        for (a, b) in out.0.iter_mut().zip(other.0.iter()) {
            *a &= !b;
        }
        out
    }

    pub fn is_superset(&self, other: &VlanSet) -> bool {
        self.0.iter().zip(other.0.iter()).all(|(a, b)| b & !a == 0)
    }

    /// Contiguous ranges, low to high. Found a run of set or clear bits at a time, not id by id: a
    /// trunk allowing 1-4094 is one range, and walking its 4,094 ids was 2% of an EOS converge.
    pub fn ranges(&self) -> Vec<(u16, u16)> {
        let mut out: Vec<(u16, u16)> = Vec::new();
        let mut start: Option<u16> = None;
        for (i, &w) in self.0.iter().enumerate() {
            let base = i as u16 * 64;
            let mut bit = 0u32;
            while bit < 64 {
                let rest = w >> bit;
                match start {
                    None if rest == 0 => break,
                    None => {
                        bit += rest.trailing_zeros();
                        start = Some(base + bit as u16);
                    }
                    Some(s) => {
                        // The bits shifted in from the top are clear, so a run ends by bit 64.
                        bit += rest.trailing_ones();
                        if bit < 64 {
                            out.push((s, base + bit as u16 - 1));
                            start = None;
                        }
                    }
                }
            }
        }
        if let Some(s) = start {
            out.push((s, self.0.len() as u16 * 64 - 1));
        }
        out
    }

    /// The compact form, `1-10,21-30`. Empty is `none`.
    pub fn to_range_string(&self) -> String {
        if self.is_empty() {
            return "none".into();
        }
        self.ranges()
            .iter()
            .map(|(a, b)| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The compact form split into chunks of at most `max_len` characters, breaking only between
    /// elements (IOS limits one command line; long lists go out as several `add` commands).
    pub fn to_range_chunks(&self, max_len: usize) -> Vec<String> {
        let mut chunks: Vec<String> = Vec::new();
        let mut cur = String::new();
        for (a, b) in self.ranges() {
            let el = if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            };
            if !cur.is_empty() && cur.len() + 1 + el.len() > max_len {
                chunks.push(std::mem::take(&mut cur));
            }
            if !cur.is_empty() {
                cur.push(',');
            }
            cur.push_str(&el);
        }
        if !cur.is_empty() {
            chunks.push(cur);
        }
        chunks
    }
}

impl fmt::Display for VlanSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_range_string())
    }
}

impl Serialize for VlanSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_range_string())
    }
}

impl<'de> Deserialize<'de> for VlanSet {
    /// Accepts `"1-10,20"`, `[1, 2, "5-7"]`, or a single number.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let r = match &v {
            serde_json::Value::String(s) => VlanSet::parse(s),
            serde_json::Value::Number(_) => serde_json::from_value::<VlanId>(v.clone())
                .map(|id| VlanSet::from_ids([id]))
                .map_err(|e| ModelError::InvalidField {
                    context: "vlan list".into(),
                    field: v.to_string(),
                    reason: e.to_string(),
                }),
            serde_json::Value::Array(items) => {
                let mut set = VlanSet::new();
                let mut err = None;
                for i in items {
                    let part = match i {
                        serde_json::Value::String(s) => VlanSet::parse(s),
                        serde_json::Value::Number(n) => match n.as_i64() {
                            Some(n) => VlanId::new(n).map(|id| VlanSet::from_ids([id])),
                            None => VlanSet::parse(&n.to_string()),
                        },
                        other => Err(ModelError::InvalidField {
                            context: "vlan list".into(),
                            field: other.to_string(),
                            reason: "must be a number or a range string".into(),
                        }),
                    };
                    match part {
                        Ok(p) => set = set.union(&p),
                        Err(e) => {
                            err = Some(e);
                            break;
                        }
                    }
                }
                match err {
                    Some(e) => Err(e),
                    None => Ok(set),
                }
            }
            serde_json::Value::Null => Ok(VlanSet::new()),
            other => Err(ModelError::InvalidField {
                context: "vlan list".into(),
                field: other.to_string(),
                reason: "must be a string like \"1-10,20\" or a list".into(),
            }),
        };
        r.map_err(serde::de::Error::custom)
    }
}

/// Whether a resource should exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Presence {
    #[default]
    Present,
    Absent,
}

/// Characters allowed in VLAN names on every platform netgw drives (and safe on every CLI).
pub fn validate_vlan_name(name: &str) -> Result<(), ModelError> {
    let bad = |reason: &str| ModelError::InvalidField {
        context: "vlan".into(),
        field: format!("name {name:?}"),
        reason: reason.into(),
    };
    if name.is_empty() {
        return Err(bad("must not be empty"));
    }
    if name.len() > 128 {
        return Err(bad("longer than 128 characters"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        let why = if c.is_control() {
            "contains a control character".to_owned()
        } else if !c.is_ascii() {
            format!("contains the non-ASCII character {c:?}")
        } else {
            format!("contains {c:?}; allowed are letters, digits, '_', '-', '.'")
        };
        return Err(bad(&why));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(bad("must start with a letter or a digit"));
    }
    Ok(())
}

/// Descriptions: printable ASCII without characters that CLIs interpret (`?` help, `|` pipes, `;`,
/// quotes, `!` comments, backslashes).
pub fn validate_description(context: &str, text: &str) -> Result<(), ModelError> {
    let bad = |reason: String| ModelError::InvalidField {
        context: context.into(),
        field: format!("description {text:?}"),
        reason,
    };
    if text.len() > 240 {
        return Err(bad("longer than 240 characters".into()));
    }
    if let Some(c) = text.chars().find(|c| {
        !(c.is_ascii_alphanumeric()
            || matches!(
                c,
                ' ' | '_'
                    | '-'
                    | '.'
                    | ','
                    | ':'
                    | '/'
                    | '@'
                    | '('
                    | ')'
                    | '+'
                    | '='
                    | '#'
                    | '['
                    | ']'
                    | '&'
                    | '*'
                    | '%'
                    | '<'
                    | '>'
            ))
    }) {
        let why = if c.is_control() {
            "contains a control character".to_owned()
        } else if !c.is_ascii() {
            format!("contains the non-ASCII character {c:?}")
        } else {
            format!("contains {c:?}, which a device CLI would interpret")
        };
        return Err(bad(why));
    }
    if text.starts_with(' ') || text.ends_with(' ') {
        return Err(bad("has leading or trailing spaces".into()));
    }
    Ok(())
}

/// Interface names: letters, digits and `/ . : -` only, 1..64 characters.
pub fn validate_interface_name(name: &str) -> Result<(), ModelError> {
    let bad = |reason: String| ModelError::InvalidField {
        context: "link".into(),
        field: format!("name {name:?}"),
        reason,
    };
    if name.is_empty() || name.len() > 64 {
        return Err(bad("must be 1 to 64 characters".into()));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | ':' | '-' | '_')))
    {
        let why = if c.is_control() {
            "contains a control character".to_owned()
        } else if !c.is_ascii() {
            format!("contains the non-ASCII character {c:?}")
        } else {
            format!("contains {c:?}; interface names have letters, digits and / . : - _ only")
        };
        return Err(bad(why));
    }
    Ok(())
}

/// Expand common interface abbreviations to the vendor-native long form (`Gi0/1` ->
/// `GigabitEthernet0/1`, `Et1` -> `Ethernet1`, `Po10` -> `Port-Channel10` style as given by `long`).
/// Names already long, and Junos names (`ge-0/0/0`), are returned unchanged.
pub fn normalize_interface_name(name: &str) -> String {
    // Longest prefixes first so `Te` does not catch `TenGigabitEthernet`.
    const TABLE: &[(&str, &str)] = &[
        ("hundredgigabitethernet", "HundredGigabitEthernet"),
        ("fortygigabitethernet", "FortyGigabitEthernet"),
        ("twentyfivegige", "TwentyFiveGigE"),
        ("tengigabitethernet", "TenGigabitEthernet"),
        ("gigabitethernet", "GigabitEthernet"),
        ("fastethernet", "FastEthernet"),
        ("port-channel", "Port-channel"),
        ("management", "Management"),
        ("ethernet", "Ethernet"),
        ("loopback", "Loopback"),
        ("vlan", "Vlan"),
        ("hu", "HundredGigabitEthernet"),
        ("fo", "FortyGigabitEthernet"),
        ("twe", "TwentyFiveGigE"),
        ("te", "TenGigabitEthernet"),
        ("gi", "GigabitEthernet"),
        ("ge", "GigabitEthernet"),
        ("fa", "FastEthernet"),
        ("po", "Port-channel"),
        ("ma", "Management"),
        ("mgmt", "mgmt"),
        ("eth", "Ethernet"),
        ("et", "Ethernet"),
        ("lo", "Loopback"),
        ("vl", "Vlan"),
    ];
    let lower = name.to_ascii_lowercase();
    // Junos-style names (`ge-0/0/0`, `xe-0/0/1.0`) have a dash right after the media type.
    if lower.len() > 3 && lower.as_bytes().get(2) == Some(&b'-') {
        return name.to_owned();
    }
    let split = lower
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(lower.len());
    let prefix = lower[..split].trim_end_matches([' ', '-']);
    for (short, long) in TABLE {
        if prefix == *short {
            return format!("{long}{}", &name[split..]);
        }
    }
    name.to_owned()
}

/// Whether two interface names are one interface (`Po10`, `Port-Channel10` and `port-channel10` are).
pub fn same_interface(a: &str, b: &str) -> bool {
    normalize_interface_name(a).eq_ignore_ascii_case(&normalize_interface_name(b))
}

/// A VLAN resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vlan {
    pub id: VlanId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub state: Presence,
}

impl Vlan {
    pub fn new(id: VlanId) -> Self {
        Vlan {
            id,
            name: None,
            description: None,
            state: Presence::Present,
        }
    }

    pub fn validate(&self) -> Result<(), ModelError> {
        if let Some(n) = &self.name {
            validate_vlan_name(n)?;
        }
        if let Some(d) = &self.description {
            validate_description(&format!("vlan {}", self.id), d)?;
        }
        Ok(())
    }
}

/// What a link does at layer 2/3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkMode {
    Access,
    Trunk,
    Routed,
}

impl fmt::Display for LinkMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LinkMode::Access => "access",
            LinkMode::Trunk => "trunk",
            LinkMode::Routed => "routed",
        })
    }
}

/// A link (interface) resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<LinkMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_vlan: Option<VlanId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trunk_vlans: Option<VlanSet>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_vlan: Option<VlanId>,
}

impl Link {
    pub fn new(name: impl Into<String>) -> Self {
        Link {
            name: name.into(),
            description: None,
            enabled: None,
            mtu: None,
            mode: None,
            access_vlan: None,
            trunk_vlans: None,
            native_vlan: None,
        }
    }

    /// An observed link as a valid desired link: only the VLAN settings its mode uses (EOS, for one,
    /// reports an access port's trunk allowed list and native VLAN too).
    pub fn as_desired(&self) -> Link {
        let mut d = self.clone();
        match d.mode {
            Some(LinkMode::Access) => {
                d.trunk_vlans = None;
                d.native_vlan = None;
            }
            Some(LinkMode::Trunk) => d.access_vlan = None,
            Some(LinkMode::Routed) => {
                d.access_vlan = None;
                d.trunk_vlans = None;
                d.native_vlan = None;
            }
            None => {}
        }
        d
    }

    pub fn validate(&self) -> Result<(), ModelError> {
        validate_interface_name(&self.name)?;
        if let Some(d) = &self.description {
            validate_description(&format!("link {}", self.name), d)?;
        }
        if let Some(m) = self.mtu
            && !(68..=65535).contains(&m)
        {
            return Err(ModelError::InvalidField {
                context: format!("link {}", self.name),
                field: "mtu".into(),
                reason: format!("{m} is out of range (68..65535)"),
            });
        }

        let conflict = |reason: &str| ModelError::InvalidField {
            context: format!("link {}", self.name),
            field: "mode".into(),
            reason: reason.into(),
        };
        match self.mode {
            Some(LinkMode::Access) if self.trunk_vlans.is_some() || self.native_vlan.is_some() => {
                Err(conflict(
                    "an access port cannot have trunk_vlans or native_vlan",
                ))
            }
            Some(LinkMode::Trunk) if self.access_vlan.is_some() => {
                Err(conflict("a trunk cannot have access_vlan"))
            }
            Some(LinkMode::Routed)
                if self.access_vlan.is_some()
                    || self.trunk_vlans.is_some()
                    || self.native_vlan.is_some() =>
            {
                Err(conflict("a routed port has no VLANs"))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ranges_are_the_runs_of_ids_on_every_word_boundary() {
        // Id by id, as ranges() was before it went a run at a time.
        fn by_ids(set: &VlanSet) -> Vec<(u16, u16)> {
            let mut out: Vec<(u16, u16)> = Vec::new();
            for v in set.ids().map(VlanId::get) {
                match out.last_mut() {
                    Some((_, hi)) if *hi + 1 == v => *hi = v,
                    _ => out.push((v, v)),
                }
            }
            out
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut sets = vec![
            VlanSet::new(),
            VlanSet::all(),
            VlanSet::parse("1,63-65,127-128,4094").unwrap(),
        ];
        for _ in 0..500 {
            let mut set = VlanSet::new();
            for _ in 0..(next() % 12) {
                let a = (next() % 4094 + 1) as u16;
                let b = (a + (next() % 200) as u16).min(4094);
                set.insert_range(a, b);
            }
            sets.push(set);
        }
        for set in &sets {
            assert_eq!(set.ranges(), by_ids(set), "{}", set.to_range_string());
        }
    }

    use super::*;
    use serde_json::json;

    /// The bitmap behaves as the set of ids it stands for: checked against a `BTreeSet` on generated
    /// sets (runs, singles, the edges 1 and 4094, word boundaries).
    #[test]
    fn vlan_set_matches_a_set_of_ids() {
        use std::collections::BTreeSet;
        let mut seed = 11u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        let make = |next: &mut dyn FnMut(u64) -> u64| {
            let mut model = BTreeSet::new();
            let mut text = Vec::new();
            for _ in 0..next(6) {
                let a = 1 + next(4094) as u16;
                let b = if next(2) == 0 {
                    a
                } else {
                    (a + next(300) as u16).min(4094)
                };
                model.extend(a..=b);
                text.push(if a == b {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                });
            }
            for edge in [1u16, 63, 64, 4094] {
                if next(3) == 0 {
                    model.insert(edge);
                    text.push(edge.to_string());
                }
            }
            let set = VlanSet::parse(&text.join(",")).unwrap();
            (set, model)
        };
        for _ in 0..2_000 {
            let (a, ma) = make(&mut next);
            let (b, mb) = make(&mut next);
            let ids = |s: &VlanSet| s.ids().map(VlanId::get).collect::<Vec<_>>();
            assert_eq!(ids(&a), ma.iter().copied().collect::<Vec<_>>());
            assert_eq!(a.len(), ma.len());
            assert_eq!(a.is_empty(), ma.is_empty());
            assert_eq!(
                ids(&a.union(&b)),
                ma.union(&mb).copied().collect::<Vec<_>>()
            );
            assert_eq!(
                ids(&a.difference(&b)),
                ma.difference(&mb).copied().collect::<Vec<_>>()
            );
            assert_eq!(a.is_superset(&b), ma.is_superset(&mb));
            assert_eq!(VlanSet::parse(&a.to_range_string()).unwrap(), a);
            assert_eq!(a == b, ma == mb);
            for v in [1u16, 2, 63, 64, 65, 4094] {
                assert_eq!(a.contains(VlanId(v)), ma.contains(&v));
            }
        }
        assert_eq!(VlanSet::all().len(), 4094);
        assert_eq!(VlanSet::all().to_range_string(), "1-4094");
        assert!(
            !VlanSet::all().contains(VlanId(4095)) && !VlanSet::all().ids().any(|v| v.get() == 0)
        );
        assert_eq!(
            format!("{:?}", VlanSet::parse("10,20-22").unwrap()),
            "VlanSet(\"10,20-22\")"
        );
    }

    #[test]
    fn vlan_ids_are_1_to_4094() {
        for bad in [0, 4095, 5000, -1] {
            let e = VlanId::new(bad).unwrap_err().to_string();
            assert!(e.contains(&bad.to_string()), "{e}");
        }
        assert_eq!(VlanId::new(1).unwrap().get(), 1);
        assert_eq!(VlanId::new(4094).unwrap().get(), 4094);
        assert!(serde_json::from_value::<VlanId>(json!("100")).is_ok());
        assert!(serde_json::from_value::<VlanId>(json!(1.5)).is_err());
        assert!(serde_json::from_value::<VlanId>(json!("1; reload")).is_err());
    }

    #[test]
    fn vlan_sets_normalise_ranges() {
        let a = VlanSet::parse("1-10,21-30").unwrap();
        let b = VlanSet::parse("1,2,3,4,5,6,7,8,9,10,21,22,23,24,25,26,27,28,29,30").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_range_string(), "1-10,21-30");
        assert_eq!(
            VlanSet::parse(" 5, 3-4 ,7").unwrap().to_range_string(),
            "3-5,7"
        );
        assert_eq!(VlanSet::parse("all").unwrap().len(), 4094);
        assert!(VlanSet::parse("none").unwrap().is_empty());
        assert!(VlanSet::parse("10-5").is_err());
        assert!(VlanSet::parse("1,,2").is_err());
        assert!(VlanSet::parse("1-4095").is_err());
        let from_list: VlanSet = serde_json::from_value(json!([1, "2-3", 10])).unwrap();
        assert_eq!(from_list.to_range_string(), "1-3,10");
        assert_eq!(serde_json::to_value(&from_list).unwrap(), json!("1-3,10"));
    }

    #[test]
    fn vlan_set_chunks_break_between_elements() {
        let s = VlanSet::parse("1,3,5,7,9,11,13,15,17,19,21").unwrap();
        let chunks = s.to_range_chunks(10);
        assert!(chunks.iter().all(|c| c.len() <= 10), "{chunks:?}");
        let rejoined = VlanSet::parse(&chunks.join(",")).unwrap();
        assert_eq!(rejoined, s);
    }

    #[test]
    fn names_reject_injection_and_control_characters() {
        for bad in [
            "a\nb",
            "a;b",
            "a|b",
            "web servers",
            "caf\u{e9}",
            "",
            "-x",
            "a\u{7}",
            "x?",
        ] {
            assert!(validate_vlan_name(bad).is_err(), "{bad:?}");
        }
        assert!(validate_vlan_name("web_servers-1.a").is_ok());
        for bad in [
            "up\nlink",
            "x | include",
            "a;b",
            "what?",
            "\u{1b}[2J",
            "ümlaut",
            "\"q\"",
        ] {
            assert!(validate_description("link x", bad).is_err(), "{bad:?}");
        }
        assert!(validate_description("link x", "uplink to spine1 (Et49/1)").is_ok());
        for bad in ["Gi0/1\n", "Gi0/1;", "eth 0", "x|y", ""] {
            assert!(validate_interface_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn interface_names_normalise() {
        assert_eq!(normalize_interface_name("Gi0/1"), "GigabitEthernet0/1");
        assert_eq!(
            normalize_interface_name("gi1/0/24"),
            "GigabitEthernet1/0/24"
        );
        assert_eq!(normalize_interface_name("Te1/1"), "TenGigabitEthernet1/1");
        assert_eq!(normalize_interface_name("Et1"), "Ethernet1");
        assert_eq!(normalize_interface_name("Eth1/1"), "Ethernet1/1");
        assert_eq!(normalize_interface_name("Po10"), "Port-channel10");
        assert_eq!(
            normalize_interface_name("GigabitEthernet0/1"),
            "GigabitEthernet0/1"
        );
        assert_eq!(normalize_interface_name("ge-0/0/1"), "ge-0/0/1");
        assert_eq!(normalize_interface_name("xe-0/0/1.0"), "xe-0/0/1.0");
        assert_eq!(normalize_interface_name("Ethernet1"), "Ethernet1");
        assert_eq!(normalize_interface_name("1.1"), "1.1");
    }

    #[test]
    fn link_validation_catches_conflicts() {
        let mut l: Link = serde_json::from_value(
            json!({"name": "Ethernet1", "mode": "access", "access_vlan": 10}),
        )
        .unwrap();
        assert!(l.validate().is_ok());
        l.trunk_vlans = Some(VlanSet::parse("1-2").unwrap());
        assert!(l.validate().is_err());
        assert!(
            serde_json::from_value::<Link>(json!({"name": "e1", "vlan": 3})).is_err(),
            "unknown fields rejected"
        );
        let l: Link = serde_json::from_value(json!({"name": "e1", "mtu": 20})).unwrap();
        assert!(l.validate().is_err());
    }
}
