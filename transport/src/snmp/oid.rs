//! Owned SNMP data: object identifiers, values and varbinds.
//!
//! snmp2 hands out values that borrow its receive buffer; everything that leaves the client is converted to
//! these owned types first, so parsers are plain functions over `&[Varbind]` and tests can build varbinds
//! from recordings without a socket.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// An object identifier as its arcs (RFC 2578 §7.1.3: at most 128 arcs, each at most 2^32-1).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Oid(Vec<u32>);

/// RFC 2578 §3.5: an OID has at most 128 sub-identifiers.
pub const MAX_OID_ARCS: usize = 128;

/// Why a dotted OID string is not an OID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid OID {text:?}: {reason}")]
pub struct OidParseError {
    pub text: String,
    pub reason: &'static str,
}

impl Oid {
    pub fn new(arcs: Vec<u32>) -> Self {
        Oid(arcs)
    }

    pub fn arcs(&self) -> &[u32] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// True when `self` is `prefix` or lies below it.
    pub fn starts_with(&self, prefix: &Oid) -> bool {
        self.0.starts_with(&prefix.0)
    }

    /// The arcs after `prefix` (the table index of a column instance), if `self` lies below `prefix`.
    pub fn suffix_after(&self, prefix: &Oid) -> Option<&[u32]> {
        self.0.strip_prefix(prefix.0.as_slice())
    }

    /// `self` followed by `arcs`.
    pub fn child(&self, arcs: &[u32]) -> Oid {
        let mut v = self.0.clone();
        v.extend_from_slice(arcs);
        Oid(v)
    }

    /// Lexicographic order of OIDs (the order GETNEXT walks in, RFC 3416 §4.2.2).
    pub fn cmp_lex(&self, other: &Oid) -> Ordering {
        self.0.cmp(&other.0)
    }

    pub(crate) fn to_snmp2(&self) -> Result<snmp2::Oid<'static>, OidParseError> {
        let arcs: Vec<u64> = self.0.iter().map(|a| u64::from(*a)).collect();
        snmp2::Oid::from(&arcs).map_err(|_| OidParseError {
            text: self.to_string(),
            reason: "not encodable (first arc must be 0, 1 or 2 and the second below 40 unless the first is 2)",
        })
    }

    pub(crate) fn from_snmp2(oid: &snmp2::Oid<'_>) -> Option<Oid> {
        let arcs = oid.iter()?;
        let mut out = Vec::with_capacity(arcs.len());
        for arc in arcs {
            out.push(u32::try_from(arc).ok()?);
        }
        if out.len() > MAX_OID_ARCS {
            return None;
        }
        Some(Oid(out))
    }
}

impl fmt::Display for Oid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for arc in &self.0 {
            if !first {
                f.write_str(".")?;
            }
            write!(f, "{arc}")?;
            first = false;
        }
        Ok(())
    }
}

impl FromStr for Oid {
    type Err = OidParseError;

    /// Dotted decimal, with or without a leading dot (`1.3.6.1.2.1.1.1.0`, `.1.3.6.1`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason| OidParseError {
            text: s.to_owned(),
            reason,
        };
        let body = s.trim().strip_prefix('.').unwrap_or(s.trim());
        if body.is_empty() {
            return Err(err("empty"));
        }
        let mut arcs = Vec::new();
        for part in body.split('.') {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err("arcs must be decimal numbers separated by dots"));
            }
            arcs.push(
                part.parse::<u32>()
                    .map_err(|_| err("arc above 4294967295"))?,
            );
        }
        if arcs.len() > MAX_OID_ARCS {
            return Err(err("more than 128 arcs"));
        }
        Ok(Oid(arcs))
    }
}

impl From<&[u32]> for Oid {
    fn from(arcs: &[u32]) -> Self {
        Oid(arcs.to_vec())
    }
}

impl<const N: usize> From<[u32; N]> for Oid {
    fn from(arcs: [u32; N]) -> Self {
        Oid(arcs.to_vec())
    }
}

/// An SNMP value (RFC 3416 §3 ObjectSyntax plus the three exception values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnmpValue {
    Integer(i64),
    OctetString(Vec<u8>),
    ObjectId(Oid),
    IpAddress([u8; 4]),
    Counter32(u32),
    /// Gauge32 and Unsigned32 share a tag (RFC 2578 §7.1.7).
    Gauge32(u32),
    TimeTicks(u32),
    Opaque(Vec<u8>),
    Counter64(u64),
    Null,
    NoSuchObject,
    NoSuchInstance,
    EndOfMibView,
}

impl SnmpValue {
    /// True for noSuchObject, noSuchInstance and endOfMibView (RFC 3416 §4.2.1): no value here.
    pub fn is_exception(&self) -> bool {
        matches!(
            self,
            SnmpValue::NoSuchObject | SnmpValue::NoSuchInstance | SnmpValue::EndOfMibView
        )
    }

    /// Any integer-like value as i64 (Integer, Counter32, Gauge32, TimeTicks; Counter64 when it fits).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            SnmpValue::Integer(v) => Some(*v),
            SnmpValue::Counter32(v) | SnmpValue::Gauge32(v) | SnmpValue::TimeTicks(v) => {
                Some(i64::from(*v))
            }
            SnmpValue::Counter64(v) => i64::try_from(*v).ok(),
            _ => None,
        }
    }

    /// Any non-negative integer-like value as u64.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            SnmpValue::Counter64(v) => Some(*v),
            other => other.as_i64().and_then(|v| u64::try_from(v).ok()),
        }
    }

    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            SnmpValue::OctetString(b) | SnmpValue::Opaque(b) => Some(b),
            _ => None,
        }
    }

    /// An OCTET STRING as text: UTF-8 (lossy), with trailing NULs and surrounding whitespace removed
    /// (some agents NUL-pad DisplayStrings).
    pub fn as_text(&self) -> Option<String> {
        let b = self.as_bytes()?;
        let trimmed = match b.iter().rposition(|c| *c != 0) {
            Some(end) => &b[..=end],
            None => &[][..],
        };
        Some(String::from_utf8_lossy(trimmed).trim().to_owned())
    }

    pub fn as_oid(&self) -> Option<&Oid> {
        match self {
            SnmpValue::ObjectId(o) => Some(o),
            _ => None,
        }
    }

    pub(crate) fn from_snmp2(value: &snmp2::Value<'_>) -> Option<SnmpValue> {
        use snmp2::Value as V;
        Some(match value {
            V::Integer(v) => SnmpValue::Integer(*v),
            V::OctetString(b) => SnmpValue::OctetString(b.to_vec()),
            V::ObjectIdentifier(o) => SnmpValue::ObjectId(Oid::from_snmp2(o)?),
            V::IpAddress(a) => SnmpValue::IpAddress(*a),
            V::Counter32(v) => SnmpValue::Counter32(*v),
            V::Unsigned32(v) => SnmpValue::Gauge32(*v),
            V::Timeticks(v) => SnmpValue::TimeTicks(*v),
            V::Opaque(b) => SnmpValue::Opaque(b.to_vec()),
            V::Counter64(v) => SnmpValue::Counter64(*v),
            V::Null => SnmpValue::Null,
            V::NoSuchObject => SnmpValue::NoSuchObject,
            V::NoSuchInstance => SnmpValue::NoSuchInstance,
            V::EndOfMibView => SnmpValue::EndOfMibView,
            // Booleans, sequences and PDU types never appear as a varbind value in a response.
            _ => return None,
        })
    }
}

/// One variable binding: an OID and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Varbind {
    pub oid: Oid,
    pub value: SnmpValue,
}

impl Varbind {
    pub fn new(oid: Oid, value: SnmpValue) -> Self {
        Varbind { oid, value }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oid_parse_display_round_trip() {
        let o: Oid = "1.3.6.1.2.1.1.1.0".parse().unwrap();
        assert_eq!(o.arcs(), &[1, 3, 6, 1, 2, 1, 1, 1, 0]);
        assert_eq!(o.to_string(), "1.3.6.1.2.1.1.1.0");
        assert_eq!(".1.3.6".parse::<Oid>().unwrap().arcs(), &[1, 3, 6]);
        assert!("".parse::<Oid>().is_err());
        assert!("1..3".parse::<Oid>().is_err());
        assert!("1.3.x".parse::<Oid>().is_err());
        assert!("1.3.4294967296".parse::<Oid>().is_err());
        assert!("1.3.4294967295".parse::<Oid>().is_ok());
    }

    #[test]
    fn oid_order_prefix_suffix() {
        let a: Oid = "1.3.6.1.2.1.2.2.1.2".parse().unwrap();
        let b = a.child(&[10101]);
        assert!(b.starts_with(&a));
        assert!(!a.starts_with(&b));
        assert_eq!(b.suffix_after(&a), Some(&[10101u32][..]));
        assert!(a < b);
        let c: Oid = "1.3.6.1.2.1.2.2.1.3".parse().unwrap();
        assert!(b < c);
    }

    #[test]
    fn oid_snmp2_round_trip() {
        let a: Oid = "1.0.8802.1.1.2.1.4.1.1.9.0.47.2".parse().unwrap();
        let b = Oid::from_snmp2(&a.to_snmp2().unwrap()).unwrap();
        assert_eq!(a, b);
        let big: Oid = "1.3.6.1.4.1.4294967295".parse().unwrap();
        assert_eq!(Oid::from_snmp2(&big.to_snmp2().unwrap()).unwrap(), big);
        assert!(Oid::from([7u32, 1]).to_snmp2().is_err());
    }

    #[test]
    fn value_text_trims_nul_padding() {
        let v = SnmpValue::OctetString(b"sw1\0\0".to_vec());
        assert_eq!(v.as_text().as_deref(), Some("sw1"));
        assert_eq!(
            SnmpValue::OctetString(vec![0, 0]).as_text().as_deref(),
            Some("")
        );
        assert_eq!(SnmpValue::Integer(3).as_text(), None);
        assert_eq!(SnmpValue::Gauge32(7).as_u64(), Some(7));
        assert_eq!(SnmpValue::Integer(-1).as_u64(), None);
    }
}
