//! Identifiers and time: deterministic ids (`d-N`, `g-N`), the leader-stamped timestamp and event actors.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// Milliseconds since the Unix epoch, stamped by the leader on every command (kept monotonic by the caller).
pub type Timestamp = u64;

/// The kinds of named things an error can point at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Entity {
    /// A resource.
    Resource,
    /// A consumer.
    Consumer,
    /// A node.
    Node,
    /// A deployment.
    Deployment,
    /// A consumer group.
    Group,
    /// A group deployment.
    GroupDeployment,
    /// An API token.
    Token,
    /// A subscription, named `consumer/resource`.
    Subscription,
    /// A held-back version, named `consumer/resource@version`.
    Hold,
    /// A consumer's disruption budget, named by its consumer.
    Budget,
    /// A maintenance window.
    Window,
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Entity::Resource => "resource",
            Entity::Consumer => "consumer",
            Entity::Node => "node",
            Entity::Deployment => "deployment",
            Entity::Group => "group",
            Entity::GroupDeployment => "group deployment",
            Entity::Token => "token",
            Entity::Subscription => "subscription",
            Entity::Hold => "hold",
            Entity::Budget => "budget",
            Entity::Window => "window",
        })
    }
}

/// Text that is no id of its kind (`d-x`): it can name nothing, so it reads as "not found" (404) once it
/// becomes a `DomainError`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{entity} \"{name}\" not found")]
pub struct UnknownId {
    /// What kind of id was expected.
    pub entity: Entity,
    /// The text given (callers bound its length before parsing).
    pub name: String,
}

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
            type Err = UnknownId;
            /// Accepts `"<prefix>-N"` or a bare `"N"`.
            fn from_str(s: &str) -> Result<Self, UnknownId> {
                let digits = s.strip_prefix(concat!($prefix, "-")).unwrap_or(s);
                digits.parse::<u64>().map($name).map_err(|_| UnknownId {
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

/// Who caused an event: a person or tool (named by its API token when auth is on), the pulse service, a
/// leader timer, or convoy itself.
///
/// In JSON (`is_human_readable`) an actor is one string: `"user"`, `"pulse"`, `"timer"`, `"system"`, or the
/// token's name (token names cannot be one of those four words, see `tokens::check_token_name`). In snapshots
/// and the log (bincode) it is a compact enum.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Actor {
    /// A person or a tool through the API/CLI, on a server running without auth.
    #[default]
    User,
    /// The external pulse (heartbeat) service.
    Pulse,
    /// A leader timer (pulse deadline, watch end, completion timeout).
    Timer,
    /// convoy itself (node progress, automatic deployments, group steps).
    System,
    /// A person or a tool that called the API with the API token of this name.
    Token(String),
}

/// The words `Actor`'s unit variants are written as; no token may take one of these names.
pub const RESERVED_ACTOR_NAMES: [&str; 4] = ["user", "pulse", "timer", "system"];

impl Actor {
    /// The name shown in events: `user`, `pulse`, `timer`, `system` or the token's name.
    pub fn name(&self) -> &str {
        match self {
            Actor::User => "user",
            Actor::Pulse => "pulse",
            Actor::Timer => "timer",
            Actor::System => "system",
            Actor::Token(name) => name,
        }
    }

    /// The inverse of [`Actor::name`].
    pub fn from_name(name: &str) -> Actor {
        match name {
            "user" => Actor::User,
            "pulse" => Actor::Pulse,
            "timer" => Actor::Timer,
            "system" => Actor::System,
            other => Actor::Token(other.to_string()),
        }
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The compact (bincode) form of [`Actor`], written without copying the name; same variants as [`ActorRepr`].
#[derive(Serialize)]
enum ActorRef<'a> {
    User,
    Pulse,
    Timer,
    System,
    Token(&'a str),
}

/// The compact (bincode) form of [`Actor`], read back.
#[derive(Deserialize)]
enum ActorRepr {
    User,
    Pulse,
    Timer,
    System,
    Token(String),
}

impl Serialize for Actor {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            return s.serialize_str(self.name());
        }
        match self {
            Actor::User => ActorRef::User,
            Actor::Pulse => ActorRef::Pulse,
            Actor::Timer => ActorRef::Timer,
            Actor::System => ActorRef::System,
            Actor::Token(name) => ActorRef::Token(name),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Actor {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if d.is_human_readable() {
            return String::deserialize(d).map(|name| Actor::from_name(&name));
        }
        Ok(match ActorRepr::deserialize(d)? {
            ActorRepr::User => Actor::User,
            ActorRepr::Pulse => Actor::Pulse,
            ActorRepr::Timer => Actor::Timer,
            ActorRepr::System => Actor::System,
            ActorRepr::Token(name) => Actor::Token(name),
        })
    }
}
