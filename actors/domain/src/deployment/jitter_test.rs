use super::offset;
use crate::testing::*;
use crate::*;

#[test]
fn offsets_are_deterministic_within_the_jitter_and_spread() {
    let offsets: Vec<u64> = (0..200)
        .map(|i| offset(DeploymentId(3), &format!("n-{i}"), 30_000))
        .collect();
    assert!(offsets.iter().all(|o| *o < 30_000));
    let again: Vec<u64> = (0..200)
        .map(|i| offset(DeploymentId(3), &format!("n-{i}"), 30_000))
        .collect();
    assert_eq!(offsets, again);
    // Spread: every tenth of the range is hit by some of 200 nodes.
    for tenth in 0..10 {
        assert!(
            offsets.iter().any(|o| o / 3_000 == tenth),
            "no offset in tenth {tenth}: {offsets:?}"
        );
    }
    assert_ne!(
        offset(DeploymentId(3), "n-0", 30_000),
        offset(DeploymentId(4), "n-0", 30_000),
        "the deployment id is part of the hash"
    );
    assert_eq!(offset(DeploymentId(3), "n-0", 0), 0);
}

fn jittered(k: &mut Kit, jitter: u64) -> DeploymentId {
    k.start_with(|s| {
        s.strategy = Some(Strategy::Rolling {
            install_window: 4,
            download_window: 4,
        });
        s.start_jitter_ms = Some(jitter);
    })
}

#[test]
fn each_node_waits_for_its_offset_and_the_deadline_wakes_the_deployment() {
    let mut k = Kit::new(4);
    let id = jittered(&mut k, 60_000);
    let d = k.d(id).clone();
    let starts: Vec<u64> = d.nodes.iter().map(|n| d.jitter_start(&n.id)).collect();
    assert!(starts
        .iter()
        .all(|s| *s >= d.created_at && *s < d.created_at + 60_000));
    if starts[0] > d.created_at {
        assert_eq!(
            k.phases(id)[0],
            NodePhase::Pending,
            "admitted before its offset"
        );
        assert_eq!(
            k.s.deployment_summary(id, k.now)
                .unwrap()
                .waiting_for
                .as_deref(),
            Some("start_jitter")
        );
        let why = k.s.node_history(id, "c-0").unwrap().now;
        assert!(why.contains("start jitter"), "{why}");
    }
    // The fixed order holds: the next pending node is admitted at its own time, never before.
    let mut rounds = 0;
    while let Some(next) = k.phases(id).iter().position(|p| *p == NodePhase::Pending) {
        let due = starts[next];
        assert!(due >= starts[..next].iter().copied().max().unwrap_or(0));
        assert_eq!(
            k.s.deployment_deadline(id),
            Some(due),
            "the jitter is the deployment's deadline"
        );
        // A new leader knows only the state: the deadline it re-arms from a restored snapshot is the same.
        let restored = ClusterState::from_snapshot_bytes(&k.s.snapshot_bytes()).unwrap();
        assert_eq!(restored.deployment_deadline(id), Some(due));
        k.now = due - 1;
        k.ok(Command::TickDeployment { id });
        assert_eq!(
            k.phases(id)[next],
            NodePhase::Pending,
            "admitted before {due}"
        );
        k.now = due;
        k.ok(Command::TickDeployment { id });
        assert_eq!(
            k.phases(id)[next],
            NodePhase::Installing,
            "not admitted at {due}"
        );
        rounds += 1;
        assert!(rounds <= 4);
    }
    assert_eq!(k.phases(id), vec![NodePhase::Installing; 4]);
    assert_eq!(k.d(id).jitter_at, None);
}

#[test]
fn a_jitter_over_a_day_is_refused() {
    let mut k = Kit::new(2);
    let e = k.err(Command::StartDeployment(DeploymentSpec {
        consumer: "c".into(),
        resource: "r".into(),
        start_jitter_ms: Some(MAX_START_JITTER_MS + 1),
        ..Default::default()
    }));
    assert!(e.to_string().contains("start_jitter_ms"), "{e}");
}
