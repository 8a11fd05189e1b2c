//! Token files, read alike by the server (`bootstrap_token_file`), the CLI (`--token-file`), the agent
//! and the simulator: one secret in a file only its owner may read, trimmed and checked, never echoed in an
//! error.

use std::path::Path;

/// Shortest secret accepted from a bootstrap or token file (a person may write their own).
pub const MIN_SECRET_LEN: usize = 16;

/// Longest bearer value even hashed (anything longer cannot be a token).
pub const MAX_SECRET_LEN: usize = 512;

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
    /// Group or others may read or write the file.
    #[error(transparent)]
    NotPrivate(#[from] super::private_file::PrivateFileError),
    /// The file's secret is too short or too long, or not one line of printable text.
    #[error("token file {path} must hold one secret of {MIN_SECRET_LEN}-{MAX_SECRET_LEN} printable characters (found {len} bytes)")]
    Malformed {
        /// The file.
        path: String,
        /// Its trimmed length.
        len: usize,
    },
}

/// The secret in a token file: its content without surrounding whitespace. The file must be private
/// (`super::private_file`).
pub fn read_file(path: &Path) -> Result<String, SecretFileError> {
    super::private_file::check(path)?;
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
#[path = "token_file_test.rs"]
mod tests;
