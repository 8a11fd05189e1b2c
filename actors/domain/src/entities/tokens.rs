//! API tokens: who may call the HTTP API and with which role. Only a sha256 hash of each secret is kept
//! (hashing happens on the server that receives the secret); lookups compare hashes in constant time.

use crate::errors::{DomainError, Entity};
use crate::values::ids::{Actor, Timestamp, RESERVED_ACTOR_NAMES};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The length of a secret's sha256 hash.
pub const HASH_LEN: usize = 32;

/// A sha256 hash of a token's secret.
pub type SecretHash = [u8; HASH_LEN];

/// The name of the admin token made from `bootstrap_token_file`.
pub const BOOTSTRAP_TOKEN: &str = "bootstrap";

/// Longest token name.
pub const MAX_TOKEN_NAME: usize = 64;

/// Longest `nodes` glob of an agent token.
pub const MAX_NODES_GLOB: usize = 256;

/// Shortest `ttl` of a token: one second.
pub const MIN_TOKEN_TTL_MS: u64 = 1_000;

/// Longest `ttl` of a token: ten years (3,650 days).
pub const MAX_TOKEN_TTL_MS: u64 = 3_650 * 24 * 3_600 * 1_000;

/// What a token may do. Each role is a fixed set of [`Permission`]s (see [`Role::grants`]).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Everything, including cluster members and tokens.
    Admin,
    /// Resources, versions, consumers, subscriptions, deployments (pulses too) and groups; reads.
    Operator,
    /// Pulses only.
    Pulser,
    /// Node reports, for the node ids its `nodes` glob matches, and reading resources (what to download).
    Agent,
    /// Reads (GETs) only.
    Reader,
}

/// One kind of action a route needs; the HTTP layer's route table maps each route to one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Permission {
    /// Served to anyone, with or without a token (`/healthz`, `/readyz`).
    Public,
    /// Any known token, whatever its role (`GET /v1/whoami`: a token asks what it may do).
    Authenticated,
    /// Read the state (GETs).
    Read,
    /// Read resources and their versions: what an agent needs to download and health-check a version.
    ReadResources,
    /// Change resources, versions, consumers, subscriptions, deployments and groups.
    Operate,
    /// Pulse a coordinated deployment.
    Pulse,
    /// Report a node's progress (restricted to an agent token's nodes).
    Report,
    /// Cluster membership, tokens and test-only endpoints.
    Admin,
}

impl Role {
    /// Every role, for tables and tests.
    pub const ALL: [Role; 5] = [
        Role::Admin,
        Role::Operator,
        Role::Pulser,
        Role::Agent,
        Role::Reader,
    ];

    /// Whether this role may do what `permission` covers.
    pub fn grants(self, permission: Permission) -> bool {
        use Permission as P;
        match self {
            Role::Admin => true,
            Role::Operator => matches!(
                permission,
                P::Public | P::Authenticated | P::Read | P::ReadResources | P::Operate | P::Pulse
            ),
            Role::Pulser => matches!(permission, P::Public | P::Authenticated | P::Pulse),
            Role::Agent => matches!(
                permission,
                P::Public | P::Authenticated | P::ReadResources | P::Report
            ),
            Role::Reader => matches!(
                permission,
                P::Public | P::Authenticated | P::Read | P::ReadResources
            ),
        }
    }

    /// The role's name, as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Operator => "operator",
            Role::Pulser => "pulser",
            Role::Agent => "agent",
            Role::Reader => "reader",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One API token as replicated: never the secret, only its hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Token {
    /// Unique name; recorded as `by` on what the token does.
    pub name: String,
    /// What it may do.
    pub role: Role,
    /// For `agent` tokens: a glob (`*` any run, `?` one character) the reported node ids must match.
    pub nodes: Option<String>,
    /// sha256 of the secret.
    pub hash: SecretHash,
    /// Leader-stamped creation time.
    pub created_at: Timestamp,
    /// Who created it.
    pub created_by: Actor,
    /// When it stops authenticating: its leader-stamped `created_at` plus the `ttl` it was created with;
    /// `None`: never. Defaulted, so a token in JSON without it never expires; a bincode snapshot taken before
    /// this field existed does not decode (bincode is not self-describing).
    #[serde(default)]
    pub expires_at: Option<Timestamp>,
    /// For `agent` tokens: the consumers whose nodes it may report for, as well as its glob: every
    /// consumer of a reported node must be one of these. Empty: not bound (older tokens).
    #[serde(default)]
    pub consumers: Vec<String>,
}

impl Token {
    /// Whether the token has expired at `now` (ms since the epoch): from `expires_at` on.
    pub fn expired(&self, now: Timestamp) -> bool {
        self.expires_at.is_some_and(|end| now >= end)
    }

    /// Whether this token may report for a node in `node_consumers` (its consumers in the state):
    /// a token bound to consumers only when every one of them is bound; any other token, always.
    pub fn may_report_in<'a>(&self, mut node_consumers: impl Iterator<Item = &'a str>) -> bool {
        self.consumers.is_empty() || node_consumers.all(|c| self.consumers.iter().any(|b| b == c))
    }

    /// Whether this token may report for `node`: admins for any node, agents for the nodes their glob matches.
    pub fn may_report_for(&self, node: &str) -> bool {
        match self.role {
            Role::Admin => true,
            Role::Agent => self
                .nodes
                .as_deref()
                .is_some_and(|glob| glob_matches(glob, node)),
            Role::Operator | Role::Pulser | Role::Reader => false,
        }
    }
}

/// The replicated token table and whether the bootstrap token was ever made (so revoking it sticks).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenTable {
    tokens: BTreeMap<String, Token>,
    bootstrapped: bool,
}

impl TokenTable {
    /// The token whose secret hashes to `hash`. Compares against every token in constant time per token
    /// and without stopping at the first match, so timing says nothing about how close a guess was.
    pub fn authenticate(&self, hash: &SecretHash) -> Option<&Token> {
        let mut found = None;
        for token in self.tokens.values() {
            if ct_eq(&token.hash, hash) {
                found = Some(token);
            }
        }
        found
    }

    /// A token by name.
    pub fn get(&self, name: &str) -> Option<&Token> {
        self.tokens.get(name)
    }

    /// Every token, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Token> {
        self.tokens.values()
    }

    /// Whether the bootstrap token was ever created (it is not re-created after a revoke).
    pub fn bootstrapped(&self) -> bool {
        self.bootstrapped
    }

    /// `CreateToken`: refuses a taken name, a reused secret and an invalid name, role or glob.
    pub(crate) fn create(&mut self, token: Token) -> Result<(), DomainError> {
        check_token_name(&token.name)?;
        check_token_nodes(token.role, token.nodes.as_deref())?;
        check_token_consumers(token.role, &token.consumers)?;
        if self.tokens.contains_key(&token.name) {
            return Err(DomainError::AlreadyExists {
                entity: Entity::Token,
                name: token.name,
            });
        }
        if self.authenticate(&token.hash).is_some() {
            // Only a hash collision or a replayed secret gets here; never say which token has it.
            return Err(DomainError::invalid(
                "secret",
                "(hidden)",
                "another token already has this secret",
            ));
        }
        self.tokens.insert(token.name.clone(), token);
        Ok(())
    }

    /// `RevokeToken`: removes the token; from this index on it authenticates nothing.
    pub(crate) fn revoke(&mut self, name: &str) -> Result<(), DomainError> {
        match self.tokens.remove(name) {
            Some(_) => Ok(()),
            None => Err(DomainError::not_found(Entity::Token, name)),
        }
    }

    /// `BootstrapToken`: creates the `bootstrap` admin token the first time only; later a no-op, so the
    /// leader may propose it after every election and a revoked bootstrap token stays revoked.
    pub(crate) fn bootstrap(&mut self, hash: SecretHash, at: Timestamp) {
        if self.bootstrapped || self.tokens.contains_key(BOOTSTRAP_TOKEN) {
            self.bootstrapped = true;
            return;
        }
        self.bootstrapped = true;
        if self.authenticate(&hash).is_none() {
            self.tokens.insert(
                BOOTSTRAP_TOKEN.to_string(),
                Token {
                    name: BOOTSTRAP_TOKEN.to_string(),
                    role: Role::Admin,
                    nodes: None,
                    hash,
                    created_at: at,
                    created_by: Actor::System,
                    expires_at: None,
                    consumers: Vec::new(),
                },
            );
        }
    }
}

/// The most consumers one agent token may be bound to.
pub const MAX_TOKEN_CONSUMERS: usize = 256;

/// Refuses a consumer binding on a token that is not an agent's, more than [`MAX_TOKEN_CONSUMERS`]
/// consumers, and a name that could not name a consumer.
pub fn check_token_consumers(role: Role, consumers: &[String]) -> Result<(), DomainError> {
    if consumers.is_empty() {
        return Ok(());
    }
    if role != Role::Agent {
        return Err(DomainError::invalid(
            "consumers",
            format!("{} consumers", consumers.len()),
            &format!("only agent tokens are bound to consumers, not {role} tokens"),
        ));
    }
    if consumers.len() > MAX_TOKEN_CONSUMERS {
        return Err(DomainError::invalid(
            "consumers",
            format!("{} entries", consumers.len()),
            &format!("at most {MAX_TOKEN_CONSUMERS} are allowed"),
        ));
    }
    consumers
        .iter()
        .try_for_each(|c| crate::errors::check_name("consumer", c))
}

/// Token names: 1-64 characters of `A-Z a-z 0-9 . _ -`, not `user`, `pulse`, `timer` or `system`
/// (those name the other actors in events).
pub fn check_token_name(name: &str) -> Result<(), DomainError> {
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if name.is_empty() || name.len() > MAX_TOKEN_NAME || !ok_chars {
        return Err(DomainError::invalid(
            "name",
            format!("{:?}", clip(name)),
            "token names are 1-64 characters of A-Z a-z 0-9 . _ -",
        ));
    }
    if RESERVED_ACTOR_NAMES.contains(&name) {
        return Err(DomainError::invalid(
            "name",
            format!("{name:?}"),
            "user, pulse, timer and system name convoy's own actors in events",
        ));
    }
    Ok(())
}

/// An `agent` token needs a non-empty `nodes` glob; other roles take none.
pub fn check_token_nodes(role: Role, nodes: Option<&str>) -> Result<(), DomainError> {
    match (role, nodes) {
        (Role::Agent, None) => Err(DomainError::invalid(
            "nodes",
            "(none)",
            "an agent token needs a nodes glob such as \"web-*\"",
        )),
        (Role::Agent, Some(glob))
            if glob.is_empty()
                || glob.len() > MAX_NODES_GLOB
                || glob.chars().any(char::is_control) =>
        {
            Err(DomainError::invalid(
                "nodes",
                format!("{:?}", clip(glob)),
                "the glob must be 1-256 printable characters",
            ))
        }
        (Role::Agent, Some(_)) | (_, None) => Ok(()),
        (other, Some(glob)) => Err(DomainError::invalid(
            "nodes",
            format!("{:?}", clip(glob)),
            &format!("only agent tokens are bound to nodes, not {other} tokens"),
        )),
    }
}

/// A token's `ttl`, in ms: from [`MIN_TOKEN_TTL_MS`] (1 s) to [`MAX_TOKEN_TTL_MS`] (3,650 days).
pub fn check_token_ttl(ttl_ms: u64) -> Result<(), DomainError> {
    if (MIN_TOKEN_TTL_MS..=MAX_TOKEN_TTL_MS).contains(&ttl_ms) {
        return Ok(());
    }
    Err(DomainError::invalid(
        "ttl",
        format!("{ttl_ms} ms"),
        "a token's ttl is 1s to 3650d",
    ))
}

/// Whether `text` matches `glob`: `*` matches any run of characters (also none), `?` exactly one, every other
/// character itself. Backtracks to the last star only: O(len(glob) × len(text)) at worst, no recursion.
pub fn glob_matches(glob: &str, text: &str) -> bool {
    let p: Vec<char> = glob.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || (p[pi] != '*' && p[pi] == t[ti])) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Equal hashes, compared in time independent of where they differ.
pub fn ct_eq(a: &SecretHash, b: &SecretHash) -> bool {
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// At most 100 bytes of a caller's value, for error messages.
fn clip(s: &str) -> &str {
    let mut end = s.len().min(100);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
#[path = "tokens_test.rs"]
mod tests;
