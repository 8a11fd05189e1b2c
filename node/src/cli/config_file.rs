//! The CLI's own file of named contexts, `$XDG_CONFIG_HOME/convoy/config.toml` (else
//! `~/.config/convoy/config.toml`): for each context the servers, the token secret and the CA, and which
//! context is current. `convoy login` writes it: mode 0600 in a directory of mode 0700, replaced whole
//! (a temp file renamed over it), never printed with its secret; every client command reads it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The largest config file read (a bigger one is refused, not read).
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Contexts one file may hold.
pub const MAX_CONTEXTS: usize = 100;
/// Longest context name.
pub const MAX_NAME_LEN: usize = 64;
/// Longest `server` value of a context (comma-separated addresses).
pub const MAX_SERVER_LEN: usize = 4096;

/// Why the config file cannot be used. Never holds a secret: a parse error names the line, not its text.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// Neither `XDG_CONFIG_HOME` nor `HOME` is set to an absolute path.
    #[error(
        "cannot find the CLI's config file: neither XDG_CONFIG_HOME nor HOME is an absolute path"
    )]
    NoHome,
    /// The file or its directory cannot be read or written.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done (`cannot read`, `cannot write`, ...).
        what: &'static str,
        /// The file or directory.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file holds a token and group or others may read or write it.
    #[error(transparent)]
    NotPrivate(#[from] crate::common::private_file::PrivateFileError),
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("config file {path} is {bytes} bytes, more than the {MAX_FILE_BYTES} read")]
    TooLarge {
        /// The file.
        path: String,
        /// Its size.
        bytes: u64,
    },
    /// The file is not TOML of the expected shape.
    #[error("config file {path}: {reason}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong, with the line and column (never the line's text).
        reason: String,
    },
    /// A context name is not 1-64 letters, digits, '-', '_' or '.'.
    #[error("invalid context name {name:?}: 1-{MAX_NAME_LEN} letters, digits, '-', '_' or '.'")]
    BadName {
        /// The name given (cut to 100 characters).
        name: String,
    },
    /// The named context does not exist.
    #[error("no context {name:?} in {path} (known: {known})")]
    UnknownContext {
        /// The name given.
        name: String,
        /// The file.
        path: String,
        /// The contexts it has.
        known: String,
    },
    /// A new context would exceed [`MAX_CONTEXTS`].
    #[error("{path} already holds {MAX_CONTEXTS} contexts: delete one first (convoy context delete NAME)")]
    Full {
        /// The file.
        path: String,
    },
}

/// One named context: where the cluster is and how to authenticate to it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Context {
    /// The servers, comma-separated, as `--server` takes them.
    pub server: String,
    /// The API token's secret (absent: no `Authorization` header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// A PEM CA to trust for `https://` servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
}

impl fmt::Debug for Context {
    /// Never shows the secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("server", &self.server)
            .field("token", &self.token.as_ref().map(|_| "<secret>"))
            .field("ca_file", &self.ca_file)
            .finish()
    }
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The context commands use when `--context`/`CONVOY_CONTEXT` names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    /// The contexts by name.
    #[serde(default)]
    pub contexts: BTreeMap<String, Context>,
}

/// Where the file is, from the environment `env` gives: `$XDG_CONFIG_HOME/convoy/config.toml` when
/// that is an absolute path (the XDG rule: a relative one is ignored), else `$HOME/.config/convoy/config.toml`.
pub fn path_from(env: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, ConfigFileError> {
    let absolute = |key: &str| env(key).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(dir) = absolute("XDG_CONFIG_HOME") {
        return Ok(dir.join("convoy").join("config.toml"));
    }
    absolute("HOME")
        .map(|home| home.join(".config").join("convoy").join("config.toml"))
        .ok_or(ConfigFileError::NoHome)
}

/// Where the file is for this process.
pub fn path() -> Result<PathBuf, ConfigFileError> {
    path_from(|key| std::env::var_os(key))
}

/// Checks a context name.
pub fn check_name(name: &str) -> Result<(), ConfigFileError> {
    let ok = (1..=MAX_NAME_LEN).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ConfigFileError::BadName {
            name: name.chars().take(100).collect(),
        })
    }
}

impl ConfigFile {
    /// Reads the file at `path`; a missing file is an empty one. A file holding a token must be private
    /// (`crate::common::private_file`).
    pub fn load(path: &Path) -> Result<Self, ConfigFileError> {
        let shown = path.display().to_string();
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => {
                return Err(ConfigFileError::Io {
                    what: "cannot read",
                    path: shown,
                    source,
                })
            }
        };
        if meta.len() > MAX_FILE_BYTES {
            return Err(ConfigFileError::TooLarge {
                path: shown,
                bytes: meta.len(),
            });
        }
        let text = std::fs::read_to_string(path).map_err(|source| ConfigFileError::Io {
            what: "cannot read",
            path: shown.clone(),
            source,
        })?;
        let file = Self::parse(&text).map_err(|reason| ConfigFileError::Invalid {
            path: shown,
            reason,
        })?;
        if file.contexts.values().any(|c| c.token.is_some()) {
            crate::common::private_file::check(path)?;
        }
        Ok(file)
    }

    /// The file's text as a config, or why not (the line and column, never the text of the line, which
    /// may hold a secret).
    pub fn parse(text: &str) -> Result<Self, String> {
        let file: ConfigFile = toml::from_str(text).map_err(|e| {
            let at = e
                .span()
                .map(|span| {
                    let before = &text.as_bytes()[..span.start.min(text.len())];
                    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
                    format!(" (line {line})")
                })
                .unwrap_or_default();
            format!("{}{at}", e.message().trim())
        })?;
        if file.contexts.len() > MAX_CONTEXTS {
            return Err(format!(
                "{} contexts, more than the {MAX_CONTEXTS} allowed",
                file.contexts.len()
            ));
        }
        for (name, context) in &file.contexts {
            check_name(name).map_err(|e| e.to_string())?;
            if context.server.trim().is_empty() || context.server.len() > MAX_SERVER_LEN {
                return Err(format!(
                    "context {name:?}: server must be 1-{MAX_SERVER_LEN} bytes"
                ));
            }
        }
        Ok(file)
    }

    /// The context named `name`, or an error listing the known ones.
    pub fn context(&self, name: &str, path: &Path) -> Result<&Context, ConfigFileError> {
        self.contexts
            .get(name)
            .ok_or_else(|| ConfigFileError::UnknownContext {
                name: name.chars().take(100).collect(),
                path: path.display().to_string(),
                known: self.known(),
            })
    }

    /// The context names, comma-separated (`none` when there are none).
    pub fn known(&self) -> String {
        if self.contexts.is_empty() {
            "none: add one with convoy login".into()
        } else {
            self.contexts
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        }
    }

    /// Adds or replaces the context `name` (refused past [`MAX_CONTEXTS`]).
    pub fn insert(
        &mut self,
        name: &str,
        context: Context,
        path: &Path,
    ) -> Result<(), ConfigFileError> {
        check_name(name)?;
        if !self.contexts.contains_key(name) && self.contexts.len() >= MAX_CONTEXTS {
            return Err(ConfigFileError::Full {
                path: path.display().to_string(),
            });
        }
        self.contexts.insert(name.to_string(), context);
        Ok(())
    }

    /// Writes the file at `path`: its directory created (mode 0700, and set to 0700 if it exists), the
    /// text written to a temp file of mode 0600 beside it and renamed over the old file.
    pub fn save(&self, path: &Path) -> Result<(), ConfigFileError> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let io = |what: &'static str, at: &Path| {
            let at = at.display().to_string();
            move |source: std::io::Error| ConfigFileError::Io {
                what,
                path: at,
                source,
            }
        };
        private_dir(dir).map_err(io("cannot create directory", dir))?;
        let text = toml::to_string(self).map_err(|e| ConfigFileError::Invalid {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        // tempfile creates its files with mode 0600.
        let mut file = tempfile::NamedTempFile::new_in(dir).map_err(io("cannot write in", dir))?;
        file.write_all(text.as_bytes())
            .and_then(|()| file.as_file().sync_all())
            .map_err(io("cannot write", file.path()))?;
        file.persist(path)
            .map_err(|e| io("cannot write", path)(e.error))?;
        Ok(())
    }
}

/// Creates `dir` (and missing parents) with mode 0700, or sets an existing one to 0700.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

#[cfg(test)]
#[path = "config_file_test.rs"]
mod tests;
