//! The snmprec recording format of snmpsim (`OID|TYPE|VALUE` per line), read into varbinds so the
//! collector's parsers run on real device recordings in tests (and labs can replay them).
//!
//! TYPE is the BER tag in decimal: 2 Integer, 4 OctetString, 5 Null, 6 ObjectIdentifier, 64 IpAddress,
//! 65 Counter32, 66 Gauge32, 67 TimeTicks, 68 Opaque, 70 Counter64; a trailing `x` means VALUE is hex.
//! Lines whose type carries a variation module (`2:numeric`, `4:error`) are dynamic and are skipped.

use super::oid::{Oid, SnmpValue, Varbind};

/// A line that is not valid snmprec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("snmprec line {line}: {reason}")]
pub struct SnmprecError {
    pub line: usize,
    pub reason: String,
}

/// Parse a whole recording; blank lines and `#` comments are ignored. Varbinds are returned in OID order.
pub fn parse_snmprec(text: &str) -> Result<Vec<Varbind>, SnmprecError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |reason: String| SnmprecError {
            line: i + 1,
            reason,
        };
        let mut parts = line.splitn(3, '|');
        let (Some(oid), Some(tag), Some(value)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(err("expected OID|TYPE|VALUE".into()));
        };
        if tag.contains(':') || tag.contains('e') {
            continue;
        }
        let oid: Oid = oid
            .parse()
            .map_err(|e: super::oid::OidParseError| err(e.to_string()))?;
        let (tag, hex) = match tag.strip_suffix('x') {
            Some(t) => (t, true),
            None => (tag, false),
        };
        let bytes = || -> Result<Vec<u8>, SnmprecError> {
            if hex {
                decode_hex(value).ok_or_else(|| err(format!("bad hex value {value:?}")))
            } else {
                Ok(value.as_bytes().to_vec())
            }
        };
        let num = |what: &str| -> Result<String, SnmprecError> {
            let b = bytes()?;
            String::from_utf8(b).map_err(|_| err(format!("{what} value is not text")))
        };
        let value = match tag {
            "2" => SnmpValue::Integer(
                num("integer")?
                    .trim()
                    .parse()
                    .map_err(|_| err(format!("bad integer {value:?}")))?,
            ),
            "4" => SnmpValue::OctetString(bytes()?),
            "5" => SnmpValue::Null,
            "6" => SnmpValue::ObjectId(
                num("OID")?
                    .parse()
                    .map_err(|e: super::oid::OidParseError| err(e.to_string()))?,
            ),
            "64" => {
                let b = bytes()?;
                let addr = if hex && b.len() == 4 {
                    [b[0], b[1], b[2], b[3]]
                } else {
                    let text = String::from_utf8(b).map_err(|_| err("bad IpAddress".into()))?;
                    text.trim()
                        .parse::<std::net::Ipv4Addr>()
                        .map_err(|_| err(format!("bad IpAddress {value:?}")))?
                        .octets()
                };
                SnmpValue::IpAddress(addr)
            }
            "65" | "66" | "67" => {
                let v: u32 = num("unsigned")?
                    .trim()
                    .parse()
                    .map_err(|_| err(format!("bad unsigned {value:?}")))?;
                match tag {
                    "65" => SnmpValue::Counter32(v),
                    "66" => SnmpValue::Gauge32(v),
                    _ => SnmpValue::TimeTicks(v),
                }
            }
            "68" => SnmpValue::Opaque(bytes()?),
            "70" => SnmpValue::Counter64(
                num("counter64")?
                    .trim()
                    .parse()
                    .map_err(|_| err(format!("bad counter64 {value:?}")))?,
            ),
            "128" => SnmpValue::NoSuchObject,
            "129" => SnmpValue::NoSuchInstance,
            "130" => SnmpValue::EndOfMibView,
            other => return Err(err(format!("unknown type {other:?}"))),
        };
        out.push(Varbind::new(oid, value));
    }
    out.sort_by(|a, b| a.oid.cmp(&b.oid));
    Ok(out)
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    let s = s.trim();
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snmprec_parses_types() {
        let text = "1.3.6.1.2.1.1.5.0|4|DUMSYS-87\n\
                    1.3.6.1.2.1.1.1.0|4x|41726973\n\
                    1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.30065.1\n\
                    1.3.6.1.2.1.1.3.0|67|1692177370\n\
                    1.3.6.1.2.1.1.4.0|4|\n\
                    1.3.6.1.2.1.2.2.1.5.1|66|4294967295\n\
                    1.3.6.1.2.1.4.20.1.1.10.0.0.1|64|10.0.0.1\n\
                    1.3.6.1.2.1.31.1.1.1.6.1|70|18446744073709551615\n\
                    1.3.6.1.2.1.1.7.0|2:numeric|x\n";
        let vbs = parse_snmprec(text).unwrap();
        assert_eq!(vbs.len(), 8);
        assert_eq!(vbs[0].value, SnmpValue::OctetString(b"Aris".to_vec()));
        assert_eq!(
            vbs[1].value.as_oid().unwrap().to_string(),
            "1.3.6.1.4.1.30065.1"
        );
        assert_eq!(vbs[2].value, SnmpValue::TimeTicks(1_692_177_370));
        assert_eq!(vbs[3].value, SnmpValue::OctetString(vec![]));
        assert_eq!(vbs[4].value.as_text().as_deref(), Some("DUMSYS-87"));
        assert_eq!(vbs[5].value, SnmpValue::Gauge32(u32::MAX));
        assert_eq!(vbs[6].value, SnmpValue::IpAddress([10, 0, 0, 1]));
        assert_eq!(vbs[7].value, SnmpValue::Counter64(u64::MAX));
    }

    #[test]
    fn snmprec_reports_bad_lines() {
        let err = parse_snmprec("1.3.6.1|2|1\n1.3.6.1.2|2|notanumber\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(parse_snmprec("1.3.6|4x|abc\n").is_err());
        assert!(parse_snmprec("no pipes here\n").is_err());
        assert!(parse_snmprec("1.3.6|99|1\n").is_err());
    }
}
