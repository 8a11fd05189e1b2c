//! `max_failed_nodes` as a count (`3`) or a percentage of the deployment's nodes (`"10%"`).

use crate::values::invalid::{quote, Invalid};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// Failed nodes a deployment tolerates: a count, or a percentage of its node set (rounded down).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailedNodes {
    /// At most this many.
    Count(u32),
    /// At most this percentage (0–100) of the deployment's nodes, rounded down.
    Percent(u32),
}

impl FailedNodes {
    /// The tolerated count for a deployment of `nodes` nodes.
    pub fn of(self, nodes: u32) -> u32 {
        match self {
            FailedNodes::Count(n) => n,
            FailedNodes::Percent(p) => (u64::from(nodes) * u64::from(p) / 100) as u32,
        }
    }

    /// Refuses a percentage over 100.
    pub fn validate(self) -> Result<(), Invalid> {
        match self {
            FailedNodes::Percent(p) if p > 100 => Err(Invalid::new(
                "max_failed_nodes",
                format!("{p}%"),
                "a percentage is at most 100%",
            )),
            _ => Ok(()),
        }
    }
}

impl fmt::Display for FailedNodes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailedNodes::Count(n) => write!(f, "{n}"),
            FailedNodes::Percent(p) => write!(f, "{p}%"),
        }
    }
}

impl FromStr for FailedNodes {
    type Err = String;

    /// `3` or `10%`.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{}: expected a count (3) or a percentage (10%)", quote(s));
        match s.trim().strip_suffix('%') {
            Some(p) => p
                .trim()
                .parse()
                .map(FailedNodes::Percent)
                .map_err(|_| bad()),
            None => s.trim().parse().map(FailedNodes::Count).map_err(|_| bad()),
        }
    }
}

/// The compact (bincode) form.
#[derive(Serialize, Deserialize)]
enum Repr {
    Count(u32),
    Percent(u32),
}

/// The JSON form: a number or a `"N%"` string.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Json {
    Count(u32),
    Text(String),
}

impl Serialize for FailedNodes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            return match self {
                FailedNodes::Count(n) => Json::Count(*n),
                FailedNodes::Percent(_) => Json::Text(self.to_string()),
            }
            .serialize(s);
        }
        match *self {
            FailedNodes::Count(n) => Repr::Count(n),
            FailedNodes::Percent(p) => Repr::Percent(p),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for FailedNodes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if d.is_human_readable() {
            return match Json::deserialize(d)? {
                Json::Count(n) => Ok(FailedNodes::Count(n)),
                Json::Text(t) => t.parse().map_err(serde::de::Error::custom),
            };
        }
        Ok(match Repr::deserialize(d)? {
            Repr::Count(n) => FailedNodes::Count(n),
            Repr::Percent(p) => FailedNodes::Percent(p),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_percentages_read_write_and_resolve() {
        let ten: FailedNodes = serde_json::from_value(serde_json::json!("10%")).unwrap();
        assert_eq!(ten, FailedNodes::Percent(10));
        assert_eq!(serde_json::to_value(ten).unwrap(), "10%");
        let three: FailedNodes = serde_json::from_value(serde_json::json!(3)).unwrap();
        assert_eq!(serde_json::to_value(three).unwrap(), 3);
        assert_eq!((ten.of(25), ten.of(9), three.of(25)), (2, 0, 3));
        assert!(serde_json::from_value::<FailedNodes>(serde_json::json!("ten")).is_err());
        assert!(FailedNodes::Percent(101).validate().is_err());
        assert_eq!("50%".parse(), Ok(FailedNodes::Percent(50)));
        let bytes = bincode::serde::encode_to_vec(ten, bincode::config::standard()).unwrap();
        let (back, _): (FailedNodes, _) =
            bincode::serde::decode_from_slice(&bytes, bincode::config::standard()).unwrap();
        assert_eq!(back, ten);
    }
}
