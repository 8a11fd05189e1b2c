//! Downloading an artifact (`file://` or `http://`) into a version dir: streamed into
//! `artifact.tmp`, size and sha256 checked, then renamed atomically to `artifact`. A source that
//! sends no byte for the stall timeout fails the attempt; a failed attempt leaves nothing behind,
//! so the next one starts from scratch. Errors name the URL without its credentials or query. Sources are
//! checked first: `file://` only under `--artifact-root`, `http://` only with `--allow-http`; copies are
//! 0600. A checksum mismatch names the published hash only, never the hash of a file the server cannot see.

use std::path::{Path, PathBuf};
use std::time::Duration;

use convoy_actors::domain::Artifact;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::state::sync_dir;

/// Why a download failed; the text is what the node reports.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The bytes are not the published ones.
    #[error("sha256 mismatch: the artifact is not the one published with sha256 {expected}")]
    Sha256 {
        /// Published hash.
        expected: String,
    },
    /// A source this agent is not allowed to read.
    #[error("artifact url {url} refused: {why}")]
    Refused {
        /// The URL (shown without credentials or query).
        url: String,
        /// Which rule refuses it.
        why: String,
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
    /// No byte arrived for the stall timeout.
    #[error("download of {url} stalled: no data for {ms} ms")]
    Stalled {
        /// The URL (shown without credentials or query).
        url: String,
        /// The stall timeout.
        ms: u64,
    },
    /// The source could not be read.
    #[error("download of {url} failed: {reason}")]
    Source {
        /// The URL (shown without credentials or query).
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

impl FetchError {
    /// Worth another attempt: the source failed on the way (not the bytes, the scheme or the disk).
    pub fn transient(&self) -> bool {
        matches!(self, FetchError::Source { .. } | FetchError::Stalled { .. })
    }
}

/// Where artifacts may come from.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    /// `file://` artifacts must lie under this directory (after resolving links); `None`: no `file://`.
    pub artifact_root: Option<PathBuf>,
    /// Plain `http://` is allowed (`https://` always is).
    pub allow_http: bool,
}

impl Sources {
    /// The local file a `file://` URL may be read from, or why not.
    fn local_file(&self, url: &str, path: &str) -> Result<PathBuf, FetchError> {
        let refused = |why: String| FetchError::Refused {
            url: shown_url(url),
            why,
        };
        let Some(root) = &self.artifact_root else {
            return Err(refused(
                "file:// artifacts need --artifact-root on the agent".into(),
            ));
        };
        let root = root
            .canonicalize()
            .map_err(|e| refused(format!("--artifact-root cannot be resolved: {e}")))?;
        let file = Path::new(path)
            .canonicalize()
            .map_err(|e| FetchError::Source {
                url: shown_url(url),
                reason: e.to_string(),
            })?;
        if !file.starts_with(&root) {
            return Err(refused("outside --artifact-root".into()));
        }
        Ok(file)
    }
}

/// The file name of a downloaded artifact inside its version dir.
pub const ARTIFACT: &str = "artifact";

/// `url` as errors and logs show it: without `user:password@`, with the query and fragment
/// replaced by `?…` (tokens live there), at most 100 bytes.
pub fn shown_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let cut = rest.find(['?', '#']).unwrap_or(rest.len());
    let (path, query) = rest.split_at(cut);
    let authority_end = path.find('/').unwrap_or(path.len());
    let path = match path[..authority_end].rfind('@') {
        Some(at) => &path[at + 1..],
        None => path,
    };
    let mut shown = if scheme.is_empty() {
        path.to_string()
    } else {
        format!("{scheme}://{path}")
    };
    if !query.is_empty() {
        shown.push_str("?…");
    }
    if shown.len() > 100 {
        let mut end = 100;
        while !shown.is_char_boundary(end) {
            end -= 1;
        }
        shown.truncate(end);
        shown.push('…');
    }
    shown
}

/// The text of `e` and its causes, without the URL reqwest puts in it.
fn reqwest_reason(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(&e);
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// Fetches `artifact` into `version_dir/artifact`; an attempt fails when no byte arrives for
/// `stall`. On any failure nothing is left behind.
pub async fn fetch(
    http: &reqwest::Client,
    artifact: &Artifact,
    version_dir: &Path,
    stall: Duration,
    sources: &Sources,
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
    let result = fetch_into(http, artifact, &tmp, stall, sources).await;
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
    stall: Duration,
    sources: &Sources,
) -> Result<(), FetchError> {
    let url = artifact.url.as_str();
    let local_source = match url.strip_prefix("file://") {
        Some(path) => Some(sources.local_file(url, path)?),
        None if url.starts_with("http://") && !sources.allow_http => {
            return Err(FetchError::Refused {
                url: shown_url(url),
                why: "plain http:// needs --allow-http on the agent".into(),
            })
        }
        None => None,
    };
    let stalled = || FetchError::Stalled {
        url: shown_url(url),
        ms: u64::try_from(stall.as_millis()).unwrap_or(u64::MAX),
    };
    let mut file = tokio::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(tmp)
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
        url: shown_url(url),
        reason,
    };
    if let Some(path) = local_source {
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
        let mut response = tokio::time::timeout(stall, http.get(url).send())
            .await
            .map_err(|_| stalled())?
            .map_err(|e| source(reqwest_reason(e)))?;
        if !response.status().is_success() {
            return Err(source(format!("HTTP {}", response.status())));
        }
        loop {
            let chunk = tokio::time::timeout(stall, response.chunk())
                .await
                .map_err(|_| stalled())?
                .map_err(|e| source(reqwest_reason(e)))?;
            let Some(chunk) = chunk else { break };
            sink.write(&chunk).await?;
        }
    } else {
        return Err(FetchError::Scheme(shown_url(url)));
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
