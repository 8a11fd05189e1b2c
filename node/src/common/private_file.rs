//! Files that hold a secret (the cluster secret, token files, a provider's headers, the CLI's config file)
//! are their owner's alone: one check, used by every reader, that group and others may neither read nor
//! write them.

use std::path::Path;

/// Why a secret's file is not private. Never holds the file's content.
#[derive(Debug, thiserror::Error)]
pub enum PrivateFileError {
    /// Its mode cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Group or others may read or write it.
    #[error("{path} holds a secret but group or others may read or write it (mode {mode:04o}): run `chmod 600 {path}`")]
    Loose {
        /// The file.
        path: String,
        /// Its permission bits (`0o644`).
        mode: u32,
    },
}

/// Ok when only its owner may read or write the file at `path` (mode `0600` or stricter).
#[cfg(unix)]
pub fn check(path: &Path) -> Result<(), PrivateFileError> {
    use std::os::unix::fs::PermissionsExt;
    let shown = || path.display().to_string();
    let mode = std::fs::metadata(path)
        .map_err(|source| PrivateFileError::Read {
            path: shown(),
            source,
        })?
        .permissions()
        .mode()
        & 0o777;
    if mode & 0o077 != 0 {
        return Err(PrivateFileError::Loose {
            path: shown(),
            mode,
        });
    }
    Ok(())
}

/// Elsewhere the file's mode says nothing of who may read it.
#[cfg(not(unix))]
pub fn check(_path: &Path) -> Result<(), PrivateFileError> {
    Ok(())
}

#[cfg(test)]
#[path = "private_file_test.rs"]
mod tests;
