//! Tests of the monitoring counts: they agree with the deployments they count.

use crate::testing::*;
use crate::*;

fn count(g: &ActiveGauges, phase: NodePhase) -> u64 {
    g.phases
        .iter()
        .find(|(p, _)| *p == phase)
        .map_or(0, |(_, n)| *n)
}

#[test]
fn every_status_is_listed_and_deployments_are_counted_by_status() {
    let mut k = Kit::new(3);
    let empty = k.s.gauges(k.now);
    assert_eq!(empty.deployments_by_status.len(), ALL_STATUSES.len());
    assert!(empty.deployments_by_status.values().all(|n| *n == 0));
    assert_eq!((empty.nodes, empty.active_nodes), (3, 3));

    let id = k.start_with(|_| {});
    let g = k.s.gauges(k.now);
    assert_eq!(g.deployments_by_status[&k.d(id).status], 1);
    assert_eq!(g.deployments_by_status.values().sum::<u64>(), 1);
    let a = &g.active[&id];
    assert_eq!((a.consumer.as_str(), a.resource.as_str()), ("c", "r"));
    assert_eq!(a.phases.len(), ALL_PHASES.len());
    assert_eq!(a.phases.iter().map(|(_, n)| n).sum::<u64>(), 3);
    let phases = k.phases(id);
    for phase in ALL_PHASES {
        let want = phases.iter().filter(|p| **p == phase).count() as u64;
        assert_eq!(count(a, phase), want, "{phase:?}");
    }
    assert_eq!(a.pulse_slack_ms, None);
    assert_eq!(g.overdue_pulses, 0);
}

#[test]
fn pulse_slack_counts_down_and_an_overdue_pulse_is_counted() {
    let mut k = Kit::new(2);
    let id = k.start_with(|s| s.pulse_interval_ms = Some(1_000));
    k.ok(Command::Pulse {
        id,
        by: Actor::Pulse,
    });
    assert_eq!(
        k.s.gauges(k.now + 400).active[&id].pulse_slack_ms,
        Some(600)
    );
    assert_eq!(k.s.gauges(k.now + 400).overdue_pulses, 0);
    let late = k.s.gauges(k.now + 1_500);
    assert_eq!(late.active[&id].pulse_slack_ms, Some(-500));
    assert_eq!(late.overdue_pulses, 1);
}

#[test]
fn a_finished_deployment_leaves_the_active_counts() {
    let mut k = Kit::new(1);
    let id = k.start_with(|_| {});
    k.ok(Command::Abort {
        id,
        by: Actor::User,
        message: None,
    });
    let g = k.s.gauges(k.now);
    assert!(g.active.is_empty());
    assert_eq!(g.deployments_by_status[&Status::Aborted], 1);
}
