//! Log output of every `convoy` command: `text` (human, ANSI colours only on a terminal) or `json` (one
//! object per line with the event's fields at the top level, for log shippers). The default is text when
//! standard error is a terminal, JSON otherwise; `--log-format`, `CONVOY_LOG_FORMAT` or the server's
//! `log_format` config key choose.

use std::io::IsTerminal;

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines (ANSI colours only on a terminal).
    Text,
    /// One JSON object per line.
    Json,
}

impl LogFormat {
    /// The format used when nothing chooses one: text on a terminal, JSON otherwise.
    pub fn default_for(terminal: bool) -> Self {
        if terminal {
            LogFormat::Text
        } else {
            LogFormat::Json
        }
    }

    /// Parses a config value (`text` or `json`).
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "text" => Some(LogFormat::Text),
            "json" => Some(LogFormat::Json),
            _ => None,
        }
    }
}

/// The filter when `RUST_LOG` is not set. openraft logs a WARN for every failed heartbeat and
/// replication RPC (about 18 a second while a follower is down); the transport says the same once
/// when a peer goes, once when it is back, and in a summary a minute (`convoy_raft::network::standing`).
pub const DEFAULT_FILTER: &str = "info,openraft=error";

/// Installs the global subscriber writing to standard error in `format` (or the default for it).
/// The filter is `RUST_LOG`, else [`DEFAULT_FILTER`].
pub fn init(format: Option<LogFormat>) {
    let terminal = std::io::stderr().is_terminal();
    let format = format.unwrap_or(LogFormat::default_for(terminal));
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| DEFAULT_FILTER.into());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.with_ansi(terminal).init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .init(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_on_a_terminal_json_otherwise_and_config_values_parse() {
        assert_eq!(LogFormat::default_for(true), LogFormat::Text);
        assert_eq!(LogFormat::default_for(false), LogFormat::Json);
        assert_eq!(LogFormat::parse("json"), Some(LogFormat::Json));
        assert_eq!(LogFormat::parse("text"), Some(LogFormat::Text));
        assert_eq!(LogFormat::parse("xml"), None);
    }
}
