//! RFC 6242 message framing as a tokio-util `Decoder`/`Encoder`.
//!
//! * base:1.0 — end-of-message framing (RFC 6242 §4.3): each message is followed by `]]>]]>`.
//! * base:1.1 — chunked framing (RFC 6242 §4.2):
//!   ```text
//!   Chunked-Message = 1*chunk end-of-chunks
//!   chunk           = LF HASH chunk-size LF chunk-data
//!   chunk-size      = 1*DIGIT1 0*DIGIT          ; 1..4294967295, no leading zero
//!   end-of-chunks   = LF HASH HASH LF
//!   ```
//!
//! The hello exchange always uses end-of-message framing; the client switches the codec with
//! [`NetconfCodec::set_framing`] once both hellos advertised base:1.1 (RFC 6242 §4.1). Bytes that arrived
//! after the server's hello stay in the `Framed` read buffer and are decoded with the new framing.
//!
//! The decoder is strict: a malformed chunk header is an error (there is no resynchronisation), and a
//! configurable maximum message size bounds memory whatever the peer claims in a chunk header.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use super::error::{FramingError, NetconfError};

/// The base:1.0 end-of-message marker.
pub const EOM_MARKER: &[u8] = b"]]>]]>";
/// Largest chunk-size RFC 6242 §4.2 allows.
pub const MAX_CHUNK_SIZE: u64 = 4_294_967_295;
/// Default bound on one decoded message (a full Junos configuration is a few MB; leave room).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 * 1024 * 1024;

/// Which RFC 6242 framing is in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// base:1.0 `]]>]]>` framing (and always for the hello exchange).
    EndOfMessage,
    /// base:1.1 chunked framing.
    Chunked,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    /// Expecting `\n#<size>\n` or `\n##\n`.
    Header,
    /// Inside chunk-data, this many bytes still to come.
    Data(usize),
}

/// Framing codec. Decodes whole messages (`Bytes`, the XML document without framing) and encodes one
/// message per `encode` call.
#[derive(Debug)]
pub struct NetconfCodec {
    framing: Framing,
    max_message_size: usize,
    /// EOM: bytes of the read buffer already searched for the marker (avoids rescanning: O(n) total).
    scanned: usize,
    chunk_state: ChunkState,
    /// Chunked: data of the chunks seen so far for the current message.
    message: BytesMut,
    /// Chunked: at least one chunk of the current message has been seen.
    in_message: bool,
}

impl Default for NetconfCodec {
    fn default() -> Self {
        NetconfCodec::new(DEFAULT_MAX_MESSAGE_SIZE)
    }
}

impl NetconfCodec {
    /// A codec in end-of-message framing (the hello exchange) with the given message size bound.
    pub fn new(max_message_size: usize) -> Self {
        NetconfCodec {
            framing: Framing::EndOfMessage,
            max_message_size,
            scanned: 0,
            chunk_state: ChunkState::Header,
            message: BytesMut::new(),
            in_message: false,
        }
    }

    pub fn framing(&self) -> Framing {
        self.framing
    }

    pub fn max_message_size(&self) -> usize {
        self.max_message_size
    }

    /// Switch framing (after the hello exchange). Decoder state is reset; buffered bytes are kept by the
    /// caller's `Framed` and decoded with the new framing.
    pub fn set_framing(&mut self, framing: Framing) {
        self.framing = framing;
        self.scanned = 0;
        self.chunk_state = ChunkState::Header;
        self.message.clear();
        self.in_message = false;
    }

    fn too_large(&self) -> NetconfError {
        FramingError::MessageTooLarge {
            limit: self.max_message_size,
        }
        .into()
    }

    fn decode_eom(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, NetconfError> {
        loop {
            // The marker may straddle the previous scan boundary: back up by marker length - 1.
            let start = self.scanned.saturating_sub(EOM_MARKER.len() - 1);
            let found = src
                .get(start..)
                .and_then(|tail| tail.windows(EOM_MARKER.len()).position(|w| w == EOM_MARKER));
            match found {
                Some(rel) => {
                    let end = start + rel;
                    if end > self.max_message_size {
                        return Err(self.too_large());
                    }
                    let msg = src.split_to(end).freeze();
                    src.advance(EOM_MARKER.len());
                    self.scanned = 0;
                    // Whitespace between messages (Junos sends a newline after `]]>]]>`) is not a message.
                    if msg.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    return Ok(Some(msg));
                }
                None => {
                    if src.len() > self.max_message_size + EOM_MARKER.len() {
                        return Err(self.too_large());
                    }
                    self.scanned = src.len();
                    return Ok(None);
                }
            }
        }
    }

    fn decode_chunked(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, NetconfError> {
        loop {
            match self.chunk_state {
                ChunkState::Data(remaining) => {
                    if src.is_empty() {
                        return Ok(None);
                    }
                    let n = remaining.min(src.len());
                    self.message.extend_from_slice(&src[..n]);
                    src.advance(n);
                    if n == remaining {
                        self.chunk_state = ChunkState::Header;
                    } else {
                        self.chunk_state = ChunkState::Data(remaining - n);
                        return Ok(None);
                    }
                }
                ChunkState::Header => match parse_chunk_header(src)? {
                    None => return Ok(None),
                    Some((consumed, Header::EndOfChunks)) => {
                        if !self.in_message {
                            return Err(FramingError::EmptyChunkedMessage.into());
                        }
                        src.advance(consumed);
                        self.in_message = false;
                        return Ok(Some(self.message.split().freeze()));
                    }
                    Some((consumed, Header::Chunk(size))) => {
                        // Bound memory by what we accept, not by what the peer announces.
                        let size = usize::try_from(size).map_err(|_| self.too_large())?;
                        if size > self.max_message_size.saturating_sub(self.message.len()) {
                            return Err(self.too_large());
                        }
                        src.advance(consumed);
                        self.in_message = true;
                        self.chunk_state = ChunkState::Data(size);
                    }
                },
            }
        }
    }
}

enum Header {
    Chunk(u64),
    EndOfChunks,
}

fn bad_size(msg: impl Into<String>) -> NetconfError {
    FramingError::BadChunkSize(msg.into()).into()
}

/// Parse a chunk header at the start of `src`. `Ok(None)`: need more bytes (every byte seen so far is
/// valid, so garbage is rejected as soon as it arrives). `Ok(Some((len, header)))`: header of `len` bytes.
fn parse_chunk_header(src: &[u8]) -> Result<Option<(usize, Header)>, NetconfError> {
    match src.first() {
        None => return Ok(None),
        Some(b'\n') => {}
        Some(&b) => return Err(FramingError::BadChunkStart(b).into()),
    }
    match src.get(1) {
        None => return Ok(None),
        Some(b'#') => {}
        Some(&b) => return Err(FramingError::BadChunkStart(b).into()),
    }
    match src.get(2) {
        None => return Ok(None),
        Some(b'#') => {
            return match src.get(3) {
                None => Ok(None),
                Some(b'\n') => Ok(Some((4, Header::EndOfChunks))),
                Some(&b) => Err(bad_size(format!(
                    "end-of-chunks \"\\n##\" followed by 0x{b:02x}, not LF"
                ))),
            };
        }
        Some(b'0') => {
            return Err(bad_size(
                "chunk-size starts with 0 (leading zero or zero-length chunk)",
            ));
        }
        Some(_) => {}
    }
    let mut size: u64 = 0;
    for (i, &b) in src.iter().enumerate().skip(2) {
        match b {
            b'0'..=b'9' => {
                size = size * 10 + u64::from(b - b'0');
                if size > MAX_CHUNK_SIZE {
                    return Err(bad_size(format!("chunk-size exceeds {MAX_CHUNK_SIZE}")));
                }
            }
            b'\n' if i > 2 => return Ok(Some((i + 1, Header::Chunk(size)))),
            _ => return Err(bad_size(format!("unexpected byte 0x{b:02x} in chunk-size"))),
        }
    }
    Ok(None)
}

impl Decoder for NetconfCodec {
    type Item = Bytes;
    type Error = NetconfError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, NetconfError> {
        match self.framing {
            Framing::EndOfMessage => self.decode_eom(src),
            Framing::Chunked => self.decode_chunked(src),
        }
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, NetconfError> {
        if let Some(msg) = self.decode(src)? {
            return Ok(Some(msg));
        }
        let pending = match self.framing {
            Framing::EndOfMessage => src.iter().any(|b| !b.is_ascii_whitespace()),
            Framing::Chunked => !src.is_empty() || self.in_message,
        };
        if pending {
            return Err(FramingError::TruncatedMessage(src.len() + self.message.len()).into());
        }
        Ok(None)
    }
}

impl NetconfCodec {
    fn encode_bytes(&mut self, item: &[u8], dst: &mut BytesMut) -> Result<(), NetconfError> {
        match self.framing {
            Framing::EndOfMessage => {
                // A marker inside the message would end it early and let the rest be read as another
                // message (RFC 6242 §4.3 leaves this to the sender).
                if item.windows(EOM_MARKER.len()).any(|w| w == EOM_MARKER) {
                    return Err(NetconfError::InvalidArgument(
                        "message contains the end-of-message marker ]]>]]>".into(),
                    ));
                }
                dst.reserve(item.len() + EOM_MARKER.len());
                dst.put_slice(item);
                dst.put_slice(EOM_MARKER);
            }
            Framing::Chunked => {
                if item.is_empty() {
                    return Err(NetconfError::InvalidArgument(
                        "empty message cannot be chunk-framed".into(),
                    ));
                }
                dst.reserve(item.len() + 32);
                // MAX_CHUNK_SIZE fits in usize on every target tokio supports with 64-bit pointers; on
                // 32-bit targets a message cannot exceed it anyway.
                let max = usize::try_from(MAX_CHUNK_SIZE).unwrap_or(usize::MAX);
                for chunk in item.chunks(max) {
                    dst.put_slice(format!("\n#{}\n", chunk.len()).as_bytes());
                    dst.put_slice(chunk);
                }
                dst.put_slice(b"\n##\n");
            }
        }
        Ok(())
    }
}

impl Encoder<Bytes> for NetconfCodec {
    type Error = NetconfError;
    fn encode(&mut self, item: Bytes, dst: &mut BytesMut) -> Result<(), NetconfError> {
        self.encode_bytes(&item, dst)
    }
}

impl Encoder<&str> for NetconfCodec {
    type Error = NetconfError;
    fn encode(&mut self, item: &str, dst: &mut BytesMut) -> Result<(), NetconfError> {
        self.encode_bytes(item.as_bytes(), dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunked() -> NetconfCodec {
        let mut c = NetconfCodec::default();
        c.set_framing(Framing::Chunked);
        c
    }

    fn decode_all(codec: &mut NetconfCodec, pieces: &[&[u8]]) -> Result<Vec<Bytes>, NetconfError> {
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for p in pieces {
            buf.extend_from_slice(p);
            while let Some(m) = codec.decode(&mut buf)? {
                out.push(m);
            }
        }
        Ok(out)
    }

    fn framing_err(r: Result<Vec<Bytes>, NetconfError>) -> FramingError {
        match r {
            Err(NetconfError::Framing(f)) => f,
            other => panic!("expected framing error, got {other:?}"),
        }
    }

    #[test]
    fn eom_single_and_multiple_messages() {
        let mut c = NetconfCodec::default();
        let out = decode_all(&mut c, &[b"<a/>]]>]]>\n<b/>]]>]]><c/>"]).unwrap();
        assert_eq!(
            out,
            vec![Bytes::from_static(b"<a/>"), Bytes::from_static(b"\n<b/>")]
        );
    }

    #[test]
    fn eom_marker_split_across_reads() {
        // Every split point of the marker, including byte by byte.
        let msg = b"<rpc-reply><ok/></rpc-reply>]]>]]>";
        for split in 1..msg.len() {
            let mut c = NetconfCodec::default();
            let out = decode_all(&mut c, &[&msg[..split], &msg[split..]]).unwrap();
            assert_eq!(
                out,
                vec![Bytes::from_static(b"<rpc-reply><ok/></rpc-reply>")],
                "split {split}"
            );
        }
        let mut c = NetconfCodec::default();
        let pieces: Vec<&[u8]> = msg.chunks(1).collect();
        assert_eq!(decode_all(&mut c, &pieces).unwrap().len(), 1);
    }

    #[test]
    fn eom_false_marker_prefix() {
        let mut c = NetconfCodec::default();
        let out = decode_all(&mut c, &[b"<a>]]>]]", b"x</a>]]>]", b"]>"]).unwrap();
        assert_eq!(out, vec![Bytes::from_static(b"<a>]]>]]x</a>")]);
    }

    #[test]
    fn eom_whitespace_between_messages_is_skipped() {
        let mut c = NetconfCodec::default();
        let out = decode_all(&mut c, &[b"\n]]>]]>  \r\n<a/>]]>]]>"]).unwrap();
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn eom_max_size() {
        let mut c = NetconfCodec::new(10);
        let err = framing_err(decode_all(&mut c, &[b"01234567890123456789"]));
        assert_eq!(err, FramingError::MessageTooLarge { limit: 10 });
        let mut c = NetconfCodec::new(10);
        let err = framing_err(decode_all(&mut c, &[b"01234567890]]>]]>"]));
        assert_eq!(err, FramingError::MessageTooLarge { limit: 10 });
        let mut c = NetconfCodec::new(10);
        assert_eq!(decode_all(&mut c, &[b"0123456789]]>]]>"]).unwrap().len(), 1);
    }

    #[test]
    fn chunked_rfc6242_example() {
        // RFC 6242 §4.2 example: one message in two chunks.
        let wire = b"\n#4\n<rpc\n#18\n message-id=\"102\"\n\n#79\n     xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\">\n  <close-session/>\n</rpc>\n##\n";
        let mut c = chunked();
        let out = decode_all(&mut c, &[wire]).unwrap();
        assert_eq!(out.len(), 1);
        assert!(out[0].starts_with(b"<rpc message-id=\"102\"\n"));
        assert!(out[0].ends_with(b"</rpc>"));
    }

    #[test]
    fn chunked_split_at_every_byte() {
        let wire = b"\n#5\nhello\n#6\n world\n##\n\n#3\nabc\n##\n";
        for split in 1..wire.len() {
            let mut c = chunked();
            let out = decode_all(&mut c, &[&wire[..split], &wire[split..]]).unwrap();
            assert_eq!(
                out,
                vec![
                    Bytes::from_static(b"hello world"),
                    Bytes::from_static(b"abc")
                ],
                "split {split}"
            );
        }
        let mut c = chunked();
        let pieces: Vec<&[u8]> = wire.chunks(1).collect();
        assert_eq!(decode_all(&mut c, &pieces).unwrap().len(), 2);
    }

    #[test]
    fn chunked_bad_headers() {
        let cases: &[&[u8]] = &[
            b"#4\nabcd\n##\n",    // no leading LF
            b"\n4\nabcd\n##\n",   // no hash
            b"\n#04\nabcd\n##\n", // leading zero
            b"\n#0\n\n##\n",      // zero-length chunk
            b"\n#\n",             // empty size
            b"\n#4x\nabcd",       // junk in size
            b"\n# 4\nabcd",       // space
            b"\n#-4\nabcd",       // sign
            b"\n#4294967296\n",   // > 2^32-1
            b"\n#99999999999999999999999\n",
            b"\n##\n",          // end-of-chunks without chunk
            b"\n#2\nab\n##x",   // bad end marker
            b"\n#2\nabc\n##\n", // chunk longer than announced: 'c' is not a header
        ];
        for case in cases {
            let mut c = chunked();
            assert!(
                decode_all(&mut c, &[case]).is_err(),
                "accepted {:?}",
                String::from_utf8_lossy(case)
            );
        }
    }

    #[test]
    fn chunked_max_chunk_size_accepted_in_header() {
        // 4294967295 is a valid header; the size bound then refuses it without allocating.
        let mut c = chunked();
        let err = framing_err(decode_all(&mut c, &[b"\n#4294967295\n"]));
        assert!(matches!(err, FramingError::MessageTooLarge { .. }));
        assert!(matches!(
            parse_chunk_header(b"\n#4294967295\n"),
            Ok(Some((13, Header::Chunk(MAX_CHUNK_SIZE))))
        ));
    }

    #[test]
    fn chunked_max_message_size_across_chunks() {
        let mut c = NetconfCodec::new(8);
        c.set_framing(Framing::Chunked);
        let err = framing_err(decode_all(&mut c, &[b"\n#5\nhello\n#4\nabcd\n##\n"]));
        assert_eq!(err, FramingError::MessageTooLarge { limit: 8 });
    }

    #[test]
    fn eof_mid_message_is_an_error() {
        let mut c = chunked();
        let mut buf = BytesMut::from(&b"\n#5\nhel"[..]);
        assert!(c.decode(&mut buf).unwrap().is_none());
        assert!(c.decode_eof(&mut buf).is_err());
        let mut c = NetconfCodec::default();
        let mut buf = BytesMut::from(&b"<a/>"[..]);
        assert!(c.decode_eof(&mut buf).is_err());
        let mut buf = BytesMut::from(&b"\n"[..]);
        assert!(c.decode_eof(&mut buf).unwrap().is_none());
    }

    #[test]
    fn encode_both_framings_round_trip() {
        let mut c = NetconfCodec::default();
        let mut dst = BytesMut::new();
        c.encode("<hello/>", &mut dst).unwrap();
        assert_eq!(&dst[..], b"<hello/>]]>]]>");
        assert_eq!(
            c.decode(&mut dst).unwrap().unwrap(),
            Bytes::from_static(b"<hello/>")
        );

        c.set_framing(Framing::Chunked);
        let mut dst = BytesMut::new();
        c.encode(Bytes::from_static(b"<rpc/>"), &mut dst).unwrap();
        assert_eq!(&dst[..], b"\n#6\n<rpc/>\n##\n");
        assert_eq!(
            c.decode(&mut dst).unwrap().unwrap(),
            Bytes::from_static(b"<rpc/>")
        );
    }

    #[test]
    fn encode_rejects_marker_in_eom_and_empty_in_chunked() {
        let mut c = NetconfCodec::default();
        assert!(c.encode("<a>]]>]]></a>", &mut BytesMut::new()).is_err());
        c.set_framing(Framing::Chunked);
        assert!(c.encode("", &mut BytesMut::new()).is_err());
        // In chunked framing the marker is just data.
        assert!(c.encode("<a>]]>]]></a>", &mut BytesMut::new()).is_ok());
    }

    #[test]
    fn switch_framing_keeps_buffered_bytes() {
        // Server hello (EOM) immediately followed by a chunked reply in the same read.
        let mut c = NetconfCodec::default();
        let mut buf = BytesMut::from(&b"<hello/>]]>]]>\n#4\n<ok>\n##\n"[..]);
        assert_eq!(
            c.decode(&mut buf).unwrap().unwrap(),
            Bytes::from_static(b"<hello/>")
        );
        c.set_framing(Framing::Chunked);
        assert_eq!(
            c.decode(&mut buf).unwrap().unwrap(),
            Bytes::from_static(b"<ok>")
        );
    }
}
