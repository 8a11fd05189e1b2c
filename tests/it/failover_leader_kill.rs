//! The leader is SIGKILLed again and again; each time a new leader is elected and accepts a
//! write within 5 s (no split-vote livelock), and the killed server rejoins.

use std::time::{Duration, Instant};

use convoy_tests::names;
use convoy_tests::Cluster;
use serde_json::json;

const KILLS: usize = 50;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_leader_kills_each_recover_within_five_seconds() -> anyhow::Result<()> {
    let mut cluster = Cluster::start(3).await?;
    let mut acked = Vec::new();
    let mut worst = Duration::ZERO;
    for round in 0..KILLS {
        let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
        cluster.server_mut(leader).kill();
        let killed_at = Instant::now();
        let name = format!("r{round}");
        // Keep trying through any survivor until the write is acknowledged (409: an earlier try
        // that timed out on our side did commit).
        let mut ok = false;
        while killed_at.elapsed() < Duration::from_secs(5) {
            let client = cluster.client_except(leader);
            if let Ok((201 | 409, _)) = client.post("/v1/resources", &json!({"name": name})).await {
                ok = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let took = killed_at.elapsed();
        assert!(
            ok,
            "round {round}: no write accepted within 5 s of killing leader {leader}\n{}",
            cluster.logs()
        );
        worst = worst.max(took);
        acked.push(name);
        cluster.restart(leader)?;
    }
    // Every acknowledged write survived every failover.
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let (_, list) = cluster
        .server(leader)
        .client()
        .get("/v1/resources?consistent=true")
        .await?;
    let have = names(&list);
    for name in &acked {
        assert!(
            have.contains(name),
            "acknowledged write {name} lost; have {have:?}"
        );
    }
    eprintln!("{KILLS} leader kills; slowest recovery to an acknowledged write: {worst:?}");
    Ok(())
}

/// A SIGKILLed leader's host refuses connections at once: the survivors see it, drop their lease
/// on the dead leader and let one agreed successor campaign (`raft/src/failover.rs`) instead of
/// waiting out the lease and an election timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_survivors_of_a_killed_leader_do_not_wait_out_its_lease() -> anyhow::Result<()> {
    let mut cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    cluster.server_mut(leader).kill();
    let survivors: Vec<u64> = cluster.running();
    let next = cluster
        .wait_leader_among(&survivors, Duration::from_secs(10))
        .await?;
    assert_ne!(next, leader);
    let seen: Vec<u64> = survivors
        .iter()
        .copied()
        .filter(|id| {
            cluster
                .server(*id)
                .log_tail(400)
                .contains("the leader's host refuses connections")
        })
        .collect();
    assert!(
        !seen.is_empty(),
        "no survivor noticed the dead leader's refused connections\n{}",
        cluster.logs()
    );
    // The old leader comes back as a follower of the new one.
    cluster.restart(leader)?;
    let (status, _) = cluster
        .client_except(leader)
        .post("/v1/resources", &json!({"name": "after"}))
        .await?;
    assert_eq!(status, 201);
    Ok(())
}
