//! Domain errors: every refusal names the thing and the value; `kind()` maps them to 404/409/400.

pub mod ranges;

pub use crate::values::ids::Entity;
use crate::values::ids::UnknownId;
pub use crate::values::invalid::{clip, quote, Invalid};
use crate::values::status::{Status, TransitionRefused};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Longest message accepted on any command.
pub const MAX_MESSAGE_LEN: usize = 1024;

/// Coarse class of a refusal, for the HTTP layer: 404, 409 and 400.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ErrorKind {
    /// An unknown id or name (404).
    NotFound,
    /// The request clashes with the current state (409).
    Conflict,
    /// The request itself is malformed or meaningless (400).
    Invalid,
}

/// A refused command. A refusal never changes the state.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum DomainError {
    /// Unknown id or name.
    #[error("{entity} \"{name}\" not found")]
    NotFound {
        /// What kind of thing.
        entity: Entity,
        /// The name or id asked for.
        name: String,
    },
    /// A name that is already taken.
    #[error("{entity} \"{name}\" already exists")]
    AlreadyExists {
        /// What kind of thing.
        entity: Entity,
        /// The name that is taken.
        name: String,
    },
    /// A version that was never published.
    #[error("resource \"{resource}\" has no version {version}")]
    UnknownVersion {
        /// The resource.
        resource: String,
        /// The version asked for.
        version: u64,
    },
    /// A retracted version named where a version is to be rolled out or pinned.
    #[error("version {version} of resource \"{resource}\" is retracted; unretract it first")]
    Retracted {
        /// The resource.
        resource: String,
        /// The retracted version.
        version: u64,
    },
    /// A version held back on the consumer (DEPLOYMENTS.md §10) started by hand without `force`.
    #[error("{reason}; deploy it with force to lift the hold")]
    Held {
        /// The hold's reason, "version 3 of app held back on web: rolled back by d-4".
        reason: String,
    },
    /// Something that cannot be deleted while something else uses it.
    #[error("{entity} \"{name}\" is in use: {reason}")]
    InUse {
        /// What kind of thing.
        entity: Entity,
        /// Its name (`consumer/resource` for a subscription).
        name: String,
        /// What uses it.
        reason: String,
    },
    /// A second active deployment for one (consumer, resource).
    #[error(
        "consumer \"{consumer}\" already has active deployment \"{id}\" of resource \"{resource}\""
    )]
    ActiveDeployment {
        /// The consumer.
        consumer: String,
        /// The resource.
        resource: String,
        /// The deployment that is active.
        id: String,
    },
    /// A status change that the transition table forbids.
    #[error("deployment \"{id}\" is {from}; cannot {op}")]
    Transition {
        /// The deployment's id (`d-N`).
        id: String,
        /// Its current status.
        from: Status,
        /// What was asked, in words.
        op: String,
    },
    /// A group deployment that is not running.
    #[error("group deployment \"{id}\" is {status}; cannot {op}")]
    GroupTransition {
        /// The group deployment.
        id: String,
        /// Its current status.
        status: String,
        /// What was asked.
        op: String,
    },
    /// A setting whose value is meaningless.
    #[error("{field} = {value} is invalid: {reason}")]
    InvalidSetting {
        /// The field name.
        field: String,
        /// The value given.
        value: String,
        /// Why it is refused.
        reason: String,
    },
    /// An ordinal range outside the consumer's node set.
    #[error(
        "node range \"{range}\" is outside the node set of consumer \"{consumer}\" ({count} nodes)"
    )]
    OrdinalOutOfRange {
        /// The consumer.
        consumer: String,
        /// The range as given.
        range: String,
        /// How many nodes the consumer has.
        count: usize,
    },
    /// A dependency cycle inside a group.
    #[error("dependency cycle in group \"{group}\": {path}")]
    Cycle {
        /// The group's name.
        group: String,
        /// The cycle, `a/r@1 -> b/s@2 -> a/r@1`.
        path: String,
    },
    /// A dependency that points outside the group or at nothing.
    #[error("dangling dependency in group \"{group}\": {path}")]
    Dangling {
        /// The group's name.
        group: String,
        /// The offending edge and why.
        path: String,
    },
    /// A group whose members' dependency links do not connect them all (seed 003).
    #[error("group \"{group}\" is not connected: {members} no dependency link with {first}")]
    NotConnected {
        /// The group's name.
        group: String,
        /// The members outside the first member's part, `e/tool` (the first 10, then "and N more"), with
        /// the verb: `e/tool has`, `e/tool, f/x have`.
        members: String,
        /// The first member, `c/r`.
        first: String,
    },
    /// A message longer than [`MAX_MESSAGE_LEN`].
    #[error("message is {len} characters long; at most 1024 are allowed")]
    MessageTooLong {
        /// Its length in characters.
        len: usize,
    },
    /// Snapshot bytes that do not decode.
    #[error("snapshot cannot be decoded: {0}")]
    Snapshot(String),
}

impl DomainError {
    /// The coarse class, for mapping to HTTP statuses.
    pub fn kind(&self) -> ErrorKind {
        match self {
            DomainError::NotFound { .. } | DomainError::UnknownVersion { .. } => {
                ErrorKind::NotFound
            }
            DomainError::AlreadyExists { .. }
            | DomainError::Retracted { .. }
            | DomainError::Held { .. }
            | DomainError::InUse { .. }
            | DomainError::ActiveDeployment { .. }
            | DomainError::Transition { .. }
            | DomainError::GroupTransition { .. } => ErrorKind::Conflict,
            DomainError::InvalidSetting { .. }
            | DomainError::OrdinalOutOfRange { .. }
            | DomainError::Cycle { .. }
            | DomainError::Dangling { .. }
            | DomainError::NotConnected { .. }
            | DomainError::MessageTooLong { .. }
            | DomainError::Snapshot(_) => ErrorKind::Invalid,
        }
    }

    pub(crate) fn not_found(entity: Entity, name: impl fmt::Display) -> Self {
        DomainError::NotFound {
            entity,
            name: name.to_string(),
        }
    }

    pub(crate) fn invalid(field: &str, value: impl fmt::Display, reason: &str) -> Self {
        DomainError::InvalidSetting {
            field: field.into(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}

/// Refuses messages over [`MAX_MESSAGE_LEN`] characters.
pub fn check_message(message: Option<&str>) -> Result<(), DomainError> {
    match message {
        Some(m) if m.chars().count() > MAX_MESSAGE_LEN => Err(DomainError::MessageTooLong {
            len: m.chars().count(),
        }),
        _ => Ok(()),
    }
}

/// Longest name of a resource, consumer, node or group, in bytes: short enough to be a directory
/// name on every filesystem the agent may use.
pub const MAX_NAME_BYTES: usize = 200;

/// Whether `name` may name a resource, consumer, node or group: 1 to [`MAX_NAME_BYTES`] bytes of ASCII
/// letters, digits, `-`, `_` and `.`, and neither `.` nor `..`. No `/`, no control or bidi character
/// can hide in it, and it is safe as a path segment: the agent uses it as a directory name.
pub fn is_safe_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Refuses a name that is not [`is_safe_name`], quoting at most 100 bytes of it.
pub fn check_name(field: &str, name: &str) -> Result<(), DomainError> {
    if !is_safe_name(name) {
        return Err(DomainError::invalid(
            field,
            quote(name),
            "names are 1-200 bytes of letters, digits, '-', '_' and '.', and not '.' or '..'",
        ));
    }
    Ok(())
}

impl From<Invalid> for DomainError {
    fn from(e: Invalid) -> Self {
        DomainError::InvalidSetting {
            field: e.field,
            value: e.value,
            reason: e.reason,
        }
    }
}

impl Invalid {
    /// Always [`ErrorKind::Invalid`] (400), as the `DomainError` it becomes.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::Invalid
    }
}

impl From<UnknownId> for DomainError {
    fn from(e: UnknownId) -> Self {
        DomainError::NotFound {
            entity: e.entity,
            name: e.name,
        }
    }
}

impl UnknownId {
    /// Always [`ErrorKind::NotFound`] (404), as the `DomainError` it becomes.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::NotFound
    }
}

impl TransitionRefused {
    /// Always [`ErrorKind::Conflict`] (409), as the `DomainError` it becomes.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::Conflict
    }
}

impl From<TransitionRefused> for DomainError {
    fn from(e: TransitionRefused) -> Self {
        DomainError::Transition {
            id: e.id.to_string(),
            from: e.from,
            op: e.op,
        }
    }
}
