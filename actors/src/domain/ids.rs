//! Identifiers and time: deterministic ids (`d-N`, `g-N`), the leader-stamped timestamp and event actors.

use super::errors::{DomainError, Entity};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// Milliseconds since the Unix epoch, stamped by the leader on every command (kept monotonic by the caller).
pub type Timestamp = u64;

macro_rules! counter_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal, $entity:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub u64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "-{}"), self.0)
            }
        }

        impl FromStr for $name {
            type Err = DomainError;
            /// Accepts `"<prefix>-N"` or a bare `"N"`.
            fn from_str(s: &str) -> Result<Self, DomainError> {
                let digits = s.strip_prefix(concat!($prefix, "-")).unwrap_or(s);
                digits.parse::<u64>().map($name).map_err(|_| DomainError::NotFound {
                    entity: $entity,
                    name: s.to_string(),
                })
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

counter_id!(
    /// A deployment id: `d-1`, `d-2`, ... allocated from a counter in the replicated state.
    DeploymentId,
    "d",
    Entity::Deployment
);
counter_id!(
    /// A group deployment id: `g-1`, `g-2`, ... allocated from a counter in the replicated state.
    GroupDeploymentId,
    "g",
    Entity::GroupDeployment
);

/// Who caused an event: a person/tool, the pulse service, a leader timer, or convoy itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    /// A person or a tool through the API/CLI.
    #[default]
    User,
    /// The external pulse (heartbeat) service.
    Pulse,
    /// A leader timer (pulse deadline, watch end, completion timeout).
    Timer,
    /// convoy itself (node progress, automatic deployments, group steps).
    System,
}
