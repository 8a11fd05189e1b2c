//! Token secrets: made from 32 random bytes (`cvy_` + 64 hex digits), hashed with sha256 before anything
//! keeps them, and read from `Authorization: Bearer` headers and token files.

use std::path::Path;

use convoy_actors::domain::SecretHash;
use rand::RngCore;
use sha2::{Digest, Sha256};

/// Every secret convoy makes starts with this, so a leaked one is easy to recognise and search for.
pub const SECRET_PREFIX: &str = "cvy_";

/// Shortest secret accepted from a bootstrap or token file (a person may write their own).
pub const MIN_SECRET_LEN: usize = 16;

/// Longest bearer value even hashed (anything longer cannot be a token).
pub const MAX_SECRET_LEN: usize = 512;

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

/// Why a token file cannot be used. Never holds the file's content.
#[derive(Debug, thiserror::Error)]
pub enum SecretFileError {
    /// The file cannot be read.
    #[error("cannot read token file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file's secret is too short or too long, or not one line of printable text.
    #[error("token file {path} must hold one secret of {MIN_SECRET_LEN}-{MAX_SECRET_LEN} printable characters (found {len} bytes)")]
    Malformed {
        /// The file.
        path: String,
        /// Its trimmed length.
        len: usize,
    },
}

/// The secret in a token file: its content without surrounding whitespace.
pub fn read_file(path: &Path) -> Result<String, SecretFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| SecretFileError::Read {
        path: path.display().to_string(),
        source,
    })?;
    let secret = text.trim();
    let printable = secret.chars().all(|c| c.is_ascii_graphic());
    if !(MIN_SECRET_LEN..=MAX_SECRET_LEN).contains(&secret.len()) || !printable {
        return Err(SecretFileError::Malformed {
            path: path.display().to_string(),
            len: secret.len(),
        });
    }
    Ok(secret.to_string())
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

    #[test]
    fn token_files_are_trimmed_and_checked_without_echoing_them() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good");
        std::fs::write(&good, "cvy_0123456789abcdef\n").unwrap();
        assert_eq!(read_file(&good).unwrap(), "cvy_0123456789abcdef");
        let short = dir.path().join("short");
        std::fs::write(&short, "cvy_secret").unwrap();
        let e = read_file(&short).unwrap_err().to_string();
        assert!(e.contains("16-512") && !e.contains("cvy_secret"), "{e}");
        let missing = read_file(&dir.path().join("none")).unwrap_err();
        assert!(missing.to_string().contains("none"), "{missing}");
    }
}
