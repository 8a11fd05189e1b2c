//! The follower's membership probe: asks the leader it knows whether it is still a member and records
//! the answer in the replica's [`Removed`](crate::membership::Removed) flag (see [`crate::membership`]).

use std::time::Duration;

use crate::membership::MembershipAnswer;
use crate::replica::Replica;

/// How often a follower asks the leader whether it is still a member.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(2);

/// Asks the leader this server knows, every [`PROBE_INTERVAL`], until the process ends.
pub async fn probe(replica: Replica, http: reqwest::Client, scheme: &'static str) {
    let id = replica.node().id();
    loop {
        tokio::time::sleep(PROBE_INTERVAL).await;
        let Some((leader, member)) = replica.node().leader() else {
            continue;
        };
        if leader == id {
            continue;
        }
        let url = format!("{scheme}://{}/v1/cluster/membership/{id}", member.http_addr);
        let answer = match http.get(&url).send().await {
            Ok(r) if r.status().is_success() => r.json::<MembershipAnswer>().await.ok(),
            _ => None,
        };
        if let Some(answer) = answer.filter(|a| a.id == id && a.answered_by == leader) {
            if replica.removed().record(&answer) {
                if answer.member {
                    tracing::info!(leader, "the leader counts this server as a member again");
                } else {
                    tracing::warn!(leader, "the leader says this server is no longer a member: refusing writes, not ready");
                }
            }
        }
    }
}
