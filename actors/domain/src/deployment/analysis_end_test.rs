//! How a deployment with an analysis ends (issue 23): never ROLLED_FORWARD by its quorum or its completion
//! timeout while its analysis has not passed; a run with no successful measurement is never a success.

use crate::analysis::run::Measured;
use crate::analysis::spec::{Analysis, AnalysisMode, MetricSpec, OnOdd};
use crate::testing::*;
use crate::*;

fn analysis(mode: AnalysisMode) -> Analysis {
    Analysis {
        provider: "prom".into(),
        mode,
        metrics: vec![MetricSpec {
            name: "errors".into(),
            query: "errors".into(),
            success: Some("result < 0.01".into()),
            failure: None,
            interval_ms: 10_000,
            count: None,
            initial_delay_ms: 0,
            failure_limit: 0,
            inconclusive_limit: 0,
            consecutive_error_limit: 4,
            on_empty: OnOdd::Inconclusive,
            on_nan: OnOdd::Inconclusive,
            dry_run: false,
        }],
        on_failure: None,
        on_inconclusive: Default::default(),
    }
}

/// Version 2 to the 4 nodes in batches of 2, with `completion` and an analysis in `mode`.
fn start(k: &mut Kit, mode: AnalysisMode, completion: Completion) -> DeploymentId {
    k.start_with(|s| {
        s.strategy = Some(Strategy::Batch {
            sizes: vec![2],
            autopause: false,
        });
        s.completion = Some(completion);
        s.analysis = Some(analysis(mode));
    })
}

fn quorum(q: f64) -> Completion {
    Completion {
        quorum: Some(q),
        ..Completion::default()
    }
}

fn timeout(ms: u64) -> Completion {
    Completion {
        timeout_ms: Some(ms),
        ..Completion::default()
    }
}

/// Records the next due measurement of the deployment with `m`; answers whether one was due.
fn measure(k: &mut Kit, id: DeploymentId, m: Measured) -> bool {
    let (due, _) = k.s.analysis_due(u64::MAX);
    let Some(d) = due.into_iter().find(|d| d.id == id) else {
        return false;
    };
    k.ok(Command::RecordMeasurement {
        id,
        metric: d.metric,
        phase: d.phase,
        seq: d.seq,
        measured: m,
    });
    true
}

fn last_status_message(k: &Kit, id: DeploymentId) -> String {
    k.d(id)
        .events
        .iter()
        .rev()
        .find(|e| e.kind == EventKind::Status)
        .and_then(|e| e.message.clone())
        .unwrap_or_default()
}

#[test]
fn a_quorum_waits_for_the_per_batch_verdict() {
    let mut k = Kit::new(4);
    let id = start(&mut k, AnalysisMode::PerBatch, quorum(0.5));
    k.installed(0);
    k.installed(1);
    assert_eq!(
        k.status(id),
        Status::RollingForward,
        "the quorum is met but batch 1's analysis has not passed"
    );
    assert!(measure(&mut k, id, Measured::Value(0.001)));
    assert_eq!(k.status(id), Status::RolledForward);
    assert!(last_status_message(&k, id).starts_with("quorum met: 2 of 4"));
}

#[test]
fn a_quorum_whose_batch_fails_its_analysis_does_not_roll_forward() {
    let mut k = Kit::new(4);
    let id = start(&mut k, AnalysisMode::PerBatch, quorum(0.5));
    k.installed(0);
    k.installed(1);
    assert!(measure(&mut k, id, Measured::Value(0.5)));
    assert_eq!(k.status(id), Status::RollingBack);
}

#[test]
fn a_timeout_before_the_per_batch_verdict_takes_the_failure_path_and_says_why() {
    let mut k = Kit::new(4);
    let id = start(&mut k, AnalysisMode::PerBatch, timeout(60_000));
    k.installed(0);
    k.installed(1);
    k.tick_to(k.now + 60_000);
    assert_eq!(k.status(id), Status::RollingBack);
    let why = last_status_message(&k, id);
    assert!(why.ends_with("analysis of batch 1 has not passed"), "{why}");
}

#[test]
fn a_timeout_in_a_batch_not_yet_analysed_names_that_batch() {
    let mut k = Kit::new(4);
    let id = start(&mut k, AnalysisMode::PerBatch, timeout(60_000));
    k.installed(0);
    k.installed(1);
    assert!(measure(&mut k, id, Measured::Value(0.001)));
    k.installed(2);
    // Node 3 is still installing: batch 2 never finished, so it was never measured.
    k.tick_to(k.now + 60_000);
    assert_eq!(k.status(id), Status::RollingBack);
    let why = last_status_message(&k, id);
    assert!(
        why.ends_with("3 of 4 nodes succeeded, 1 timed out; analysis of batch 2 has not passed"),
        "{why}"
    );
}

#[test]
fn a_background_quorum_needs_a_successful_measurement() {
    let mut k = Kit::new(4);
    let id = start(&mut k, AnalysisMode::Background, quorum(0.5));
    assert!(measure(
        &mut k,
        id,
        Measured::Error("cannot connect".into())
    ));
    k.installed(0);
    k.installed(1);
    assert_eq!(
        k.status(id),
        Status::RollingForward,
        "zero successful measurements is never success"
    );
    k.now += 10_000;
    assert!(measure(&mut k, id, Measured::Value(0.001)));
    assert_eq!(k.status(id), Status::RolledForward);
}

#[test]
fn a_background_timeout_with_no_successful_measurement_says_why() {
    let mut k = Kit::new(4);
    let id = start(&mut k, AnalysisMode::Background, timeout(60_000));
    assert!(measure(
        &mut k,
        id,
        Measured::Error("cannot connect".into())
    ));
    k.installed(0);
    k.installed(1);
    k.tick_to(k.now + 60_000);
    assert_eq!(k.status(id), Status::RollingBack);
    let why = last_status_message(&k, id);
    assert!(
        why.ends_with("analysis has no successful measurement"),
        "{why}"
    );
}

/// Version 2 to the 4 nodes all at once, with a background analysis and no completion condition.
fn start_all_at_once(k: &mut Kit) -> DeploymentId {
    k.start_with(|s| {
        s.strategy = Some(Strategy::AllAtOnce { fail_fast: false });
        s.analysis = Some(analysis(AnalysisMode::Background));
    })
}

#[test]
fn every_node_done_with_no_successful_background_measurement_waits_for_one() {
    let mut k = Kit::new(4);
    let id = start_all_at_once(&mut k);
    assert!(measure(
        &mut k,
        id,
        Measured::Error("cannot connect".into())
    ));
    for i in 0..4 {
        k.installed(i);
    }
    assert_eq!(
        k.status(id),
        Status::RollingForward,
        "every node is done but nothing was measured: no success yet"
    );
    let summary = k.s.deployment_summary(id, k.now).unwrap();
    assert_eq!(summary.waiting_for.as_deref(), Some("analysis"));
    let said: Vec<_> = k
        .d(id)
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Analysis)
        .filter_map(|e| e.message.clone())
        .collect();
    assert_eq!(
        said,
        vec![
            "every node is done; analysis has no successful measurement: \
             waiting for one before it ends"
                .to_string()
        ],
        "said once"
    );
    k.now += 10_000;
    assert!(measure(&mut k, id, Measured::Error("again".into())));
    assert_eq!(k.status(id), Status::RollingForward);
    k.now += 10_000;
    assert!(measure(&mut k, id, Measured::Value(0.001)));
    assert_eq!(k.status(id), Status::RolledForward);
    assert!(k
        .s
        .deployment_summary(id, k.now)
        .unwrap()
        .waiting_for
        .is_none());
}

#[test]
fn every_node_done_and_every_background_query_erroring_pauses_never_rolls_forward() {
    let mut k = Kit::new(4);
    let id = start_all_at_once(&mut k);
    for i in 0..4 {
        k.installed(i);
    }
    for _ in 0..5 {
        assert!(measure(&mut k, id, Measured::Error("HTTP 503".into())));
        k.now += 10_000;
    }
    assert_eq!(k.status(id), Status::RollForwardPaused);
    assert!(
        last_status_message(&k, id).contains("5 consecutive errors, 4 tolerated"),
        "{}",
        last_status_message(&k, id)
    );
}
