//! SIGTERM of the leader while clients write costs no election and no failed write: the leader
//! hands leadership to the most up-to-date follower first, then stops; every write answers 201
//! (a follower's forwarding retries while leadership moves), and the survivors name a new leader.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use convoy_node::client::ApiClient;
use convoy_tests::{eventually, names, Cluster, RawClient};
use serde_json::{json, Value};
use tokio::sync::Mutex;

/// What a writer saw: the names acknowledged and every other answer.
#[derive(Default)]
struct Seen {
    acked: Vec<String>,
    failed: Vec<String>,
}

/// Writes unique resources through `post` until `stop` (at most 3,000), recording every answer.
fn writer<F, Fut>(
    prefix: &'static str,
    stop: Arc<AtomicBool>,
    post: F,
) -> tokio::task::JoinHandle<Seen>
where
    F: Fn(Value) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    tokio::spawn(async move {
        let mut seen = Seen::default();
        for i in 0..3_000 {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let name = format!("{prefix}{i:04}");
            match post(json!({ "name": name })).await {
                Ok(()) => seen.acked.push(name),
                Err(e) => seen.failed.push(format!("{name}: {e}")),
            }
        }
        seen
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_of_the_leader_hands_over_and_every_write_succeeds() -> anyhow::Result<()> {
    let mut cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let survivors: Vec<u64> = (1..=3).filter(|id| *id != leader).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let progress = Arc::new(AtomicUsize::new(0));

    // One writer through a follower (its forwarding must ride out the hand-over), one through
    // a failover client that prefers the leader (it moves on once the leader's port closes).
    let follower: RawClient = cluster.server(survivors[0]).client();
    let via_follower = {
        let progress = progress.clone();
        writer("f", stop.clone(), move |body| {
            let (follower, progress) = (follower.clone(), progress.clone());
            async move {
                match follower.post("/v1/resources", &body).await {
                    Ok((201, _)) => {
                        progress.fetch_add(1, Ordering::Relaxed);
                        Ok(())
                    }
                    Ok((status, answer)) => Err(format!("{status} {answer}")),
                    Err(e) => Err(e.to_string()),
                }
            }
        })
    };
    let order: Vec<String> = std::iter::once(leader)
        .chain(survivors.iter().copied())
        .map(|id| cluster.server(id).url())
        .collect();
    let failover = Arc::new(ApiClient::new(&order.join(","))?);
    let via_leader = writer("l", stop.clone(), move |body| {
        let failover = failover.clone();
        async move {
            failover
                .post::<_, Value>("/v1/resources", &body)
                .await
                .map(drop)
                .map_err(|e| e.to_string())
        }
    });

    let wait_progress = |more: usize| {
        let progress = progress.clone();
        let target = progress.load(Ordering::Relaxed) + more;
        eventually(Duration::from_secs(20), move || {
            let progress = progress.clone();
            async move { (progress.load(Ordering::Relaxed) >= target).then_some(()) }
        })
    };
    wait_progress(30).await?;
    let clean = tokio::task::block_in_place(|| cluster.server_mut(leader).terminate());
    assert!(clean, "the leader exits 0 on SIGTERM\n{}", cluster.logs());
    wait_progress(30).await?;
    stop.store(true, Ordering::Relaxed);
    let (via_follower, via_leader) = (via_follower.await?, via_leader.await?);

    for (who, seen) in [("follower", &via_follower), ("failover", &via_leader)] {
        assert!(
            seen.failed.is_empty(),
            "writes through the {who} failed: {:?}\n{}",
            &seen.failed[..seen.failed.len().min(5)],
            cluster.logs()
        );
        assert!(seen.acked.len() >= 30, "{who}: {} writes", seen.acked.len());
    }
    let new_leader = cluster
        .wait_leader_among(&survivors, Duration::from_secs(5))
        .await?;
    assert_ne!(new_leader, leader);
    let log = std::fs::read_to_string(cluster.server(leader).log_path())?;
    assert!(
        log.contains("leadership handed over"),
        "the old leader handed over rather than leaving an election behind:\n{log}"
    );

    // Every acknowledged write is there, once.
    let api = cluster.server(new_leader).client();
    let acked: Vec<String> = via_follower
        .acked
        .iter()
        .chain(&via_leader.acked)
        .cloned()
        .collect();
    let listed = Arc::new(Mutex::new(Vec::new()));
    eventually(Duration::from_secs(10), || {
        let (api, listed) = (api.clone(), listed.clone());
        async move {
            let (status, list) = api.get("/v1/resources").await.ok()?;
            *listed.lock().await = names(&list);
            (status == 200).then_some(())
        }
    })
    .await?;
    let listed = listed.lock().await.clone();
    let missing: Vec<&String> = acked.iter().filter(|n| !listed.contains(n)).collect();
    assert!(missing.is_empty(), "acknowledged writes lost: {missing:?}");
    Ok(())
}
