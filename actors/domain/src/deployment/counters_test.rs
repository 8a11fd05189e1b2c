use crate::testing::Kit;
use crate::{Deployment, FailedNodes, Strategy};

/// `d` encoded the way it was before its counters were grouped: every field flat, in declaration order, the
/// watches as the plain set they were.
fn flat_bytes(d: &Deployment) -> Vec<u8> {
    let enc = |v: &dyn erased::Encode| v.bytes();
    let (f, t, r) = (&d.forward, &d.tally, &d.rollback);
    [
        enc(&d.id),
        enc(&d.consumer),
        enc(&d.resource),
        enc(&d.version),
        enc(&d.status),
        // The waits and the active clock replaced `paused_by` (state format 5, DEPLOYMENTS.md §6).
        enc(&d.waits),
        enc(&d.active),
        enc(&d.settings),
        enc(&d.created_at),
        enc(&d.last_pulse_at),
        enc(&d.nodes),
        enc(&d.full),
        enc(&d.group),
        enc(&d.events),
        enc(&f.install_cursor),
        enc(&f.download_cursor),
        enc(&f.install_used),
        enc(&f.download_used),
        enc(&f.batch_open),
        enc(&f.autopaused),
        enc(&t.succeeded),
        enc(&t.failed),
        enc(&t.skipped),
        enc(&d.touched),
        enc(&d.batches),
        enc(&r.cursor),
        enc(&r.used),
        enc(&r.batch),
        enc(&r.failed),
        enc(&r.again),
        enc(&d.watches.0),
        enc(&d.ended_at),
        // Added after the grouping (state format: pacing, DEPLOYMENTS.md §14).
        enc(&d.pace),
        enc(&d.analysis),
        // Added after the grouping (issue 24): a field of its own at the end.
        enc(&d.policy_check_at),
        enc(&d.jitter_at),
    ]
    .concat()
}

mod erased {
    /// Encodes one serde value with bincode's standard config (bincode writes struct fields back to back,
    /// so the concatenation of a struct's fields is the struct).
    pub trait Encode {
        fn bytes(&self) -> Vec<u8>;
    }
    impl<T: serde::Serialize> Encode for T {
        fn bytes(&self) -> Vec<u8> {
            bincode::serde::encode_to_vec(self, bincode::config::standard()).expect("encodes")
        }
    }
}

#[test]
fn grouped_counters_keep_the_snapshot_bytes() {
    let mut k = Kit::new(6);
    let id = k.start_with(|s| {
        s.strategy = Some(Strategy::Batch {
            sizes: vec![2, 3],
            autopause: false,
        });
        // Node 0 watches after installing; node 1's failure is tolerated, so nothing rolls back yet.
        s.min_healthy_ms = Some(60_000);
        s.max_failed_nodes = Some(FailedNodes::Count(5));
    });
    k.installed(0);
    k.failed(1);
    let d = k.d(id);
    assert_eq!(d.tally.failed, 1, "{:?}", d.tally);
    assert!(!d.touched.is_empty());
    assert!(!d.watches.0.is_empty(), "node 0 watches");
    let grouped = bincode::serde::encode_to_vec(d, bincode::config::standard()).unwrap();
    assert_eq!(grouped, flat_bytes(d));
}
