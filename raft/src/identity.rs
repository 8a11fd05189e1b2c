//! Who a data dir belongs to: the cluster's id, this server's id and its incarnation, and the
//! incarnations of the peers it has met, kept in the file `identity` of the data dir.
//!
//! - The **cluster id** is chosen when a cluster is bootstrapped: every founder derives the same
//!   one from the cluster secret and the founding members (no founder has to wait for another).
//!   A server without one (a joiner, or a data dir written before identities existed) adopts the
//!   first one a peer that holds the secret shows it.
//! - The **incarnation** is random and made when the data dir is created: a server whose data dir
//!   was emptied comes back with another one.
//! - **Peers**: the incarnation each peer first showed. While a peer is a voter, one that shows
//!   another incarnation is refused ([`Refusal`]): it is a wiped member speaking as its old self,
//!   which lost its log and its vote. A peer that is a learner or not a member (a joiner, or a
//!   member being replaced) is recorded anew; a peer that stops being a voter is forgotten.
//!
//! - The **state format**: the version of the state machine's encoding (its commands and its
//!   snapshots) that wrote the data dir. A build that reads another format refuses to start on it
//!   instead of applying entries it would decode wrongly; a data dir recorded before formats were
//!   is format 1.
//!
//! Both sides check each other in the transport's handshake ([`crate::network::noise`]), so a
//! refused server never reaches the raft core. An existing data dir without the file is adopted
//! on its first start (a new incarnation, this server's id, the founders' cluster id when it is
//! a founder), which changes nothing for its peers.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::types::{Member, NodeId};

/// The identity file's name inside the data dir.
pub const IDENTITY_FILE: &str = "identity";

/// A cluster's id: 128 bits, printed as 32 hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterId(pub u128);

impl fmt::Display for ClusterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl ClusterId {
    /// The id every founder of a cluster derives alike: `HMAC-SHA256(secret, founders)`, cut to
    /// 128 bits, over the founders' ids and transport addresses in id order.
    pub fn of_founders(secret: &[u8], founders: &BTreeMap<NodeId, Member>) -> Self {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any length");
        mac.update(b"convoy/cluster-id/v1");
        for (id, member) in founders {
            mac.update(&id.to_be_bytes());
            mac.update(member.raft_addr.as_bytes());
            mac.update(&[0]);
        }
        let bytes = mac.finalize().into_bytes();
        let mut id = [0u8; 16];
        id.copy_from_slice(&bytes[..16]);
        Self(u128::from_be_bytes(id))
    }
}

/// Why one server refuses another in the handshake; travels to the refused side, which logs it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum Refusal {
    /// The two servers belong to different clusters.
    #[error("server {by} (cluster {ours}) refuses server {of} (cluster {theirs}): they belong to different clusters; check the peer's addresses, secret and data dir")]
    OtherCluster {
        /// The refusing server.
        by: NodeId,
        /// The refused server.
        of: NodeId,
        /// The refusing server's cluster.
        ours: ClusterId,
        /// The refused server's cluster.
        theirs: ClusterId,
    },
    /// A voter came back with another incarnation: its data dir was emptied or replaced.
    #[error("server {by} refuses server {of}: it knows it as incarnation {known:016x} but it now speaks as {got:016x}, so its data dir was emptied or replaced; restore that data dir, or run `convoy cluster replace-member {of}` and start it with initial_cluster_state = \"existing\"")]
    Replaced {
        /// The refusing server.
        by: NodeId,
        /// The refused server.
        of: NodeId,
        /// The incarnation the refusing server knows.
        known: u64,
        /// The incarnation the refused server showed.
        got: u64,
    },
}

impl Refusal {
    /// The refusing server.
    pub fn by(&self) -> NodeId {
        match self {
            Refusal::OtherCluster { by, .. } | Refusal::Replaced { by, .. } => *by,
        }
    }

    /// The refused server.
    pub fn of(&self) -> NodeId {
        match self {
            Refusal::OtherCluster { of, .. } | Refusal::Replaced { of, .. } => *of,
        }
    }
}

/// What one server states about itself in the handshake, and how it judges a peer's statement.
///
/// Implemented by [`Identity`]; [`NoIdentity`] checks nothing (tools and tests).
pub trait PeerCheck: Send + Sync + fmt::Debug + 'static {
    /// This server's cluster id (if known yet) and incarnation (0: none).
    fn local(&self) -> (Option<ClusterId>, u64);

    /// Accepts or refuses server `peer` that states `cluster` and `incarnation` (0: a peer too
    /// old to state one, accepted). May record what it learnt.
    fn check(
        &self,
        peer: NodeId,
        cluster: Option<ClusterId>,
        incarnation: u64,
    ) -> Result<(), Refusal>;
}

/// The identity of tools and tests: no cluster id, no incarnation, every peer accepted.
#[derive(Debug, Default)]
pub struct NoIdentity;

impl PeerCheck for NoIdentity {
    fn local(&self) -> (Option<ClusterId>, u64) {
        (None, 0)
    }

    fn check(&self, _: NodeId, _: Option<ClusterId>, _: u64) -> Result<(), Refusal> {
        Ok(())
    }
}

/// Why a data dir's identity cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// The file cannot be read or written.
    #[error("identity file {path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// The system's reason.
        reason: String,
    },
    /// The file is not an identity file.
    #[error("identity file {path}, line {line}: cannot read {text:?}")]
    Malformed {
        /// The file.
        path: String,
        /// The 1-based line.
        line: usize,
        /// The line (at most 100 bytes).
        text: String,
    },
    /// The data dir belongs to another server.
    #[error("data dir {path} belongs to server {owner}, not to server {id}: start server {owner} on it, or give server {id} its own data dir")]
    OtherServer {
        /// The data dir.
        path: String,
        /// The server the data dir belongs to.
        owner: NodeId,
        /// This server's configured id.
        id: NodeId,
    },
    /// The data dir was written in another encoding of the state than this build reads.
    #[error("data dir {path} holds state format {found}, and this build reads format {reads}: it cannot read the \
             data dir's log and snapshots (nor another build this one's). Run the build that wrote it, or start \
             this one on a new data dir in a new cluster")]
    StateFormat {
        /// The data dir.
        path: String,
        /// The format recorded in it (1: recorded before formats were).
        found: u32,
        /// The format this build reads and writes.
        reads: u32,
    },
}

#[derive(Debug, Default)]
struct State {
    /// The state format recorded (`None`: a file written before formats were, format 1).
    format: Option<u32>,
    cluster: Option<ClusterId>,
    peers: BTreeMap<NodeId, u64>,
    /// The voters of the current membership; `None` until the replica has said (every peer is
    /// then judged as a voter).
    voters: Option<BTreeSet<NodeId>>,
}

/// A data dir's identity (module doc); shared by the transport's client and server.
#[derive(Debug)]
pub struct Identity {
    path: PathBuf,
    id: NodeId,
    incarnation: u64,
    state: Mutex<State>,
    /// Held through a save: two handshakes that meet new peers at once would otherwise share the
    /// temporary file, and the second rename finds it gone.
    saving: Mutex<()>,
}

/// How [`Identity::open`] found the data dir's identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opened {
    /// A fresh data dir: a new incarnation.
    Created,
    /// A data dir written before identities existed: adopted with a new incarnation.
    Adopted,
    /// The recorded identity.
    Read,
}

impl Identity {
    /// Reads `data_dir`'s identity, or makes one (a new incarnation) when the file is missing.
    ///
    /// `founders` is `Some(cluster id)` on a founder (`initial_cluster_state = "new"`): a data
    /// dir without a cluster id takes it. `fresh`: the data dir was empty. `state_format`: the
    /// state machine's encoding this build reads; a data dir recorded with another one (or written
    /// before formats were recorded, format 1) is refused.
    pub fn open(
        data_dir: &Path,
        id: NodeId,
        founders: Option<ClusterId>,
        fresh: bool,
        state_format: u32,
    ) -> Result<(Self, Opened), IdentityError> {
        let path = data_dir.join(IDENTITY_FILE);
        let shown = data_dir.display().to_string();
        let wrong_format = |found: u32| IdentityError::StateFormat {
            path: shown.clone(),
            found,
            reads: state_format,
        };
        let (identity, opened) = match std::fs::read_to_string(&path) {
            Ok(text) => {
                let (owner, incarnation, state) = parse(&text, &path)?;
                if owner != id {
                    return Err(IdentityError::OtherServer {
                        path: shown,
                        owner,
                        id,
                    });
                }
                let found = state.format.unwrap_or(1);
                if found != state_format {
                    return Err(wrong_format(found));
                }
                let identity = Self {
                    path,
                    id,
                    incarnation,
                    state: Mutex::new(state),
                    saving: Mutex::new(()),
                };
                (identity, Opened::Read)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if !fresh && state_format != 1 {
                    return Err(wrong_format(1));
                }
                let identity = Self {
                    path,
                    id,
                    incarnation: new_incarnation(),
                    state: Mutex::new(State {
                        format: Some(state_format),
                        ..State::default()
                    }),
                    saving: Mutex::new(()),
                };
                let opened = if fresh {
                    Opened::Created
                } else {
                    Opened::Adopted
                };
                (identity, opened)
            }
            Err(e) => return Err(io_error(&path, e)),
        };
        // The founders' id only fills a gap: initial_cluster matters at bootstrap only, and a
        // later edit of it must not make the server refuse its own data dir.
        if let Some(configured) = founders {
            let mut state = identity.state.lock().unwrap();
            state.cluster.get_or_insert(configured);
        }
        identity.save()?;
        Ok((identity, opened))
    }

    /// This server's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// This data dir's incarnation.
    pub fn incarnation(&self) -> u64 {
        self.incarnation
    }

    /// The cluster id, once known.
    pub fn cluster(&self) -> Option<ClusterId> {
        self.state.lock().unwrap().cluster
    }

    /// The incarnation recorded for `peer`, if any.
    pub fn known(&self, peer: NodeId) -> Option<u64> {
        self.state.lock().unwrap().peers.get(&peer).copied()
    }

    /// The voters of the current membership: a peer that is no longer one is forgotten (it may
    /// come back with a new data dir, added as a learner).
    ///
    /// An empty set (a replica that has not loaded or received a membership yet) means "not known":
    /// every peer is then judged as a voter and no record is dropped.
    pub fn set_voters(&self, voters: BTreeSet<NodeId>) {
        let mut state = self.state.lock().unwrap();
        if voters.is_empty() {
            state.voters = None;
            return;
        }
        let before = state.peers.len();
        state.peers.retain(|peer, _| voters.contains(peer));
        let forgot = before != state.peers.len();
        state.voters = Some(voters);
        drop(state);
        if forgot {
            if let Err(e) = self.save() {
                tracing::warn!(error = %e, "cannot record that a peer left the voters");
            }
        }
    }

    /// Writes the file (a temporary file renamed over it, synced).
    fn save(&self) -> Result<(), IdentityError> {
        let _saving = self.saving.lock().unwrap();
        // Rendered while saving is held, so the last save writes the newest state.
        let text = {
            let state = self.state.lock().unwrap();
            render(self.id, self.incarnation, &state)
        };
        let tmp = self.path.with_extension("tmp");
        let write = || -> std::io::Result<()> {
            use std::io::Write;
            let mut file = std::fs::File::create(&tmp)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.path)?;
            if let Some(dir) = self.path.parent() {
                std::fs::File::open(dir)?.sync_all()?;
            }
            Ok(())
        };
        write().map_err(|e| io_error(&self.path, e))
    }
}

impl PeerCheck for Identity {
    fn local(&self) -> (Option<ClusterId>, u64) {
        (self.cluster(), self.incarnation)
    }

    fn check(
        &self,
        peer: NodeId,
        cluster: Option<ClusterId>,
        incarnation: u64,
    ) -> Result<(), Refusal> {
        let mut state = self.state.lock().unwrap();
        let mut changed = false;
        match (state.cluster, cluster) {
            (Some(ours), Some(theirs)) if ours != theirs => {
                return Err(Refusal::OtherCluster {
                    by: self.id,
                    of: peer,
                    ours,
                    theirs,
                })
            }
            (None, Some(theirs)) => {
                tracing::info!(cluster = %theirs, peer, "adopted the cluster id of a peer");
                state.cluster = Some(theirs);
                changed = true;
            }
            _ => {}
        }
        if incarnation != 0 {
            let voter = state.voters.as_ref().is_none_or(|v| v.contains(&peer));
            match state.peers.get(&peer).copied() {
                Some(known) if known == incarnation => {}
                Some(known) if voter => {
                    return Err(Refusal::Replaced {
                        by: self.id,
                        of: peer,
                        known,
                        got: incarnation,
                    })
                }
                _ => {
                    state.peers.insert(peer, incarnation);
                    changed = true;
                }
            }
        }
        drop(state);
        if changed {
            if let Err(e) = self.save() {
                tracing::warn!(error = %e, "cannot record a peer's identity");
            }
        }
        Ok(())
    }
}

fn new_incarnation() -> u64 {
    // Never 0, which means "none" on the wire.
    loop {
        let n: u64 = rand::random();
        if n != 0 {
            return n;
        }
    }
}

fn io_error(path: &Path, e: std::io::Error) -> IdentityError {
    IdentityError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

fn render(id: NodeId, incarnation: u64, state: &State) -> String {
    let mut text = String::from(
        "# convoy: this data dir's identity. Never copy it to another server or data dir.\n",
    );
    text.push_str(&format!(
        "server = {id}\nincarnation = {incarnation:016x}\n"
    ));
    if let Some(format) = state.format {
        text.push_str(&format!("state_format = {format}\n"));
    }
    if let Some(cluster) = state.cluster {
        text.push_str(&format!("cluster = {cluster}\n"));
    }
    for (peer, incarnation) in &state.peers {
        text.push_str(&format!("peer {peer} = {incarnation:016x}\n"));
    }
    text
}

fn parse(text: &str, path: &Path) -> Result<(NodeId, u64, State), IdentityError> {
    let mut owner = None;
    let mut incarnation = None;
    let mut state = State::default();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || IdentityError::Malformed {
            path: path.display().to_string(),
            line: n + 1,
            text: line.chars().take(100).collect(),
        };
        let (key, value) = line.split_once('=').ok_or_else(bad)?;
        let (key, value) = (key.trim(), value.trim());
        match key.split_once(' ') {
            None if key == "server" => owner = Some(value.parse().map_err(|_| bad())?),
            None if key == "incarnation" => {
                incarnation = Some(u64::from_str_radix(value, 16).map_err(|_| bad())?)
            }
            None if key == "state_format" => state.format = Some(value.parse().map_err(|_| bad())?),
            None if key == "cluster" => {
                state.cluster = Some(ClusterId(
                    u128::from_str_radix(value, 16).map_err(|_| bad())?,
                ))
            }
            Some(("peer", peer)) => {
                let peer = peer.trim().parse().map_err(|_| bad())?;
                let known = u64::from_str_radix(value, 16).map_err(|_| bad())?;
                state.peers.insert(peer, known);
            }
            _ => return Err(bad()),
        }
    }
    let missing = |what: &str| IdentityError::Malformed {
        path: path.display().to_string(),
        line: 0,
        text: format!("no {what} line"),
    };
    Ok((
        owner.ok_or_else(|| missing("server"))?,
        incarnation.ok_or_else(|| missing("incarnation"))?,
        state,
    ))
}

#[cfg(test)]
#[path = "identity_test.rs"]
mod tests;
