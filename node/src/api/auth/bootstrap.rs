//! The first admin token: when this server leads and the applied state has never had a bootstrap token, it
//! proposes `BootstrapToken` with the hash of `bootstrap_token_file`'s secret. Apply creates the `bootstrap`
//! admin token once per cluster and ignores every later proposal, so proposing after each election (or from
//! two leaders in turn) is harmless, and revoking the bootstrap token sticks.

use std::time::Duration;

use convoy_actors::domain::{Command, SecretHash};
use openraft::async_runtime::WatchReceiver;
use openraft::ServerState;

use crate::replica::Replica;

/// Watches leadership on the raft runtime `rt` and proposes the bootstrap token while it is missing.
pub fn spawn(replica: Replica, rt: &tokio::runtime::Handle, hash: SecretHash) {
    let mut metrics = replica.node().metrics();
    rt.spawn(async move {
        loop {
            let leading = metrics.borrow_and_update().state == ServerState::Leader;
            if leading && !bootstrapped(&replica) {
                match replica.propose(Command::BootstrapToken { hash }).await {
                    Ok(_) => tracing::info!("bootstrap admin token proposed"),
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot propose the bootstrap token yet; retrying");
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        continue;
                    }
                }
            }
            if metrics.changed().await.is_err() {
                break;
            }
        }
    });
}

fn bootstrapped(replica: &Replica) -> bool {
    replica.node().read(|m| m.state().tokens().bootstrapped())
}
