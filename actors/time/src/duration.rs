//! The one duration parser for everything people type: flags, `CONVOY_*` variables, config keys.
//!
//! A duration is written as `humantime` reads it: `250ms`, `30s`, `2m`, `1h30m`, `2m 30s`, `7d`.
//! **A bare number has no unit of its own**: [`parse_duration`] refuses it (the error suggests
//! `Ns` and `Nms`), `0` excepted, which is zero in every unit. Only a flag or key whose name ends in
//! its unit (`--heartbeat-ms`, `node_timeout_ms`) reads a bare number, as that unit:
//! [`parse_millis`] takes `1500` as 1500 ms (and `2s` as 2000).

use std::time::Duration;

/// How much of a refused value an error repeats.
const SHOWN: usize = 100;

/// Why a duration was refused. A flag's parser (clap) names the flag before this message; a config
/// key's error names the key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// A number without a unit where the name does not give one.
    #[error("{value:?} has no unit: write {value}s for seconds or {value}ms for milliseconds")]
    BareNumber {
        /// The number as given.
        value: String,
    },
    /// Not a duration at all.
    #[error("{value:?} is not a duration ({reason}): write e.g. 30s, 2m, 1h30m or 250ms")]
    Invalid {
        /// The value as given (at most 100 bytes of it).
        value: String,
        /// What `humantime` said.
        reason: String,
    },
    /// More milliseconds than a `u64` holds.
    #[error("{value:?} is too long a duration")]
    TooLong {
        /// The value as given (at most 100 bytes of it).
        value: String,
    },
}

fn shown(raw: &str) -> String {
    let mut end = raw.len().min(SHOWN);
    while !raw.is_char_boundary(end) {
        end -= 1;
    }
    raw[..end].to_string()
}

/// A duration with its unit (`30s`, `2m`, `1h30m`, `250ms`); a bare number other than `0` is refused.
pub fn parse_duration(raw: &str) -> Result<Duration, DurationError> {
    let raw = raw.trim();
    if raw != "0" && !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(DurationError::BareNumber { value: shown(raw) });
    }
    humantime::parse_duration(raw).map_err(|e| DurationError::Invalid {
        value: shown(raw),
        reason: e.to_string(),
    })
}

/// Milliseconds for a flag or key whose name ends in `-ms`/`_ms`: a bare number is milliseconds (the
/// name says so); a duration with a unit is read like [`parse_duration`] reads it.
pub fn parse_millis(raw: &str) -> Result<u64, DurationError> {
    let raw = raw.trim();
    if let Ok(ms) = raw.parse::<u64>() {
        return Ok(ms);
    }
    let d = parse_duration(raw)?;
    u64::try_from(d.as_millis()).map_err(|_| DurationError::TooLong { value: shown(raw) })
}

#[cfg(test)]
#[path = "duration_test.rs"]
mod tests;
