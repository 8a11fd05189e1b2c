//! The rollback counts by consumer and resource, and their bounded label set.

use super::*;
use convoy_actors::domain::{DeploymentId, Status};

fn summary(id: u64, consumer: &str, resource: &str, status: Status) -> DeploymentSummary {
    DeploymentSummary {
        id: DeploymentId(id),
        consumer: consumer.into(),
        resource: resource.into(),
        version: 2,
        status,
        paused_by: None,
        waits: Vec::new(),
        nodes: 3,
        succeeded: 0,
        failed: 0,
        skipped: 0,
    }
}

#[test]
fn only_deployments_that_rolled_back_are_counted_by_their_pair() {
    let all = [
        summary(1, "web", "app", Status::RolledBack),
        summary(2, "web", "app", Status::RollingBack),
        summary(3, "web", "app", Status::RolledForward),
        summary(4, "web", "tool", Status::RollBackPaused),
        summary(5, "db", "app", Status::Failed),
        summary(6, "db", "app", Status::RollForwardAwaitingPulse),
        summary(7, "db", "app", Status::RollBackAwaitingPulse),
    ];
    let counts = count(&all);
    let want: BTreeMap<(String, String), u64> = [
        (("db".to_string(), "app".to_string()), 1),
        (("web".to_string(), "app".to_string()), 2),
        (("web".to_string(), "tool".to_string()), 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(counts, want);
}

#[test]
fn pairs_beyond_the_cap_share_one_series_and_no_rollback_is_lost() {
    let all: Vec<DeploymentSummary> = (0..MAX_PAIRS as u64 + 50)
        .map(|i| summary(i, &format!("c{i:05}"), "app", Status::RolledBack))
        .collect();
    let counts = count(&all);
    assert_eq!(
        counts.len(),
        MAX_PAIRS + 1,
        "the cap plus one shared series"
    );
    assert_eq!(
        counts.get(&(OTHER.to_string(), OTHER.to_string())),
        Some(&50)
    );
    assert_eq!(counts.values().sum::<u64>(), MAX_PAIRS as u64 + 50);
    assert_eq!(
        counts.get(&("c00000".to_string(), "app".to_string())),
        Some(&1),
        "the first pairs in name order keep their own series"
    );
}
