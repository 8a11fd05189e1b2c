//! Why a server configuration is refused: one error type naming the key, the value and the fix, for the
//! merge (`config.rs`), the sources (`config_sources.rs`) and the checks (`config_checks.rs`).

use std::path::PathBuf;

use crate::config_checks::Refusal;

/// Why a configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file that could not be read: the config file, or the cluster secret file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The config file is not valid TOML for convoy.
    #[error("invalid config file {path}: {source}")]
    Parse {
        /// The config file's path, as given.
        path: PathBuf,
        /// What the parser said.
        source: Box<toml::de::Error>,
    },
    /// A required key is missing everywhere.
    #[error("missing `{key}`: set it in the config file, as --{flag} or as {env}")]
    Missing {
        /// The TOML key.
        key: &'static str,
        /// The flag name.
        flag: &'static str,
        /// The environment variable.
        env: &'static str,
    },
    /// A key has a value convoy cannot use.
    #[error("invalid `{key}` = {value:?}: {reason}")]
    Invalid {
        /// The TOML key whose value is refused, whether the value came from the file, a flag or a
        /// variable.
        key: &'static str,
        /// The offending value.
        value: String,
        /// Why the value is refused, e.g. `expected host:port`.
        reason: String,
    },
}

impl From<Refusal> for ConfigError {
    fn from(r: Refusal) -> Self {
        ConfigError::Invalid {
            key: r.key,
            value: r.value,
            reason: r.reason,
        }
    }
}

/// A refusal of `value` for `key`, saying why.
pub(crate) fn invalid(key: &'static str, value: &str, reason: &str) -> ConfigError {
    ConfigError::Invalid {
        key,
        value: value.to_string(),
        reason: reason.to_string(),
    }
}
