//! openraft's state machine store for one simulated server: convoy's real `Machine` (the domain's
//! `ClusterState`) applied through convoy-raft's own apply path (`sm_store::apply_proposal`: the
//! time clamp, the decode, the apply). It keeps the state in memory; the last snapshot built or
//! installed is kept on the server's disk ([`SharedSnapshot`], written whole), so a restart
//! starts from it and replays the log after it (openraft purges the log behind a snapshot). It
//! reports every applied entry to the observations for the state-machine-safety checker.

use std::future::Future;
use std::io::{self, Cursor};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

use convoy_node::machine::Machine;
use convoy_raft::sm_store::apply_proposal;
use convoy_raft::{Reply, StateMachine};
use futures::{Stream, StreamExt};
use openraft::storage::{EntryResponder, RaftStateMachine};
use openraft::type_config::alias::{LogIdOf, SnapshotMetaOf, SnapshotOf, StoredMembershipOf};
use openraft::{EntryPayload, OptionalSend, RaftSnapshotBuilder, StoredMembership};

use super::decoded;
use super::executor;
use super::log_store::lock;
use super::observe::{EntryKey, Observations};
use super::runtime::SimConfig;

/// What one server has applied.
#[derive(Debug, Default)]
pub struct Applied {
    /// The real state machine.
    pub machine: Machine,
    /// The leader-stamped time of the last apply (clamped monotonic).
    pub last_at_ms: u64,
    /// The last log id applied.
    pub last_applied: Option<LogIdOf<SimConfig>>,
    /// The membership as of `last_applied`.
    pub membership: StoredMembershipOf<SimConfig>,
    /// Tasks waiting for `last_applied` to reach an index ([`applied_index_at_least`]), woken when it does.
    waiters: Vec<(u64, Waker)>,
}

/// The applied state of one server, shared with the harness (which reads it like the API does).
pub type SharedApplied = Arc<Mutex<Applied>>;

/// One server's last snapshot on its disk (its metadata and bytes); written whole and synced, it
/// survives a crash.
pub type SharedSnapshot = Arc<Mutex<Option<(SnapshotMetaOf<SimConfig>, Vec<u8>)>>>;

/// Reads what [`snapshot_of`] wrote: the clamped time and the state machine.
fn restore(bytes: &[u8]) -> io::Result<(u64, Machine)> {
    let (at, state) = bytes
        .split_first_chunk::<8>()
        .ok_or_else(|| io::Error::other(format!("a snapshot of {} bytes", bytes.len())))?;
    Ok((u64::from_le_bytes(*at), decoded::machine(state)?))
}

impl Applied {
    /// The state a server starts from: its last snapshot, if any, else empty.
    pub fn from_snapshot(snapshot: &SharedSnapshot) -> io::Result<Applied> {
        let Some((meta, bytes)) = lock(snapshot).clone() else {
            return Ok(Applied::default());
        };
        let (last_at_ms, machine) = restore(&bytes)?;
        Ok(Applied {
            last_at_ms,
            machine,
            last_applied: meta.last_log_id,
            membership: meta.last_membership,
            waiters: Vec::new(),
        })
    }

    /// Moves `last_applied` to `log_id` and wakes the tasks waiting for an index it reaches.
    fn applied_up_to(&mut self, log_id: Option<LogIdOf<SimConfig>>) {
        self.last_applied = log_id;
        let reached = log_id.map_or(0, |l| l.index);
        self.waiters.retain(|(index, waker)| {
            if *index <= reached {
                waker.wake_by_ref();
            }
            *index > reached
        });
    }

    /// Whether `index` is applied; if not, `waker` is woken once it is.
    fn applied_or_wake(&mut self, index: u64, waker: &Waker) -> bool {
        if self.last_applied.as_ref().is_some_and(|l| l.index >= index) {
            return true;
        }
        if !self.waiters.iter().any(|(_, w)| w.will_wake(waker)) {
            self.waiters.push((index, waker.clone()));
        }
        false
    }
}

/// Waits until `applied` reaches `index` (true) or `timeout` passes first (false). Woken by the
/// applies themselves: a read waiting on a lagging or crashed server costs no poll until either.
pub async fn applied_index_at_least(
    applied: &SharedApplied,
    index: u64,
    timeout: Duration,
) -> bool {
    let mut deadline = std::pin::pin!(executor::sleep(timeout));
    std::future::poll_fn(|cx| {
        if lock(applied).applied_or_wake(index, cx.waker()) {
            return Poll::Ready(true);
        }
        deadline.as_mut().poll(cx).map(|()| false)
    })
    .await
}

/// The state machine store of one incarnation of one server.
pub struct SimSm {
    id: u64,
    applied: SharedApplied,
    snapshot: SharedSnapshot,
    observations: Observations,
}

impl SimSm {
    /// A fresh (empty) state machine for server `id`.
    pub fn new(
        id: u64,
        applied: SharedApplied,
        snapshot: SharedSnapshot,
        observations: Observations,
    ) -> Self {
        SimSm {
            id,
            applied,
            snapshot,
            observations,
        }
    }
}

/// Builds a snapshot of the applied state, in memory.
pub struct SimSnapshotBuilder {
    applied: SharedApplied,
    snapshot: SharedSnapshot,
}

/// A snapshot's bytes: the clamped time of the last apply (8 bytes, little-endian, as the real
/// store's header carries `last_at_ms`), then the state.
fn snapshot_of(applied: &Applied) -> io::Result<(SnapshotMetaOf<SimConfig>, Vec<u8>)> {
    let mut bytes = applied.last_at_ms.to_le_bytes().to_vec();
    applied.machine.snapshot_to(&mut bytes)?;
    let meta = SnapshotMetaOf::<SimConfig> {
        last_log_id: applied.last_applied,
        last_membership: applied.membership.clone(),
    };
    Ok((meta, bytes))
}

impl RaftSnapshotBuilder<SimConfig> for SimSnapshotBuilder {
    type SnapshotData = Cursor<Vec<u8>>;

    async fn build_snapshot(
        &mut self,
    ) -> Result<SnapshotOf<SimConfig, Cursor<Vec<u8>>>, io::Error> {
        let (meta, bytes) = snapshot_of(&lock(&self.applied))?;
        *lock(&self.snapshot) = Some((meta.clone(), bytes.clone()));
        Ok(SnapshotOf::<SimConfig, Cursor<Vec<u8>>> {
            meta,
            snapshot: Cursor::new(bytes),
        })
    }
}

impl RaftStateMachine<SimConfig> for SimSm {
    type SnapshotData = Cursor<Vec<u8>>;
    type SnapshotBuilder = SimSnapshotBuilder;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<LogIdOf<SimConfig>>, StoredMembershipOf<SimConfig>), io::Error> {
        let applied = lock(&self.applied);
        Ok((applied.last_applied, applied.membership.clone()))
    }

    async fn apply<Strm>(&mut self, mut entries: Strm) -> Result<(), io::Error>
    where
        Strm: Stream<Item = Result<EntryResponder<SimConfig>, io::Error>> + Unpin + OptionalSend,
    {
        while let Some(item) = entries.next().await {
            let (entry, responder) = item?;
            let key = EntryKey::of(&entry);
            let log_id = entry.log_id;
            let reply = {
                let mut guard = lock(&self.applied);
                let applied = &mut *guard;
                let reply = match entry.payload {
                    EntryPayload::Blank => Reply::default(),
                    EntryPayload::Normal(proposal) => apply_proposal(
                        &mut applied.machine,
                        &mut applied.last_at_ms,
                        proposal,
                        log_id.index,
                        responder.is_some(),
                    ),
                    EntryPayload::Membership(membership) => {
                        applied.membership = StoredMembership::new(Some(log_id), membership);
                        Reply::default()
                    }
                };
                applied.applied_up_to(Some(log_id));
                reply
            };
            self.observations.applied(self.id, log_id.index, &key);
            if let Some(responder) = responder {
                responder.send(reply);
            }
        }
        Ok(())
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        SimSnapshotBuilder {
            applied: self.applied.clone(),
            snapshot: self.snapshot.clone(),
        }
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMetaOf<SimConfig>,
        snapshot: Cursor<Vec<u8>>,
    ) -> Result<(), io::Error> {
        let bytes = snapshot.into_inner();
        let (last_at_ms, machine) = restore(&bytes)?;
        *lock(&self.snapshot) = Some((meta.clone(), bytes));
        {
            let mut applied = lock(&self.applied);
            applied.last_at_ms = last_at_ms;
            applied.machine = machine;
            applied.membership = meta.last_membership.clone();
            applied.applied_up_to(meta.last_log_id);
        }
        self.observations.trace(format!(
            "s{} installed a snapshot at {:?}",
            self.id,
            meta.last_log_id.as_ref().map(|id| id.index)
        ));
        Ok(())
    }

    /// The last snapshot built or installed, as it is on the disk (the real store opens its current
    /// snapshot file); never a new one of the applied state.
    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<SnapshotOf<SimConfig, Cursor<Vec<u8>>>>, io::Error> {
        Ok(lock(&self.snapshot)
            .clone()
            .map(|(meta, bytes)| SnapshotOf::<SimConfig, Cursor<Vec<u8>>> {
                meta,
                snapshot: Cursor::new(bytes),
            }))
    }
}
