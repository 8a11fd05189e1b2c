//! Downloading an artifact (`file://` or `http://`) into a version dir: streamed into
//! `artifact.tmp`, size and sha256 checked, then renamed atomically to `artifact`.

use std::path::{Path, PathBuf};

use convoy_actors::domain::Artifact;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::state::sync_dir;

/// Why a download failed; the text is what the node reports.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The bytes are not the published ones.
    #[error("sha256 mismatch: expected {expected}, got {got}")]
    Sha256 {
        /// Published hash.
        expected: String,
        /// Hash of what arrived.
        got: String,
    },
    /// Not the published size.
    #[error("size mismatch: expected {expected} bytes, got {got}")]
    Size {
        /// Published size.
        expected: u64,
        /// Bytes that arrived.
        got: u64,
    },
    /// A URL scheme the agent does not speak.
    #[error("unsupported artifact url {0}: only file:// and http(s):// are supported")]
    Scheme(String),
    /// The source could not be read.
    #[error("download of {url} failed: {reason}")]
    Source {
        /// The URL.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The local file could not be written.
    #[error("cannot write {path}: {reason}")]
    Local {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
}

/// The file name of a downloaded artifact inside its version dir.
pub const ARTIFACT: &str = "artifact";

/// Fetches `artifact` into `version_dir/artifact`. On any failure nothing is left behind.
pub async fn fetch(
    http: &reqwest::Client,
    artifact: &Artifact,
    version_dir: &Path,
) -> Result<PathBuf, FetchError> {
    let local = |path: &Path, e: std::io::Error| FetchError::Local {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    tokio::fs::create_dir_all(version_dir)
        .await
        .map_err(|e| local(version_dir, e))?;
    let tmp = version_dir.join(format!("{ARTIFACT}.tmp"));
    let dest = version_dir.join(ARTIFACT);
    let result = fetch_into(http, artifact, &tmp).await;
    let result = match result {
        Ok(()) => tokio::fs::rename(&tmp, &dest)
            .await
            .map_err(|e| local(&dest, e)),
        Err(e) => Err(e),
    };
    if let Err(e) = result {
        let _ = tokio::fs::remove_file(&tmp).await;
        return Err(e);
    }
    sync_dir(version_dir);
    Ok(dest)
}

async fn fetch_into(
    http: &reqwest::Client,
    artifact: &Artifact,
    tmp: &Path,
) -> Result<(), FetchError> {
    let url = artifact.url.as_str();
    let mut file = tokio::fs::File::create(tmp)
        .await
        .map_err(|e| FetchError::Local {
            path: tmp.display().to_string(),
            reason: e.to_string(),
        })?;
    let mut sink = Sink {
        file: &mut file,
        hasher: Sha256::new(),
        len: 0,
        path: tmp,
        limit: artifact.size,
    };
    let source = |reason: String| FetchError::Source {
        url: url.to_string(),
        reason,
    };
    if let Some(path) = url.strip_prefix("file://") {
        let mut src = tokio::fs::File::open(path)
            .await
            .map_err(|e| source(e.to_string()))?;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = src
                .read(&mut buf)
                .await
                .map_err(|e| source(e.to_string()))?;
            if n == 0 {
                break;
            }
            sink.write(&buf[..n]).await?;
        }
    } else if url.starts_with("http://") || url.starts_with("https://") {
        let mut response = http
            .get(url)
            .send()
            .await
            .map_err(|e| source(e.to_string()))?;
        if !response.status().is_success() {
            return Err(source(format!("HTTP {}", response.status())));
        }
        while let Some(chunk) = response.chunk().await.map_err(|e| source(e.to_string()))? {
            sink.write(&chunk).await?;
        }
    } else {
        return Err(FetchError::Scheme(url.to_string()));
    }
    let (len, got) = (sink.len, hex::encode(sink.hasher.finalize()));
    file.sync_all().await.map_err(|e| FetchError::Local {
        path: tmp.display().to_string(),
        reason: e.to_string(),
    })?;
    if let Some(expected) = artifact.size {
        if expected != len {
            return Err(FetchError::Size { expected, got: len });
        }
    }
    if let Some(expected) = &artifact.sha256 {
        if !expected.trim().eq_ignore_ascii_case(&got) {
            return Err(FetchError::Sha256 {
                expected: expected.trim().to_ascii_lowercase(),
                got,
            });
        }
    }
    Ok(())
}

/// Writes, hashes and counts the bytes; stops early once more than the published size arrived.
struct Sink<'a> {
    file: &'a mut tokio::fs::File,
    hasher: Sha256,
    len: u64,
    path: &'a Path,
    limit: Option<u64>,
}

impl Sink<'_> {
    async fn write(&mut self, bytes: &[u8]) -> Result<(), FetchError> {
        self.len += bytes.len() as u64;
        if let Some(expected) = self.limit {
            if self.len > expected {
                return Err(FetchError::Size {
                    expected,
                    got: self.len,
                });
            }
        }
        self.hasher.update(bytes);
        self.file
            .write_all(bytes)
            .await
            .map_err(|e| FetchError::Local {
                path: self.path.display().to_string(),
                reason: e.to_string(),
            })
    }
}

/// The hex sha256 of `bytes` (for tests and tools).
#[cfg(test)]
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}
