//! `[[analysis_provider]]` in a server's config: as written in the file, and resolved (the address parsed,
//! the timeout bounded, the headers read from their file, which only its owner may read, and checked).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::config_error::{invalid, ConfigError};

/// Most providers in one config.
pub const MAX_PROVIDERS: usize = 16;
/// Most headers in a headers file.
pub const MAX_HEADERS: usize = 16;
/// The default query timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest query timeout.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(120);

/// One `[[analysis_provider]]` as written.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ProviderFile {
    /// The name analyses refer to.
    pub name: String,
    /// Prometheus' base address (`http://127.0.0.1:9090`).
    pub prometheus: String,
    /// Query timeout (`10s`, the default).
    #[serde(default)]
    pub timeout: Option<String>,
    /// A file of `Name: value` lines sent with every query (e.g. `Authorization: Bearer ...`).
    #[serde(default)]
    pub headers_file: Option<PathBuf>,
}

/// A resolved provider.
#[derive(Clone)]
pub struct Provider {
    /// The name analyses refer to.
    pub name: String,
    /// Prometheus' base address, without a trailing `/`.
    pub base: reqwest::Url,
    /// Query timeout.
    pub timeout: Duration,
    /// Headers sent with every query (values never logged nor shown).
    pub headers: reqwest::header::HeaderMap,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("name", &self.name)
            .field("base", &self.base.as_str())
            .field("timeout", &self.timeout)
            .field("headers", &self.headers.len())
            .finish()
    }
}

/// Resolves and checks the config's providers; relative header files are relative to `base_dir`.
pub fn resolve(files: Vec<ProviderFile>, base_dir: &Path) -> Result<Vec<Provider>, ConfigError> {
    if files.len() > MAX_PROVIDERS {
        return Err(invalid(
            "analysis_provider",
            &files.len().to_string(),
            "at most 16 providers",
        ));
    }
    let mut out: Vec<Provider> = Vec::with_capacity(files.len());
    for f in files {
        let shown: String = f.name.chars().take(64).collect();
        if !convoy_actors::domain::analysis::spec::is_metric_name(&f.name) {
            return Err(invalid(
                "analysis_provider.name",
                &shown,
                "1 to 64 letters, digits, '-', '_' or '.'",
            ));
        }
        if out.iter().any(|p| p.name == f.name) {
            return Err(invalid(
                "analysis_provider.name",
                &shown,
                "provider names are unique",
            ));
        }
        let shown_url: String = f.prometheus.chars().take(100).collect();
        let base = reqwest::Url::parse(f.prometheus.trim_end_matches('/'))
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
            .ok_or_else(|| {
                invalid(
                    "analysis_provider.prometheus",
                    &shown_url,
                    "an http:// or https:// address",
                )
            })?;
        let timeout = match &f.timeout {
            None => DEFAULT_TIMEOUT,
            Some(t) => convoy_time::parse_duration(t)
                .ok()
                .filter(|d| !d.is_zero() && *d <= MAX_TIMEOUT)
                .ok_or_else(|| {
                    invalid(
                        "analysis_provider.timeout",
                        &t.chars().take(30).collect::<String>(),
                        "a duration from 1ms to 120s",
                    )
                })?,
        };
        let headers = match &f.headers_file {
            None => reqwest::header::HeaderMap::new(),
            Some(path) => {
                let path = if path.is_relative() {
                    base_dir.join(path)
                } else {
                    path.clone()
                };
                crate::config_checks::private_file("analysis_provider.headers_file", &path)?;
                let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
                    path: path.clone(),
                    source,
                })?;
                parse_headers(&text)?
            }
        };
        out.push(Provider {
            name: f.name,
            base,
            timeout,
            headers,
        });
    }
    Ok(out)
}

/// `Name: value` lines (blank lines and `#` comments skipped); a refused value is never echoed.
pub fn parse_headers(text: &str) -> Result<reqwest::header::HeaderMap, ConfigError> {
    let mut map = reqwest::header::HeaderMap::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, value) = line.split_once(':').ok_or_else(|| {
            invalid(
                "analysis_provider.headers_file",
                "(a line)",
                "each line is `Name: value`",
            )
        })?;
        let name =
            reqwest::header::HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
                invalid(
                    "analysis_provider.headers_file",
                    &name.trim().chars().take(40).collect::<String>(),
                    "not a header name",
                )
            })?;
        let mut value = reqwest::header::HeaderValue::from_str(value.trim()).map_err(|_| {
            invalid(
                "analysis_provider.headers_file",
                name.as_str(),
                "the header's value is not valid (not shown)",
            )
        })?;
        value.set_sensitive(true);
        map.append(name, value);
        if map.len() > MAX_HEADERS {
            return Err(invalid(
                "analysis_provider.headers_file",
                &map.len().to_string(),
                "at most 16 headers",
            ));
        }
    }
    Ok(map)
}

#[cfg(test)]
#[path = "provider_test.rs"]
mod tests;
