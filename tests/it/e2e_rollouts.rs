//! Rollouts over three real servers and simulated fleets, checked from the agents' side: a batch
//! deployment whose last node fails rolls back in exactly the reverse order with the same batch sizes
//! (seed 001's example), a canary range leaves two versions in a consumer, and a rolling deployment
//! never lets more nodes install or prefetch than its windows allow.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use convoy_tests::fleet::max_overlap;
use convoy_tests::scenario::{
    count_nodes, currents, event_nodes, post_ok, publish, resource_with_v1,
    strong_fleet_at_v1 as fleet_at_v1, wait_running, wait_status,
};
use convoy_tests::{Cluster, FleetConfig, Phase};
use serde_json::json;

const LONG: Duration = Duration::from_secs(40);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollback_reverse_order_canary_and_rolling_windows_seen_by_agents() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let api = cluster.client_except(0);
    for resource in ["batchapp", "canaryapp", "rollapp"] {
        resource_with_v1(&api, resource).await?;
        publish(&api, resource, json!({"label": "v2"})).await?;
    }

    // Three fleets at once: batches with a failing last node, a canary, a rolling window.
    let (batch_nodes, batch_fleet) = fleet_at_v1(
        &cluster,
        &api,
        "batch",
        9,
        FleetConfig::new("batchapp").failing("batch-8", 2),
    )
    .await?;
    let (canary_nodes, _canary_fleet) =
        fleet_at_v1(&cluster, &api, "canary", 4, FleetConfig::new("canaryapp")).await?;
    let roll_config = FleetConfig {
        download: Duration::from_millis(150),
        install: Duration::from_millis(200),
        ..FleetConfig::new("rollapp")
    };
    let (roll_nodes, roll_fleet) = fleet_at_v1(&cluster, &api, "roll", 12, roll_config).await?;

    let batch = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "batch", "resource": "batchapp", "version": 2,
               "strategy": {"batch": {"sizes": [3]}}}),
    )
    .await?;
    let canary = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "canary", "resource": "canaryapp", "version": 2, "nodes": "0-1",
               "strategy": {"all_at_once": {}}}),
    )
    .await?;
    let roll = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "roll", "resource": "rollapp", "version": 2,
               "strategy": {"rolling": {"install_window": 3, "download_window": 2}}}),
    )
    .await?;

    // Rollback: forward (0,1,2)(3,4,5)(6,7,8 fails) rolls back (8,7,6)(5,4,3)(2,1,0).
    let id = batch["id"].as_str().unwrap();
    let rolled_back = wait_status(&api, id, "ROLLED_BACK", LONG).await?;
    let name = |i: usize| format!("batch-{i}");
    let reverse: Vec<String> = (0..9).rev().map(name).collect();
    // First admissions (a node landing on v2 after being counted back is admitted again).
    let mut seen = BTreeSet::new();
    let mut admitted = event_nodes(&rolled_back, "rollback");
    admitted.retain(|n| seen.insert(n.clone()));
    assert_eq!(admitted, reverse, "{rolled_back}");
    // The agents saw the same batches, each beginning only after the previous one ended. Node 8
    // never left version 1 (its install failed); nodes 6 and 7 switch back only if their install of
    // version 2 finished before the rollback reached them.
    // A node admitted twice (counted back mid-install, then back on v2) switches late by design.
    let admissions = event_nodes(&rolled_back, "rollback");
    let twice: BTreeSet<&String> = admissions
        .iter()
        .filter(|n| admissions.iter().filter(|m| m == n).count() > 1)
        .collect();
    let spans: Vec<_> = batch_fleet
        .spans()
        .into_iter()
        .filter(|s| s.phase == Phase::Install && s.version == 1 && !twice.contains(&s.node))
        .collect();
    let batches: [&[usize]; 3] = [&[8, 7, 6], &[5, 4, 3], &[2, 1, 0]];
    let mut previous_end = None;
    for (k, members) in batches.iter().enumerate() {
        let members: BTreeSet<String> = members.iter().map(|i| name(*i)).collect();
        let chunk: Vec<_> = spans.iter().filter(|s| members.contains(&s.node)).collect();
        if k > 0 {
            assert_eq!(chunk.len(), 3, "rollback batch {k}: {spans:?}");
        }
        if let (Some(end), Some(began)) = (previous_end, chunk.iter().map(|s| s.start).min()) {
            assert!(
                began >= end,
                "rollback batch {k} began before batch {} ended",
                k - 1
            );
        }
        previous_end = chunk.iter().filter_map(|s| s.end).max().or(previous_end);
    }
    assert_eq!(
        currents(&api, &batch_nodes, "batchapp").await?,
        vec![Some(1); 9]
    );

    // Canary: ordinals 0 and 1 run v2, the rest stay on v1.
    let id = canary["id"].as_str().unwrap();
    let done = wait_status(&api, id, "ROLLED_FORWARD", LONG).await?;
    assert_eq!(done["nodes"].as_array().unwrap().len(), 2, "{done}");
    wait_running(&api, &canary_nodes[..2], "canaryapp", 2, LONG).await?;
    assert_eq!(
        currents(&api, &canary_nodes, "canaryapp").await?,
        vec![Some(2), Some(2), Some(1), Some(1)]
    );

    // Rolling: the windows were used and never exceeded, as the agents saw them.
    let id = roll["id"].as_str().unwrap();
    let done = wait_status(&api, id, "ROLLED_FORWARD", LONG).await?;
    assert_eq!(count_nodes(&done, "succeeded"), roll_nodes.len(), "{done}");
    let installing = roll_fleet.max_concurrent(Phase::Install, 2);
    // A prefetching node leaves the download window when the leader admits it to install (the
    // leader-stamped `install` event), which it learns only at its next report: cut its span there.
    let admitted: BTreeMap<String, u64> = done["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "install")
        .map(|e| {
            (
                e["node"].as_str().unwrap().to_string(),
                e["at"].as_u64().unwrap(),
            )
        })
        .collect();
    let prefetching = max_overlap(
        roll_fleet
            .spans()
            .into_iter()
            .filter(|s| s.phase == Phase::Prefetch && s.version == 2)
            .map(|s| {
                let cut = admitted.get(&s.node).copied().unwrap_or(u64::MAX);
                (s.start, Some(s.end.unwrap_or(u64::MAX).min(cut)))
            }),
    );
    assert!(
        (2..=3).contains(&installing),
        "{installing} nodes installed at once"
    );
    assert!(prefetching <= 2, "{prefetching} nodes prefetched at once");
    Ok(())
}
