use crate::testing::*;
use crate::*;

fn rolling(iw: u32, dw: u32) -> impl FnOnce(&mut DeploymentSpec) {
    move |s| {
        s.strategy = Some(Strategy::Rolling {
            install_window: iw,
            download_window: dw,
        });
        s.max_failures_per_node = Some(1);
        s.max_failed_nodes = Some(FailedNodes::Count(5));
    }
}

#[test]
fn summary_counts_windows_failing_nodes_and_age() {
    let mut k = Kit::new(8);
    let id = k.start_with(rolling(2, 3));
    k.now = 400;
    k.installed(0);
    k.failed(1);
    k.now = 1_000;
    let s = k.s.deployment_summary(id, 1_500).unwrap();
    assert_eq!(s.nodes, 8);
    assert_eq!(s.counts.succeeded, 1);
    assert_eq!(
        s.counts.get(NodePhase::Installing),
        2,
        "c-1 retries: {:?}",
        s.counts
    );
    assert_eq!(s.windows.install.used, 2);
    assert_eq!(s.windows.install.size, Some(2));
    assert_eq!(s.windows.download.size, Some(3));
    assert_eq!(s.windows.download.used, 3);
    assert_eq!(s.age_ms, 1_400, "age runs from creation at 100 to now");
    assert_eq!(s.failing_total, 1);
    let f = &s.failing[0];
    assert_eq!((f.id.as_str(), f.failures, f.at), ("c-1", 1, Some(400)));
    assert!(
        f.reason.as_deref().unwrap_or("").contains("exit 3"),
        "{f:?}"
    );
    assert!(s.events.len() <= summary::SUMMARY_EVENTS);
    assert_eq!(s.events_total as usize, k.d(id).events.len());
    assert_eq!(
        s.events.last().unwrap().at,
        400,
        "events are the newest, oldest first"
    );
}

#[test]
fn age_stops_at_the_end_and_pulse_countdown_shows_time_left() {
    let mut k = Kit::new(2);
    let id = k.start_with(|s| s.pulse_interval_ms = Some(1_000));
    let s = k.s.deployment_summary(id, 150).unwrap();
    let p = s.pulse.unwrap();
    assert!(p.blocked, "never pulsed: blocked awaiting a pulse");
    assert_eq!(p.left_ms, None);
    k.now = 200;
    k.ok(Command::Pulse {
        id,
        by: Actor::Pulse,
    });
    let p = k.s.deployment_summary(id, 700).unwrap().pulse.unwrap();
    assert_eq!(
        (p.deadline, p.left_ms, p.blocked),
        (Some(1_200), Some(500), false)
    );
    k.now = 300;
    k.installed(0);
    k.installed(1);
    let s = k.s.deployment_summary(id, 9_000).unwrap();
    assert_eq!(s.status, Status::RolledForward);
    assert_eq!(s.age_ms, 200, "a finished deployment's age is its duration");
}

#[test]
fn fingerprint_moves_with_progress_and_summary_size_does_not_grow_with_nodes() {
    let mut k = Kit::new(3);
    let id = k.start_with(rolling(1, 1));
    let before = k.s.deployment_fingerprint(id).unwrap();
    assert_eq!(Some(before), k.s.deployment_fingerprint(id));
    k.installed(0);
    assert_ne!(Some(before), k.s.deployment_fingerprint(id));
    assert_eq!(k.s.deployment_fingerprint(DeploymentId(99)), None);

    let mut big = Kit::new(2_000);
    let id = big.start_with(rolling(10, 10));
    let small = serde_json::to_vec(&k.s.deployment_summary(DeploymentId(1), 0).unwrap()).unwrap();
    let large = serde_json::to_vec(&big.s.deployment_summary(id, 0).unwrap()).unwrap();
    assert!(
        large.len() < 3 * small.len(),
        "{} vs {}",
        large.len(),
        small.len()
    );
}

#[test]
fn node_pages_filter_by_state_and_count_matches() {
    let mut k = Kit::new(10);
    let id = k.start_with(rolling(2, 2));
    k.installed(0);
    let page = NodePage {
        offset: 1,
        limit: 3,
        state: Some(NodePhase::Pending),
    };
    let (view, info) = k.s.deployment_page(id, &page).unwrap();
    let ids: Vec<&str> = view.nodes.iter().map(|n| n.id.as_str()).collect();
    // c-0 succeeded, c-1 c-2 installing (fetching in both download slots): pending are c-3..c-9.
    assert_eq!(ids, ["c-4", "c-5", "c-6"]);
    assert_eq!((info.matched, info.total), (7, 10));
    let all = NodePage {
        offset: 8,
        limit: 100,
        state: None,
    };
    let (view, info) = k.s.deployment_page(id, &all).unwrap();
    assert_eq!(view.nodes.len(), 2);
    assert_eq!(info.matched, 10);
    assert!(view.events.len() <= summary::SUMMARY_EVENTS);
}
