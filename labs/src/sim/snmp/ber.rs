//! A small, strict BER codec for the subset of ASN.1 SNMP uses (X.690 §8; RFC 3416 §3, RFC 3412 §6,
//! RFC 3414 §2.4).
//!
//! Why not a crate: the workspace's SNMP client crate (snmp2) reads BER leniently (its varbind iterator
//! stops silently at the first malformed entry) and only builds *requests*; rasn-snmp would pull in a
//! second ASN.1 stack for a few hundred lines of work. An agent must not accept what a real agent would
//! drop, so this reader is strict:
//! - definite lengths only (X.690 §8.1.3.2; indefinite `0x80` is refused), at most 4 length octets;
//!   non-minimal long forms are accepted (net-snmp writes `0x82 0x00 0x2a` for short sequences);
//! - single-octet tags only (SNMP never uses the high-tag-number form);
//! - INTEGER 1..=8 content octets (RFC 3416 Integer32 and friends fit), unsigned types non-negative and
//!   within their width, OBJECT IDENTIFIER sub-identifiers minimal (no leading `0x80`, X.690 §8.19.2),
//!   each at most 2^32-1, at most 128 of them (RFC 2578 §3.5);
//! - every constructed value must be consumed exactly ([`Reader::finish`]).
//!
//! Nothing here panics on any input: every index is checked (the fuzz test feeds random bytes).
//!
//! Writing is forward: contents are built into a `Vec`, then wrapped with tag and minimal length.

use netgw_transport::snmp::{Oid, SnmpValue, Varbind};

/// Tags used by SNMP (X.690 universal, RFC 2578 §7.1 application, RFC 3416 §3 context).
pub mod tag {
    pub const INTEGER: u8 = 0x02;
    pub const OCTET_STRING: u8 = 0x04;
    pub const NULL: u8 = 0x05;
    pub const OBJECT_IDENTIFIER: u8 = 0x06;
    pub const SEQUENCE: u8 = 0x30;
    pub const IP_ADDRESS: u8 = 0x40;
    pub const COUNTER32: u8 = 0x41;
    pub const GAUGE32: u8 = 0x42;
    pub const TIMETICKS: u8 = 0x43;
    pub const OPAQUE: u8 = 0x44;
    pub const COUNTER64: u8 = 0x46;
    pub const NO_SUCH_OBJECT: u8 = 0x80;
    pub const NO_SUCH_INSTANCE: u8 = 0x81;
    pub const END_OF_MIB_VIEW: u8 = 0x82;
    pub const GET: u8 = 0xa0;
    pub const GET_NEXT: u8 = 0xa1;
    pub const RESPONSE: u8 = 0xa2;
    pub const SET: u8 = 0xa3;
    pub const GET_BULK: u8 = 0xa5;
    pub const INFORM: u8 = 0xa6;
    pub const TRAP_V2: u8 = 0xa7;
    pub const REPORT: u8 = 0xa8;
}

/// Why bytes are not valid SNMP BER.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BerError {
    #[error("truncated")]
    Truncated,
    #[error("expected tag {expected:#04x}, found {found:#04x}")]
    Tag { expected: u8, found: u8 },
    #[error("high-tag-number form is not used by SNMP")]
    HighTag,
    #[error("indefinite length (X.690 §8.1.3.6) is not allowed")]
    Indefinite,
    #[error("length of more than 4 octets")]
    LongLength,
    #[error("INTEGER of {0} octets")]
    IntegerSize(usize),
    #[error("value out of range")]
    Range,
    #[error("malformed OBJECT IDENTIFIER")]
    Oid,
    #[error("{0} trailing octet(s)")]
    Trailing(usize),
    #[error("unexpected value tag {0:#04x}")]
    ValueTag(u8),
    #[error("NULL or exception value with content")]
    NullContent,
}

/// A cursor over BER bytes. Slices it returns borrow the input, so a caller can locate a field inside the
/// whole message (RFC 3414 §6.3.2 authenticates the message with its auth parameters zeroed).
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn peek_tag(&self) -> Option<u8> {
        self.buf.first().copied()
    }

    /// The next tag-length-value: its tag and content.
    pub fn read_tlv(&mut self) -> Result<(u8, &'a [u8]), BerError> {
        let (&tag, rest) = self.buf.split_first().ok_or(BerError::Truncated)?;
        if tag & 0x1f == 0x1f {
            return Err(BerError::HighTag);
        }
        let (&first, mut rest) = rest.split_first().ok_or(BerError::Truncated)?;
        let len = match first {
            0x00..=0x7f => usize::from(first),
            0x80 => return Err(BerError::Indefinite),
            0x81..=0x84 => {
                let n = usize::from(first & 0x7f);
                if rest.len() < n {
                    return Err(BerError::Truncated);
                }
                let (octets, after) = rest.split_at(n);
                rest = after;
                octets
                    .iter()
                    .fold(0usize, |acc, b| (acc << 8) | usize::from(*b))
            }
            _ => return Err(BerError::LongLength),
        };
        if rest.len() < len {
            return Err(BerError::Truncated);
        }
        let (content, after) = rest.split_at(len);
        self.buf = after;
        Ok((tag, content))
    }

    /// The content of the next value, which must carry `expected`.
    pub fn expect(&mut self, expected: u8) -> Result<&'a [u8], BerError> {
        let (found, content) = self.read_tlv()?;
        if found != expected {
            return Err(BerError::Tag { expected, found });
        }
        Ok(content)
    }

    /// A constructed value with `expected` tag, as a reader over its content.
    pub fn nested(&mut self, expected: u8) -> Result<Reader<'a>, BerError> {
        self.expect(expected).map(Reader::new)
    }

    pub fn read_integer(&mut self) -> Result<i64, BerError> {
        decode_integer(self.expect(tag::INTEGER)?)
    }

    /// An INTEGER that must lie in `lo..=hi`.
    pub fn read_integer_in(&mut self, lo: i64, hi: i64) -> Result<i64, BerError> {
        let v = self.read_integer()?;
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(BerError::Range)
        }
    }

    pub fn read_octets(&mut self) -> Result<&'a [u8], BerError> {
        self.expect(tag::OCTET_STRING)
    }

    pub fn read_oid(&mut self) -> Result<Oid, BerError> {
        decode_oid(self.expect(tag::OBJECT_IDENTIFIER)?)
    }

    /// Any SNMP value (ObjectSyntax, NULL or an exception).
    pub fn read_value(&mut self) -> Result<SnmpValue, BerError> {
        let (t, c) = self.read_tlv()?;
        decode_value(t, c)
    }

    /// Every octet must have been consumed.
    pub fn finish(&self) -> Result<(), BerError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(BerError::Trailing(self.buf.len()))
        }
    }
}

/// Two's-complement INTEGER content (X.690 §8.3).
pub fn decode_integer(c: &[u8]) -> Result<i64, BerError> {
    if c.is_empty() || c.len() > 8 {
        return Err(BerError::IntegerSize(c.len()));
    }
    let neg = c[0] & 0x80 != 0;
    let mut v: i64 = if neg { -1 } else { 0 };
    for b in c {
        v = (v << 8) | i64::from(*b);
    }
    Ok(v)
}

/// Unsigned content (Counter32, Gauge32, TimeTicks, Counter64): non-negative, at most `max`.
fn decode_unsigned(c: &[u8], max: u64) -> Result<u64, BerError> {
    if c.is_empty() || c.len() > 9 {
        return Err(BerError::IntegerSize(c.len()));
    }
    if c[0] & 0x80 != 0 || (c.len() == 9 && c[0] != 0) {
        return Err(BerError::Range);
    }
    let v = c.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
    if v > max {
        return Err(BerError::Range);
    }
    Ok(v)
}

/// OBJECT IDENTIFIER content (X.690 §8.19).
pub fn decode_oid(c: &[u8]) -> Result<Oid, BerError> {
    if c.is_empty() {
        return Err(BerError::Oid);
    }
    let mut subs: Vec<u64> = Vec::new();
    let mut cur: u64 = 0;
    let mut started = false;
    for &b in c {
        if !started && b == 0x80 {
            // A sub-identifier's first octet is never 0x80 (X.690 §8.19.2).
            return Err(BerError::Oid);
        }
        started = true;
        if cur > (u64::from(u32::MAX) + 80) >> 7 {
            return Err(BerError::Oid);
        }
        cur = (cur << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            subs.push(cur);
            cur = 0;
            started = false;
        }
    }
    if started {
        return Err(BerError::Oid);
    }
    let (&first, rest) = subs.split_first().ok_or(BerError::Oid)?;
    let (a, b) = match first {
        0..=39 => (0, first),
        40..=79 => (1, first - 40),
        _ => (2, first - 80),
    };
    let mut arcs = Vec::with_capacity(subs.len() + 1);
    arcs.push(a);
    arcs.push(u32::try_from(b).map_err(|_| BerError::Oid)?);
    for s in rest {
        arcs.push(u32::try_from(*s).map_err(|_| BerError::Oid)?);
    }
    if arcs.len() > 128 {
        return Err(BerError::Oid);
    }
    Ok(Oid::new(arcs))
}

fn empty(c: &[u8]) -> Result<(), BerError> {
    if c.is_empty() {
        Ok(())
    } else {
        Err(BerError::NullContent)
    }
}

/// A value by its tag.
pub fn decode_value(t: u8, c: &[u8]) -> Result<SnmpValue, BerError> {
    let u32max = u64::from(u32::MAX);
    let as_u32 = |v: u64| u32::try_from(v).map_err(|_| BerError::Range);
    Ok(match t {
        tag::INTEGER => {
            let v = decode_integer(c)?;
            if i32::try_from(v).is_err() {
                return Err(BerError::Range);
            }
            SnmpValue::Integer(v)
        }
        tag::OCTET_STRING => SnmpValue::OctetString(c.to_vec()),
        tag::NULL => {
            empty(c)?;
            SnmpValue::Null
        }
        tag::OBJECT_IDENTIFIER => SnmpValue::ObjectId(decode_oid(c)?),
        tag::IP_ADDRESS => {
            let a: [u8; 4] = c.try_into().map_err(|_| BerError::Range)?;
            SnmpValue::IpAddress(a)
        }
        tag::COUNTER32 => SnmpValue::Counter32(as_u32(decode_unsigned(c, u32max)?)?),
        tag::GAUGE32 => SnmpValue::Gauge32(as_u32(decode_unsigned(c, u32max)?)?),
        tag::TIMETICKS => SnmpValue::TimeTicks(as_u32(decode_unsigned(c, u32max)?)?),
        tag::OPAQUE => SnmpValue::Opaque(c.to_vec()),
        tag::COUNTER64 => SnmpValue::Counter64(decode_unsigned(c, u64::MAX)?),
        tag::NO_SUCH_OBJECT => {
            empty(c)?;
            SnmpValue::NoSuchObject
        }
        tag::NO_SUCH_INSTANCE => {
            empty(c)?;
            SnmpValue::NoSuchInstance
        }
        tag::END_OF_MIB_VIEW => {
            empty(c)?;
            SnmpValue::EndOfMibView
        }
        other => return Err(BerError::ValueTag(other)),
    })
}

/// VarBindList (RFC 3416 §3): SEQUENCE OF SEQUENCE { name, value }.
pub fn decode_varbinds(c: &[u8]) -> Result<Vec<Varbind>, BerError> {
    let mut r = Reader::new(c);
    let mut out = Vec::new();
    while !r.is_empty() {
        let mut vb = r.nested(tag::SEQUENCE)?;
        let oid = vb.read_oid()?;
        let value = vb.read_value()?;
        vb.finish()?;
        out.push(Varbind::new(oid, value));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------------
// Writing

/// Octets a tag and a length of `len` take (minimal length form).
pub fn header_len(len: usize) -> usize {
    1 + match len {
        0..=0x7f => 1,
        0x80..=0xff => 2,
        0x100..=0xffff => 3,
        0x1_0000..=0xff_ffff => 4,
        _ => 5,
    }
}

/// Append tag, minimal length and content.
pub fn write_tlv(out: &mut Vec<u8>, t: u8, content: &[u8]) {
    out.push(t);
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = (len as u64).to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (8 - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
}

/// A tag and content, as a new vector.
pub fn tlv(t: u8, content: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(header_len(content.len()) + content.len());
    write_tlv(&mut v, t, content);
    v
}

/// Minimal two's complement (X.690 §8.3.2).
pub fn write_integer(out: &mut Vec<u8>, t: u8, v: i64) {
    let bytes = v.to_be_bytes();
    let mut start = 0;
    while start < 7 {
        let (b, next) = (bytes[start], bytes[start + 1]);
        if (b == 0 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    write_tlv(out, t, &bytes[start..]);
}

/// Unsigned value with a leading zero octet when its top bit is set.
pub fn write_unsigned(out: &mut Vec<u8>, t: u8, v: u64) {
    let bytes = v.to_be_bytes();
    let skip = bytes.iter().take_while(|b| **b == 0).count().min(7);
    let mut c = Vec::with_capacity(9);
    if bytes[skip] & 0x80 != 0 {
        c.push(0);
    }
    c.extend_from_slice(&bytes[skip..]);
    write_tlv(out, t, &c);
}

/// OBJECT IDENTIFIER content; OIDs with fewer than two arcs or an invalid first pair encode as `0.0`.
pub fn oid_content(oid: &Oid) -> Vec<u8> {
    let arcs = oid.arcs();
    let (first, rest) = match arcs {
        [a @ 0..=1, b @ 0..=39, rest @ ..] => (u64::from(*a) * 40 + u64::from(*b), rest),
        [2, b, rest @ ..] => (80 + u64::from(*b), rest),
        _ => (0, &[][..]),
    };
    let mut c = Vec::with_capacity(arcs.len() + 4);
    let mut push = |mut v: u64| {
        let mut tmp = [0u8; 10];
        let mut i = tmp.len();
        loop {
            i -= 1;
            tmp[i] = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                break;
            }
        }
        for (k, b) in tmp[i..].iter().enumerate() {
            let more = i + k + 1 < tmp.len();
            c.push(if more { b | 0x80 } else { *b });
        }
    };
    push(first);
    for a in rest {
        push(u64::from(*a));
    }
    c
}

pub fn write_oid(out: &mut Vec<u8>, oid: &Oid) {
    write_tlv(out, tag::OBJECT_IDENTIFIER, &oid_content(oid));
}

pub fn write_value(out: &mut Vec<u8>, v: &SnmpValue) {
    match v {
        SnmpValue::Integer(i) => write_integer(out, tag::INTEGER, *i),
        SnmpValue::OctetString(b) => write_tlv(out, tag::OCTET_STRING, b),
        SnmpValue::ObjectId(o) => write_oid(out, o),
        SnmpValue::IpAddress(a) => write_tlv(out, tag::IP_ADDRESS, a),
        SnmpValue::Counter32(n) => write_unsigned(out, tag::COUNTER32, u64::from(*n)),
        SnmpValue::Gauge32(n) => write_unsigned(out, tag::GAUGE32, u64::from(*n)),
        SnmpValue::TimeTicks(n) => write_unsigned(out, tag::TIMETICKS, u64::from(*n)),
        SnmpValue::Opaque(b) => write_tlv(out, tag::OPAQUE, b),
        SnmpValue::Counter64(n) => write_unsigned(out, tag::COUNTER64, *n),
        SnmpValue::Null => write_tlv(out, tag::NULL, &[]),
        SnmpValue::NoSuchObject => write_tlv(out, tag::NO_SUCH_OBJECT, &[]),
        SnmpValue::NoSuchInstance => write_tlv(out, tag::NO_SUCH_INSTANCE, &[]),
        SnmpValue::EndOfMibView => write_tlv(out, tag::END_OF_MIB_VIEW, &[]),
    }
}

/// One encoded VarBind (a SEQUENCE), as it appears inside a VarBindList.
pub fn varbind(vb: &Varbind) -> Vec<u8> {
    let mut c = Vec::with_capacity(32);
    write_oid(&mut c, &vb.oid);
    write_value(&mut c, &vb.value);
    tlv(tag::SEQUENCE, &c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(s: &str) -> Oid {
        s.parse().unwrap()
    }

    #[test]
    fn integers_round_trip_minimally() {
        for v in [
            0i64,
            1,
            127,
            128,
            255,
            256,
            -1,
            -128,
            -129,
            i64::from(i32::MAX),
            i64::from(i32::MIN),
        ] {
            let mut out = Vec::new();
            write_integer(&mut out, tag::INTEGER, v);
            let mut r = Reader::new(&out);
            assert_eq!(r.read_integer().unwrap(), v, "{out:02x?}");
            r.finish().unwrap();
        }
        let mut out = Vec::new();
        write_integer(&mut out, tag::INTEGER, 128);
        assert_eq!(out, [0x02, 0x02, 0x00, 0x80]);
        out.clear();
        write_integer(&mut out, tag::INTEGER, -129);
        assert_eq!(out, [0x02, 0x02, 0xff, 0x7f]);
        out.clear();
        write_unsigned(&mut out, tag::COUNTER32, u64::from(u32::MAX));
        assert_eq!(out, [0x41, 0x05, 0x00, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(
            decode_value(0x41, &out[2..]).unwrap(),
            SnmpValue::Counter32(u32::MAX)
        );
        assert_eq!(decode_value(0x41, &[0x80]), Err(BerError::Range));
        assert_eq!(
            decode_value(0x41, &[1, 0, 0, 0, 0]),
            Err(BerError::Range),
            "above 2^32-1"
        );
    }

    #[test]
    fn oids_round_trip_and_match_x690_examples() {
        // X.690 §8.19.5 example: {2 999 3} encodes as 0x88 0x37 0x03.
        assert_eq!(oid_content(&oid("2.999.3")), [0x88, 0x37, 0x03]);
        assert_eq!(
            oid_content(&oid("1.3.6.1.2.1.1.1.0")),
            [0x2b, 6, 1, 2, 1, 1, 1, 0]
        );
        for s in [
            "1.3.6.1.4.1.30065.1.3011.7150",
            "1.0.8802.1.1.2.1.4.1.1.9.0.47.2",
            "1.3.6.1.4.1.4294967295",
            "0.0",
            "2.999.3",
        ] {
            assert_eq!(decode_oid(&oid_content(&oid(s))).unwrap(), oid(s), "{s}");
        }
        assert_eq!(decode_oid(&[0x2b, 0x80, 0x01]), Err(BerError::Oid));
        assert_eq!(decode_oid(&[0x2b, 0x86]), Err(BerError::Oid), "unfinished");
        assert_eq!(
            decode_oid(&[0x2b, 0x90, 0x80, 0x80, 0x80, 0x00]),
            Err(BerError::Oid),
            "above 2^32-1"
        );
        assert!(decode_oid(&[0x2b; 140]).is_err(), "more than 128 arcs");
    }

    #[test]
    fn lengths_definite_only() {
        // Non-minimal long form, as net-snmp writes it: accepted.
        let mut r = Reader::new(&[0x04, 0x82, 0x00, 0x02, b'h', b'i']);
        assert_eq!(r.read_octets().unwrap(), b"hi");
        r.finish().unwrap();
        assert_eq!(
            Reader::new(&[0x30, 0x80, 0, 0]).read_tlv(),
            Err(BerError::Indefinite)
        );
        assert_eq!(
            Reader::new(&[0x04, 0x85, 0, 0, 0, 0, 1, 0]).read_tlv(),
            Err(BerError::LongLength)
        );
        assert_eq!(
            Reader::new(&[0x04, 0x05, 1]).read_tlv(),
            Err(BerError::Truncated)
        );
        assert_eq!(
            Reader::new(&[0x1f, 0x01, 0]).read_tlv(),
            Err(BerError::HighTag)
        );
        let long = vec![7u8; 300];
        let enc = tlv(tag::OCTET_STRING, &long);
        assert_eq!(&enc[..4], [0x04, 0x82, 0x01, 0x2c]);
        assert_eq!(header_len(300), 4);
        assert_eq!(Reader::new(&enc).read_octets().unwrap(), &long[..]);
    }

    #[test]
    fn values_round_trip() {
        let vals = [
            SnmpValue::Integer(-5),
            SnmpValue::OctetString(b"sw1".to_vec()),
            SnmpValue::ObjectId(oid("1.3.6.1.4.1.9.1.1")),
            SnmpValue::IpAddress([10, 0, 0, 1]),
            SnmpValue::Counter32(7),
            SnmpValue::Gauge32(1_000_000_000),
            SnmpValue::TimeTicks(123_456),
            SnmpValue::Counter64(u64::MAX),
            SnmpValue::Null,
            SnmpValue::NoSuchObject,
            SnmpValue::NoSuchInstance,
            SnmpValue::EndOfMibView,
        ];
        let mut list = Vec::new();
        for v in &vals {
            list.extend(varbind(&Varbind::new(oid("1.3.6.1.2.1.1.5.0"), v.clone())));
        }
        let back = decode_varbinds(&list).unwrap();
        let got: Vec<SnmpValue> = back.into_iter().map(|vb| vb.value).collect();
        assert_eq!(got, vals);
        assert_eq!(decode_value(0x05, &[0]), Err(BerError::NullContent));
        assert_eq!(decode_value(0x47, &[]), Err(BerError::ValueTag(0x47)));
    }
}
