//! Chef's encrypted data bag items, decrypted as chef-client decrypts them
//! (chef/chef `lib/chef/encrypted_data_bag_item/decryptor.rb` and `check_encrypted.rb`): every value
//! but `id` is `{"encrypted_data", "iv", "version", "cipher", ...}` holding the JSON text
//! `{"json_wrapper": VALUE}`, in one of three formats:
//!
//! | version | cipher | key | integrity |
//! |---|---|---|---|
//! | 1 | AES-256-CBC, PKCS#7 padding | SHA-256 of the secret | none |
//! | 2 | as 1 | as 1 | `hmac`: HMAC-SHA256, keyed with the secret itself, of the base64 `encrypted_data` text |
//! | 3 | AES-256-GCM, no associated data | as 1 | `auth_tag` (16 bytes) |
//!
//! The secret is the file Chef's `encrypted_data_bag_secret` names, read as
//! `Chef::EncryptedDataBagItem.load_secret` reads it (surrounding whitespace stripped, never empty),
//! each time an encrypted item is read so a rotated file is seen by the next run. It is held only for
//! that decryption: [`DataBagSecret`] keeps the path, and neither it nor any error ever shows the
//! secret or a decrypted value.
//!
//! Crates: `ring` (already the workspace's TLS and signing provider) does AES-256-GCM, HMAC-SHA256
//! (compared in constant time) and SHA-256, but has no CBC mode; versions 1 and 2 use RustCrypto's
//! `aes` and `cbc`, already in the tree through the SNMP stack, rather than a hand-made CBC over a
//! block function.

use data_encoding::BASE64;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Where the secret of encrypted data bag items is (Chef's `encrypted_data_bag_secret`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataBagSecret {
    path: PathBuf,
}

/// The secret's bytes, for one decryption; no `Debug`, never kept.
struct Secret(Vec<u8>);

impl DataBagSecret {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        DataBagSecret { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `Chef::EncryptedDataBagItem.load_secret`: the file's contents without surrounding
    /// whitespace (Ruby's `String#strip`), refused when nothing is left.
    fn read(&self) -> Result<Secret, String> {
        let shown = self.path.display();
        let raw = std::fs::read(&self.path)
            .map_err(|e| format!("cannot read the encrypted data bag secret file {shown}: {e}"))?;
        let strip = |b: &u8| b"\0\t\n\x0b\x0c\r ".contains(b);
        let start = raw.iter().position(|b| !strip(b)).unwrap_or(raw.len());
        let end = raw.iter().rposition(|b| !strip(b)).map_or(start, |i| i + 1);
        if start >= end {
            return Err(format!(
                "the encrypted data bag secret file {shown} is empty (a zero-length secret)"
            ));
        }
        Ok(Secret(raw[start..end].to_vec()))
    }
}

/// How an item looks (`Chef::EncryptedDataBagItem::CheckEncrypted#encrypted?`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Chef hands it on as it is.
    Plain,
    /// Every value but `id` has exactly the keys Chef's encryptor of its `version` writes: Chef's
    /// `data_bag_item` decrypts it.
    Encrypted,
    /// Some values look encrypted and some do not: Chef would hand the ciphertext on as plain data.
    Mixed,
}

/// The keys of a value of each format (`Encryptor::VersionN.encryptor_keys`).
fn encryptor_keys(version: i64) -> Option<&'static [&'static str]> {
    match version {
        1 => Some(&["cipher", "encrypted_data", "iv", "version"]),
        2 => Some(&["cipher", "encrypted_data", "hmac", "iv", "version"]),
        3 => Some(&["auth_tag", "cipher", "encrypted_data", "iv", "version"]),
        _ => None,
    }
}

fn looks_encrypted(v: &Value) -> bool {
    let Some(m) = v.as_object() else {
        return false;
    };
    let Some(want) = m
        .get("version")
        .and_then(Value::as_i64)
        .and_then(encryptor_keys)
    else {
        return false;
    };
    let mut keys: Vec<&str> = m.keys().map(String::as_str).collect();
    keys.sort_unstable();
    keys == want
}

pub fn shape(item: &Value) -> Shape {
    let Some(m) = item.as_object() else {
        return Shape::Plain;
    };
    let values: Vec<&Value> = m.iter().filter(|(k, _)| *k != "id").map(|e| e.1).collect();
    let encrypted = values.iter().filter(|v| looks_encrypted(v)).count();
    let partly = values.iter().any(|v| v.get("encrypted_data").is_some());
    if !values.is_empty() && encrypted == values.len() {
        Shape::Encrypted
    } else if partly {
        Shape::Mixed
    } else {
        Shape::Plain
    }
}

/// `Chef::EncryptedDataBagItem#to_h`: `id` as it is, a `null` as it is, every other value
/// decrypted with the secret in `secret`'s file. `item` names the item (`BAG/ITEM`) and `from`
/// where it was read, for errors, which name the key but never the secret or a value.
pub fn decrypt_item(
    value: Value,
    secret: &DataBagSecret,
    item: &str,
    from: &str,
) -> Result<Value, String> {
    let Value::Object(map) = value else {
        return Err(format!("{from}: data bag item {item} is not a JSON object"));
    };
    let key = secret.read()?;
    let mut out = Map::new();
    for (k, v) in map {
        let plain = if k == "id" || v.is_null() {
            v
        } else {
            decrypt_value(&v, &key).map_err(|why| {
                format!(
                    "{from}: data bag item {item}, key {k:?}: cannot decrypt: {why} (secret file {})",
                    secret.path.display()
                )
            })?
        };
        out.insert(k, plain);
    }
    Ok(Value::Object(out))
}

/// One value (`Decryptor.for(value, secret).for_decrypted_item`).
fn decrypt_value(v: &Value, key: &Secret) -> Result<Value, String> {
    let Some(m) = v.as_object() else {
        return Err(
            "not an encrypted value of format 1, 2 or 3 (format 0, a bare string, predates \
             Chef 0.10.4 and is not read: re-encrypt the item with knife)"
                .into(),
        );
    };
    let text = match m.get("version").and_then(Value::as_i64) {
        Some(1) => cbc(m, key)?,
        Some(2) => {
            check_hmac(m, key)?;
            cbc(m, key)?
        }
        Some(3) => gcm(m, key)?,
        _ => {
            return Err(format!(
                "format version {} is not one Chef writes (1, 2 or 3)",
                m.get("version").unwrap_or(&Value::Null)
            ));
        }
    };
    let mut doc: Value = serde_json::from_slice(&text).map_err(|_| {
        "the decrypted text is not Chef's JSON; most likely the secret is not the one the item \
         was encrypted with"
            .to_string()
    })?;
    Ok(doc
        .get_mut("json_wrapper")
        .map(Value::take)
        .unwrap_or(Value::Null))
}

/// A string field of an encrypted value.
fn field<'a>(m: &'a Map<String, Value>, name: &str) -> Result<&'a str, String> {
    m.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("no `{name}` string"))
}

/// Ruby's `Base64.decode64`, which skips line breaks (`Base64.encode64` writes one every 60
/// characters).
fn base64(m: &Map<String, Value>, name: &str) -> Result<Vec<u8>, String> {
    let text: Vec<u8> = field(m, name)?
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    BASE64
        .decode(&text)
        .map_err(|e| format!("`{name}` is not base64: {e}"))
}

fn cipher_is(m: &Map<String, Value>, want: &str) -> Result<(), String> {
    let got = field(m, "cipher")?;
    if got != want {
        return Err(format!(
            "cipher {got:?} is not the {want} of its format version"
        ));
    }
    Ok(())
}

fn aes_key(key: &Secret) -> [u8; 32] {
    let d = ring::digest::digest(&ring::digest::SHA256, &key.0);
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// Versions 1 and 2: AES-256-CBC.
fn cbc(m: &Map<String, Value>, key: &Secret) -> Result<Vec<u8>, String> {
    use cbc::cipher::{BlockDecryptMut, KeyIvInit, block_padding::Pkcs7};
    cipher_is(m, "aes-256-cbc")?;
    let iv = base64(m, "iv")?;
    let data = base64(m, "encrypted_data")?;
    let d = cbc::Decryptor::<aes::Aes256>::new_from_slices(&aes_key(key), &iv)
        .map_err(|_| format!("`iv` is {} bytes, not 16", iv.len()))?;
    d.decrypt_padded_vec_mut::<Pkcs7>(&data).map_err(|_| {
        "bad decrypt; most likely the secret is not the one the item was encrypted with".into()
    })
}

/// Version 2's `hmac`, checked before decrypting, in constant time.
fn check_hmac(m: &Map<String, Value>, key: &Secret) -> Result<(), String> {
    let invalid = "invalid hmac; most likely the secret is not the one the item was encrypted with";
    let Some(Value::String(_)) = m.get("hmac") else {
        return Err(invalid.into());
    };
    let tag = base64(m, "hmac")?;
    let k = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key.0);
    ring::hmac::verify(&k, field(m, "encrypted_data")?.as_bytes(), &tag)
        .map_err(|_| invalid.to_string())
}

/// Version 3: AES-256-GCM with its `auth_tag`.
fn gcm(m: &Map<String, Value>, key: &Secret) -> Result<Vec<u8>, String> {
    use ring::aead::{AES_256_GCM, Aad, LessSafeKey, Nonce, UnboundKey};
    cipher_is(m, "aes-256-gcm")?;
    let iv = base64(m, "iv")?;
    let tag = base64(m, "auth_tag")
        .map_err(|_| "invalid authentication tag; most likely the data is corrupted".to_string())?;
    if tag.len() != AES_256_GCM.tag_len() {
        return Err(format!("`auth_tag` is {} bytes, not 16", tag.len()));
    }
    let nonce = Nonce::try_assume_unique_for_key(&iv)
        .map_err(|_| format!("`iv` is {} bytes, not the 12 Chef writes", iv.len()))?;
    let mut data = base64(m, "encrypted_data")?;
    data.extend_from_slice(&tag);
    let k = UnboundKey::new(&AES_256_GCM, &aes_key(key)).map_err(|_| "bad key".to_string())?;
    let plain = LessSafeKey::new(k)
        .open_in_place(nonce, Aad::empty(), &mut data)
        .map_err(|_| {
            "authentication failed; most likely the secret is not the one the item was \
             encrypted with, or the item was altered"
                .to_string()
        })?;
    Ok(plain.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chef_decides_what_looks_encrypted_by_the_exact_keys_of_each_version() {
        let v1 = json!({"encrypted_data": "x", "iv": "y", "version": 1, "cipher": "aes-256-cbc"});
        assert_eq!(shape(&json!({"id": "a", "p": v1})), Shape::Encrypted);
        assert_eq!(shape(&json!({"id": "a"})), Shape::Plain);
        assert_eq!(shape(&json!({"id": "a", "p": v1, "q": 1})), Shape::Mixed);
        let extra =
            json!({"encrypted_data": "x", "iv": "y", "version": 1, "cipher": "c", "hmac": "z"});
        assert_eq!(shape(&json!({"id": "a", "p": extra})), Shape::Mixed);
        assert_eq!(
            shape(&json!({"id": "a", "p": {"version": 1}})),
            Shape::Plain
        );
    }

    #[test]
    fn the_secret_is_stripped_as_ruby_strips_and_never_empty() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s");
        std::fs::write(&p, b"\0 \tsec ret\r\n\n").unwrap();
        assert_eq!(DataBagSecret::new(&p).read().unwrap().0, b"sec ret");
        std::fs::write(&p, b" \n").unwrap();
        let e = DataBagSecret::new(&p).read().err().unwrap();
        assert!(
            e.contains("empty") && e.contains(&p.display().to_string()),
            "{e}"
        );
    }
}
