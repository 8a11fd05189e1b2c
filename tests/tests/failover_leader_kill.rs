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
