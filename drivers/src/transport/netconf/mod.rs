//! NETCONF (RFC 6241) over SSH (RFC 6242): framing codec, client, rpc-reply parsing.
