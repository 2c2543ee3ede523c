//! SNMPv3 User-based Security Model, the agent's side: key localisation (RFC 3414 §A.2), HMAC
//! authentication (RFC 3414 §6 HMAC-SHA-96; RFC 7860 HMAC-SHA-256-192) and AES-128 CFB privacy
//! (RFC 3826 §3).
//!
//! SHA-1 and HMAC come from ring (its legacy SHA-1 algorithms exist for exactly this kind of protocol);
//! the AES block function from RustCrypto `aes`, already in the workspace through snmp2. CFB128 itself is
//! a few lines (RFC 3826 §3.1.3: the IV is engineBoots || engineTime || salt).

use aes::Aes128;
use aes::cipher::{BlockEncrypt, KeyInit, generic_array::GenericArray};
use ring::{digest, hmac};

/// The authentication protocols the lab agent offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthAlg {
    /// usmHMACSHAAuthProtocol (RFC 3414): 12-octet MAC.
    Sha1,
    /// usmHMAC192SHA256AuthProtocol (RFC 7860): 24-octet MAC.
    Sha256,
}

impl AuthAlg {
    pub fn parse(s: &str) -> Option<AuthAlg> {
        match s.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
            "sha" | "sha1" => Some(AuthAlg::Sha1),
            "sha256" => Some(AuthAlg::Sha256),
            _ => None,
        }
    }

    fn digest(self) -> &'static digest::Algorithm {
        match self {
            AuthAlg::Sha1 => &digest::SHA1_FOR_LEGACY_USE_ONLY,
            AuthAlg::Sha256 => &digest::SHA256,
        }
    }

    fn hmac(self) -> hmac::Algorithm {
        match self {
            AuthAlg::Sha1 => hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY,
            AuthAlg::Sha256 => hmac::HMAC_SHA256,
        }
    }

    /// Octets of msgAuthenticationParameters.
    pub fn mac_len(self) -> usize {
        match self {
            AuthAlg::Sha1 => 12,
            AuthAlg::Sha256 => 24,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            AuthAlg::Sha1 => "SHA",
            AuthAlg::Sha256 => "SHA-256",
        }
    }
}

/// Ku: the password hashed over 1 MiB of its repetitions (RFC 3414 §A.2.2). Slow on purpose (a few
/// milliseconds); computed once per lab, then localised per engine with [`localize`].
pub fn password_to_key(alg: AuthAlg, password: &[u8]) -> Vec<u8> {
    let mut ctx = digest::Context::new(alg.digest());
    if password.is_empty() {
        return ctx.finish().as_ref().to_vec();
    }
    let mut block = [0u8; 64];
    let mut index = 0usize;
    for _ in 0..(1_048_576 / 64) {
        for b in block.iter_mut() {
            *b = password[index % password.len()];
            index += 1;
        }
        ctx.update(&block);
    }
    ctx.finish().as_ref().to_vec()
}

/// Kul = H(Ku || engineID || Ku) (RFC 3414 §A.2.2).
pub fn localize(alg: AuthAlg, ku: &[u8], engine_id: &[u8]) -> Vec<u8> {
    let mut ctx = digest::Context::new(alg.digest());
    ctx.update(ku);
    ctx.update(engine_id);
    ctx.update(ku);
    ctx.finish().as_ref().to_vec()
}

/// The truncated HMAC of a whole message whose auth parameters are zeroed (RFC 3414 §6.3.1).
pub fn mac(alg: AuthAlg, key: &[u8], message: &[u8]) -> Vec<u8> {
    let k = hmac::Key::new(alg.hmac(), key);
    let tag = hmac::sign(&k, message);
    tag.as_ref()[..alg.mac_len()].to_vec()
}

/// Constant-time comparison of a received MAC.
pub fn verify(alg: AuthAlg, key: &[u8], message: &[u8], received: &[u8]) -> bool {
    let expected = mac(alg, key, message);
    expected.len() == received.len()
        && expected
            .iter()
            .zip(received)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// AES-128 in CFB128 mode (RFC 3826 §3.1.3-4), in place. `encrypt` picks the direction: CFB feeds back
/// the ciphertext, so decryption differs only in which block is fed back.
pub fn aes_cfb(priv_key: &[u8], iv: [u8; 16], data: &mut [u8], encrypt: bool) {
    let Some(key) = priv_key.get(..16) else {
        return;
    };
    let cipher = Aes128::new(GenericArray::from_slice(key));
    let mut feedback = iv;
    for chunk in data.chunks_mut(16) {
        let mut block = GenericArray::from(feedback);
        cipher.encrypt_block(&mut block);
        for (i, b) in chunk.iter_mut().enumerate() {
            let c = *b ^ block[i];
            feedback[i] = if encrypt { c } else { *b };
            *b = c;
        }
    }
}

/// The IV: engineBoots (32 bits) || engineTime (32 bits) || salt (64 bits) (RFC 3826 §3.1.2.1).
pub fn aes_iv(boots: u32, time: u32, salt: &[u8; 8]) -> [u8; 16] {
    let mut iv = [0u8; 16];
    iv[..4].copy_from_slice(&boots.to_be_bytes());
    iv[4..8].copy_from_slice(&time.to_be_bytes());
    iv[8..].copy_from_slice(salt);
    iv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn rfc3414_a3_2_sha_key_localisation() {
        // RFC 3414 §A.3.2: password "maplesyrup", engine ID 000000000000000000000002.
        let ku = password_to_key(AuthAlg::Sha1, b"maplesyrup");
        assert_eq!(hex(&ku), "9fb5cc0381497b3793528939ff788d5d79145211");
        let engine = [0u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
        let kul = localize(AuthAlg::Sha1, &ku, &engine);
        assert_eq!(hex(&kul), "6695febc9288e36282235fc7151f128497b38f3f");
    }

    #[test]
    fn rfc7860_sha256_key_localisation() {
        // RFC 7860 §A.2 uses the same password and engine ID (SHA-256 column of the reference
        // implementation's test vectors).
        let ku = password_to_key(AuthAlg::Sha256, b"maplesyrup");
        let engine = [0u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
        let kul = localize(AuthAlg::Sha256, &ku, &engine);
        assert_eq!(
            hex(&kul),
            "8982e0e549e866db361a6b625d84cccc11162d453ee8ce3a6445c2d6776f0f8b"
        );
    }

    #[test]
    fn cfb_round_trips_odd_lengths() {
        let key = [7u8; 16];
        let iv = aes_iv(1, 99, &[1, 2, 3, 4, 5, 6, 7, 8]);
        let plain: Vec<u8> = (0..37u8).collect();
        let mut data = plain.clone();
        aes_cfb(&key, iv, &mut data, true);
        assert_ne!(data, plain);
        aes_cfb(&key, iv, &mut data, false);
        assert_eq!(data, plain);
    }

    #[test]
    fn aes128_cfb_matches_nist_sp800_38a() {
        // NIST SP 800-38A F.3.13 CFB128-AES128.Encrypt, first two blocks.
        let key = [
            0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf,
            0x4f, 0x3c,
        ];
        let mut iv = [0u8; 16];
        for (i, b) in iv.iter_mut().enumerate() {
            *b = i as u8;
        }
        let mut data = [
            0x6b, 0xc1, 0xbe, 0xe2, 0x2e, 0x40, 0x9f, 0x96, 0xe9, 0x3d, 0x7e, 0x11, 0x73, 0x93,
            0x17, 0x2a, 0xae, 0x2d, 0x8a, 0x57, 0x1e, 0x03, 0xac, 0x9c, 0x9e, 0xb7, 0x6f, 0xac,
            0x45, 0xaf, 0x8e, 0x51,
        ];
        aes_cfb(&key, iv, &mut data, true);
        assert_eq!(
            hex(&data),
            "3b3fd92eb72dad20333449f8e83cfb4ac8a64537a0b3a93fcde3cdad9f1ce58b"
        );
    }

    #[test]
    fn mac_verifies_and_rejects() {
        let key = [9u8; 20];
        let m = mac(AuthAlg::Sha1, &key, b"message");
        assert_eq!(m.len(), 12);
        assert!(verify(AuthAlg::Sha1, &key, b"message", &m));
        assert!(!verify(AuthAlg::Sha1, &key, b"messagf", &m));
        assert!(!verify(AuthAlg::Sha1, &key, b"message", &m[..11]));
    }
}
