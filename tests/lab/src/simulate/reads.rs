//! The clients' side of the linearizability check: consistent reads as convoy serves them
//! (`?consistent=true`: a read index from the leader, then the reading server waits until it has
//! applied that index and reads its own state), the writes on resources recorded with their
//! outcome, and the mutation that serves reads from a server's local state without the barrier.

use std::time::Duration;

use convoy_actors::domain::{ClusterState, Command, Response};

use super::cluster::{Client, Cluster, Written};
use super::executor::{self, HARNESS};
use super::history::{Outcome, ResourceOp};
use super::log_store::lock;
use super::observe::Observations;
use super::sm_store::applied_index_at_least;

/// How long a read waits for its index, then for its server to apply it.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// How reads are served.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadMode {
    /// After a linearizable barrier (what convoy does for `?consistent=true`).
    #[default]
    Consistent,
    /// The mutation: straight from the reading server's applied state, possibly stale.
    Stale,
}

/// The latest version of `resource` in `state` (0 before the first), `None` if absent.
pub fn latest_version(state: &ClusterState, resource: &str) -> Option<u64> {
    state
        .resource(resource)
        .map(|r| r.versions.iter().map(|v| v.version).max().unwrap_or(0))
}

/// Spawns one read of `resource` on server `reader` (nothing if it is down).
pub fn spawn_read(
    cluster: &Cluster,
    client: &Client,
    reader: u64,
    resource: String,
    mode: ReadMode,
) {
    let Some(applied) = cluster.applied_of(reader) else {
        return;
    };
    let obs = cluster.obs.clone();
    let client = client.clone();
    let id = obs.op_called(&resource, ResourceOp::Read(None));
    executor::spawn_owned(HARNESS, async move {
        if mode == ReadMode::Consistent {
            let Ok(index) = client.read_index(READ_TIMEOUT).await else {
                obs.op_discarded(id);
                return;
            };
            if !applied_index_at_least(&applied, index, READ_TIMEOUT).await {
                obs.op_discarded(id);
                return;
            }
        }
        let seen = latest_version(lock(&applied).machine.state(), &resource);
        obs.op_returned(id, ResourceOp::Read(seen));
    });
}

/// The operation `command` is on a resource, if the linearizability check follows it (the
/// harness's own barrier writes are left out).
fn resource_op(command: &Command) -> Option<(&str, ResourceOp)> {
    match command {
        Command::CreateResource { name } if !name.starts_with("settle-") => {
            Some((name, ResourceOp::Create(Outcome::Unknown)))
        }
        Command::PublishVersion { resource, .. } => {
            Some((resource, ResourceOp::Publish(Outcome::Unknown)))
        }
        _ => None,
    }
}

/// Records the invocation of `command` if it is one the check follows; returns its id.
pub fn write_called(obs: &Observations, command: &Command) -> Option<usize> {
    resource_op(command).map(|(resource, op)| obs.op_called(resource, op))
}

/// Records what write `id` (of `command`) came to. A write without an answer stays open: it may
/// or may not have taken effect.
pub fn write_returned(obs: &Observations, id: Option<usize>, command: &Command, written: &Written) {
    let (Some(id), Written::Done { response, .. }) = (id, written) else {
        return;
    };
    let op = match (command, response) {
        (Command::CreateResource { .. }, Ok(_)) => ResourceOp::Create(Outcome::Applied(())),
        (Command::CreateResource { .. }, Err(_)) => ResourceOp::Create(Outcome::Refused),
        (Command::PublishVersion { .. }, Ok(Response::VersionPublished { version, .. })) => {
            ResourceOp::Publish(Outcome::Applied(*version))
        }
        (Command::PublishVersion { .. }, _) => ResourceOp::Publish(Outcome::Refused),
        _ => return,
    };
    obs.op_returned(id, op);
}
