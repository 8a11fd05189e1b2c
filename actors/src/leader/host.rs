//! What the actors need from the server they run in: proposing, reading applied state, a clock.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::domain::{ClusterState, Command, DomainError, Outcome, Response, Timestamp};

/// Why a proposal made by an actor did not go through.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProposeError {
    /// The domain refused the command (for a timer's `TickDeployment`, normally impossible).
    #[error("refused: {0}")]
    Refused(DomainError),
    /// The log could not commit it (no leader, lost leadership, timeout).
    #[error("not committed: {0}")]
    Unavailable(String),
}

/// The server side of the actors: implemented by the `convoy` server over the replicated log,
/// and by an in-memory fake in tests.
pub trait Host: Send + Sync + 'static {
    /// Proposes `command` through the log and returns the domain's answer once applied.
    fn propose(&self, command: Command) -> BoxFuture<'static, Result<Response, ProposeError>>;

    /// Runs `f` over the locally applied state.
    fn read(&self, f: &mut dyn FnMut(&ClusterState));

    /// The leader's wall clock, in milliseconds since the Unix epoch.
    fn now_ms(&self) -> Timestamp;

    /// What the applies since the last call changed (their [`Outcome`]s merged), taken by the
    /// supervisor on each state change so that it touches only the actors concerned. The default
    /// asks for a re-sync every time: a host that does not track outcomes gets every actor matched
    /// against the whole state.
    fn take_outcome(&self) -> Outcome {
        Outcome::resync()
    }
}

/// Reads one value out of the host's applied state.
pub fn read_with<T>(host: &Arc<dyn Host>, f: impl FnOnce(&ClusterState) -> T) -> T {
    let mut f = Some(f);
    let mut out = None;
    host.read(&mut |state| {
        if let Some(f) = f.take() {
            out = Some(f(state));
        }
    });
    out.expect("Host::read must call the closure exactly once")
}
