//! Token secrets: made from 32 random bytes (`cvy_` + 64 hex digits), hashed with sha256 before anything
//! keeps them, and read from `Authorization: Bearer` headers (token files: `crate::common::token_file`).

use convoy_actors::domain::SecretHash;
use rand::RngCore;
use sha2::{Digest, Sha256};

/// Every secret convoy makes starts with this, so a leaked one is easy to recognise and search for.
pub const SECRET_PREFIX: &str = "cvy_";

pub use crate::common::token_file::MAX_SECRET_LEN;

/// A fresh secret: `cvy_` and 32 bytes from the operating system's generator, hex-encoded.
pub fn generate() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{SECRET_PREFIX}{}", hex::encode(bytes))
}

/// The sha256 of a secret's bytes: all that the replicated state keeps.
pub fn hash(secret: &str) -> SecretHash {
    Sha256::digest(secret.as_bytes()).into()
}

/// The secret of an `Authorization: Bearer <secret>` value (scheme case-insensitive), if it is one.
pub fn bearer(header: &str) -> Option<&str> {
    let (scheme, rest) = header.split_once(' ')?;
    let secret = rest.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !secret.is_empty() && secret.len() <= MAX_SECRET_LEN)
        .then_some(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_prefixed_random_and_hash_to_sha256() {
        let a = generate();
        let b = generate();
        assert_ne!(a, b);
        assert!(a.starts_with(SECRET_PREFIX) && a.len() == 4 + 64, "{a}");
        assert!(a[4..].chars().all(|c| c.is_ascii_hexdigit()));
        // sha256("abc"), the FIPS 180-2 test vector.
        assert_eq!(
            hex::encode(hash("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_ne!(hash(&a), hash(&b));
    }

    #[test]
    fn bearer_headers_are_parsed_strictly() {
        assert_eq!(bearer("Bearer cvy_abc"), Some("cvy_abc"));
        assert_eq!(bearer("bearer  cvy_abc "), Some("cvy_abc"));
        assert_eq!(bearer("Basic dXNlcjpwdw=="), None);
        assert_eq!(bearer("Bearer "), None);
        assert_eq!(bearer("cvy_abc"), None);
        assert_eq!(bearer(&format!("Bearer {}", "x".repeat(600))), None);
    }
}
