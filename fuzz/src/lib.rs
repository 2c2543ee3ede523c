//! Fuzz harnesses: the NETCONF framing and reply parser come from the `netgw-transport` crate, every
//! other parser from the workspace crates (`devices` for device output, `inputs` for netgw's input
//! formats).

pub mod devices;
pub mod inputs;

pub use netgw_transport::netconf::{codec, reply};

use bytes::{Bytes, BytesMut};
use codec::{Framing, NetconfCodec};
use tokio_util::codec::Decoder;

/// Decode `data` fed in pieces of `stride` bytes; returns the messages and whether decoding failed.
pub fn decode_in_pieces(
    framing: Framing,
    max: usize,
    data: &[u8],
    stride: usize,
) -> (Vec<Bytes>, bool) {
    let mut codec = NetconfCodec::new(max);
    codec.set_framing(framing);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for piece in data.chunks(stride.max(1)) {
        buf.extend_from_slice(piece);
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(m)) => {
                    assert!(
                        m.len() <= max,
                        "message of {} bytes exceeds the {max} limit",
                        m.len()
                    );
                    out.push(m);
                }
                Ok(None) => break,
                Err(_) => return (out, true),
            }
        }
    }
    match codec.decode_eof(&mut buf) {
        Ok(Some(m)) => {
            out.push(m);
            (out, false)
        }
        Ok(None) => (out, false),
        Err(_) => (out, true),
    }
}

/// Framing oracle: splitting the input differently never changes the outcome, and every decoded
/// message re-encodes and decodes to itself.
pub fn check_framing(framing: Framing, data: &[u8]) {
    let Some((&stride, body)) = data.split_first() else {
        return;
    };
    let max = 4096;
    let whole = decode_in_pieces(framing, max, body, body.len().max(1));
    let pieces = decode_in_pieces(framing, max, body, usize::from(stride % 17) + 1);
    assert_eq!(whole, pieces, "outcome depends on how the input was split");
    for m in &whole.0 {
        let mut codec = NetconfCodec::new(max);
        codec.set_framing(framing);
        let mut buf = BytesMut::new();
        if tokio_util::codec::Encoder::encode(&mut codec, m.clone(), &mut buf).is_ok() {
            let again = codec.decode(&mut buf).expect("re-encoded message decodes");
            // EOM framing drops whitespace-only messages, which the decoder never yields anyway.
            assert_eq!(again.as_ref(), Some(m), "round trip changed the message");
        }
    }
}

/// Parser oracle: no panic; every element's content span slices the source on char boundaries.
pub fn check_reply(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let _ = reply::parse_hello(s);
    if let Ok(root) = reply::parse_document(s) {
        fn walk(el: &reply::XmlElement, src: &str) {
            assert!(
                src.get(el.content_span.clone()).is_some(),
                "bad span {:?}",
                el.content_span
            );
            for c in el.elements() {
                walk(c, src);
            }
        }
        walk(&root, s);
    }
    if let Ok(r) = reply::RpcReply::parse(s) {
        let _ = r.data_xml();
        let _ = r.inner_xml();
        for e in r.errors.iter().chain(r.warnings.iter()) {
            let _ = e.to_string();
        }
        let _ = r.into_result().map_err(|e| e.to_string());
    }
}
