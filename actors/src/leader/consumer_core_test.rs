//! The consumer's ingestion with time passed in: heartbeats give nothing to propose, one batch in
//! flight at a time, and a batch heavy with errors paces the next by the clock it is given.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::super::testkit::*;
use super::{ConsumerCore, Flush};
use crate::domain::NodeReport;

fn batch_nodes(flush: Flush) -> Vec<String> {
    match flush {
        Flush::Propose(batch) => batch.into_iter().map(|r| r.node).collect(),
        other => panic!("expected a batch, got {other:?}"),
    }
}

/// `node` running v`current` with an error of `bytes` bytes on it.
fn failing(node: &str, current: u64, bytes: usize) -> NodeReport {
    let mut report = node_report(node, current);
    for resource in report.resources.values_mut() {
        for version in resource.versions.values_mut() {
            version.error = Some("e".repeat(bytes));
        }
    }
    report
}

#[test]
fn heartbeats_give_nothing_and_one_batch_is_in_flight_at_a_time() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 3);
    let mut core = ConsumerCore::new("web".into(), host.clone());
    let now = Instant::now();
    assert_eq!(
        core.ingest(vec![node_report("web-0", 1)], now),
        vec![Ok(())]
    );
    assert!(matches!(core.flush(now), Flush::Idle), "a heartbeat");
    core.ingest(vec![node_report("web-0", 2)], now);
    assert_eq!(batch_nodes(core.flush(now)), ["web-0"]);
    core.ingest(vec![node_report("web-1", 2), node_report("web-2", 2)], now);
    assert!(matches!(core.flush(now), Flush::Idle), "a batch in flight");
    core.proposed::<()>(Ok(()));
    assert_eq!(batch_nodes(core.flush(now)), ["web-1", "web-2"]);
}

#[test]
fn a_batch_heavy_with_errors_paces_the_next_by_the_given_clock() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 2);
    let mut core = ConsumerCore::with_byte_rate("web".into(), host.clone(), 500);
    let start = Instant::now();
    // 1,000 bytes of errors at 500 bytes a second: the next batch waits two seconds.
    core.ingest(vec![failing("web-0", 2, 1_000)], start);
    assert_eq!(batch_nodes(core.flush(start)), ["web-0"]);
    core.proposed::<()>(Ok(()));
    core.ingest(vec![node_report("web-1", 2)], start);
    match core.flush(start + Duration::from_millis(500)) {
        Flush::Wait(wait) => assert_eq!(wait, Duration::from_millis(1_500)),
        other => panic!("expected a wait, got {other:?}"),
    }
    assert!(
        matches!(core.flush(start + Duration::from_secs(3)), Flush::Idle),
        "one wait armed at a time"
    );
    core.paced_over();
    assert_eq!(
        batch_nodes(core.flush(start + Duration::from_secs(2))),
        ["web-1"]
    );
}
