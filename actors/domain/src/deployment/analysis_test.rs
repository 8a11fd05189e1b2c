use crate::analysis::run::{Measured, Verdict};
use crate::analysis::spec::{Analysis, AnalysisMode, MetricSpec, OnFailure, OnOdd};
use crate::testing::*;
use crate::*;

fn metric(name: &str) -> MetricSpec {
    MetricSpec {
        name: name.into(),
        query: "rate(errors{node=~\"{{nodes}}\"}[1m])".into(),
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
    }
}

fn analysis(mode: AnalysisMode) -> Analysis {
    Analysis {
        provider: "prom".into(),
        mode,
        metrics: vec![metric("errors")],
        on_failure: None,
        on_inconclusive: Default::default(),
    }
}

fn batches(k: &mut Kit, sizes: Vec<u32>, a: Analysis) -> DeploymentId {
    k.start_with(|s| {
        s.strategy = Some(Strategy::Batch {
            sizes,
            autopause: false,
        });
        s.analysis = Some(a);
    })
}

/// Records the next due measurement of metric `name` with `m`; answers whether one was due.
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
fn a_batch_is_promoted_only_after_its_analysis_passes() {
    let mut k = Kit::new(4);
    let id = batches(&mut k, vec![2], analysis(AnalysisMode::PerBatch));
    assert_eq!(k.flags(4).0, vec![0, 1]);
    assert!(
        !measure(&mut k, id, Measured::Value(0.0)),
        "nothing measured before the batch ended"
    );
    k.installed(0);
    k.installed(1);
    assert_eq!(
        k.phases(id)[2],
        NodePhase::Pending,
        "batch 2 waits for the analysis"
    );
    let (due, _) = k.s.analysis_due(k.now);
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].phase, 1);
    assert!(due[0].query.contains("c-0|c-1"), "{}", due[0].query);
    assert!(measure(&mut k, id, Measured::Value(0.001)));
    assert_eq!(k.phases(id)[2], NodePhase::Installing, "batch 2 admitted");
    k.installed(2);
    k.installed(3);
    assert_eq!(
        k.status(id),
        Status::RollingForward,
        "the last batch waits too"
    );
    assert!(measure(&mut k, id, Measured::Value(0.002)));
    assert_eq!(k.status(id), Status::RolledForward);
    assert_eq!(k.d(id).analysis.as_ref().unwrap().passed, 2);
}

#[test]
fn a_failing_batch_rolls_back_by_default() {
    let mut k = Kit::new(4);
    let id = batches(&mut k, vec![2], analysis(AnalysisMode::PerBatch));
    k.installed(0);
    k.installed(1);
    assert!(measure(&mut k, id, Measured::Value(0.2)));
    assert_eq!(k.status(id), Status::RollingBack);
    assert!(last_status_message(&k, id).contains("analysis failed: metric errors"));
    assert_eq!(k.phases(id)[2], NodePhase::Pending);
}

#[test]
fn on_failure_fail_and_pause_are_taken() {
    for (on, want) in [
        (OnFailure::Fail, Status::Failed),
        (OnFailure::Pause, Status::RollForwardPaused),
    ] {
        let mut k = Kit::new(2);
        let mut a = analysis(AnalysisMode::PerBatch);
        a.on_failure = Some(on);
        let id = batches(&mut k, vec![1], a);
        k.installed(0);
        assert!(measure(&mut k, id, Measured::Value(1.0)));
        assert_eq!(k.status(id), want, "{on:?}");
    }
}

#[test]
fn empty_and_nan_pause_as_inconclusive_and_a_resume_measures_again() {
    for odd in [Measured::Empty, Measured::Nan, Measured::Value(f64::NAN)] {
        let mut k = Kit::new(2);
        let id = batches(&mut k, vec![1], analysis(AnalysisMode::PerBatch));
        k.installed(0);
        assert!(measure(&mut k, id, odd.clone()));
        assert_eq!(k.status(id), Status::RollForwardPaused, "{odd:?}");
        assert_eq!(k.d(id).paused_by(), Some(PausedBy::Analysis));
        assert!(last_status_message(&k, id).contains("analysis inconclusive"));
        assert!(
            !measure(&mut k, id, Measured::Value(0.0)),
            "nothing measured while paused"
        );
        k.ok(resume(id, None, Actor::System));
        let run = k.d(id).analysis.clone().unwrap();
        assert_eq!((run.verdict, run.metrics[0].taken), (Verdict::Running, 0));
        assert!(measure(&mut k, id, Measured::Value(0.0)));
        assert_eq!(k.phases(id)[1], NodePhase::Installing, "{odd:?}");
    }
}

#[test]
fn consecutive_errors_past_the_limit_pause_and_an_answer_resets_them() {
    let mut k = Kit::new(2);
    let id = batches(&mut k, vec![1], analysis(AnalysisMode::PerBatch));
    k.installed(0);
    for _ in 0..4 {
        assert!(measure(
            &mut k,
            id,
            Measured::Error("connection refused".into())
        ));
    }
    assert_eq!(
        k.status(id),
        Status::RollingForward,
        "4 errors are tolerated"
    );
    let due = k.s.analysis_due(u64::MAX).0;
    let since = k.d(id).analysis.as_ref().unwrap().measuring_since.unwrap();
    assert_eq!(
        Some(due[0].due_at),
        k.d(id).active_wall(since + 40_000),
        "measured from the phase start in active time"
    );
    assert!(measure(
        &mut k,
        id,
        Measured::Error("connection refused".into())
    ));
    assert_eq!(k.status(id), Status::RollForwardPaused);
    assert!(last_status_message(&k, id).contains("5 consecutive errors"));
    assert!(last_status_message(&k, id).contains("connection refused"));
}

#[test]
fn a_run_with_no_successful_measurement_is_never_successful() {
    let mut k = Kit::new(2);
    let mut a = analysis(AnalysisMode::PerBatch);
    a.metrics[0].count = Some(2);
    a.metrics[0].inconclusive_limit = 5;
    let id = batches(&mut k, vec![1], a);
    k.installed(0);
    assert!(measure(&mut k, id, Measured::Empty));
    assert!(measure(&mut k, id, Measured::Empty));
    assert_eq!(k.status(id), Status::RollForwardPaused);
    assert!(last_status_message(&k, id).contains("none successful"));
}

#[test]
fn a_measurement_counts_once_and_only_in_its_phase() {
    let mut k = Kit::new(4);
    let mut a = analysis(AnalysisMode::PerBatch);
    a.metrics[0].count = Some(2);
    let id = batches(&mut k, vec![2], a);
    k.installed(0);
    k.installed(1);
    let cmd = |seq, phase| Command::RecordMeasurement {
        id,
        metric: "errors".into(),
        phase,
        seq,
        measured: Measured::Value(0.0),
    };
    k.ok(cmd(0, 1));
    k.ok(cmd(0, 1));
    k.ok(cmd(1, 2));
    k.ok(Command::RecordMeasurement {
        id,
        metric: "other".into(),
        phase: 1,
        seq: 1,
        measured: Measured::Value(0.0),
    });
    let run = k.d(id).analysis.clone().unwrap();
    assert_eq!((run.metrics[0].taken, run.metrics[0].total), (1, 1));
    assert_eq!(k.phases(id)[2], NodePhase::Pending);
    k.ok(cmd(1, 1));
    assert_eq!(k.phases(id)[2], NodePhase::Installing);
}

#[test]
fn background_analysis_stops_the_deployment_at_once() {
    let mut k = Kit::new(4);
    let id = k.start_with(|s| {
        rolling(1, 1)(s);
        s.analysis = Some(analysis(AnalysisMode::Background));
    });
    let (due, _) = k.s.analysis_due(k.now);
    assert_eq!((due.len(), due[0].phase), (1, 0), "measured from the start");
    assert!(measure(&mut k, id, Measured::Value(0.0)));
    k.installed(0);
    assert_eq!(
        k.phases(id)[1],
        NodePhase::Installing,
        "background never gates"
    );
    let (_, next) = k.s.analysis_due(k.now);
    assert_eq!(
        next,
        Some(100 + 10_000),
        "the next one an interval after the first"
    );
    assert!(measure(&mut k, id, Measured::Value(0.5)));
    assert_eq!(k.status(id), Status::RollingBack);
}

#[test]
fn rolling_waves_of_install_window_nodes_wait_for_their_analysis() {
    let mut k = Kit::new(4);
    let id = k.start_with(|s| {
        rolling(2, 2)(s);
        s.analysis = Some(analysis(AnalysisMode::PerBatch));
    });
    k.installed(0);
    assert_ne!(
        k.phases(id)[2],
        NodePhase::Installing,
        "the wave is not over"
    );
    assert!(!measure(&mut k, id, Measured::Value(0.0)));
    k.installed(1);
    assert_ne!(
        k.phases(id)[2],
        NodePhase::Installing,
        "waits for the analysis"
    );
    assert!(measure(&mut k, id, Measured::Value(0.0)));
    assert_eq!(k.phases(id)[2], NodePhase::Installing);
}

#[test]
fn dry_run_metrics_are_measured_but_never_judged() {
    let mut k = Kit::new(2);
    let mut a = analysis(AnalysisMode::PerBatch);
    a.metrics[0].dry_run = true;
    let mut good = metric("latency");
    good.success = Some("result <= 0.3".into());
    a.metrics.push(good);
    let id = batches(&mut k, vec![1], a);
    k.installed(0);
    // The dry-run metric fails, the judged one passes.
    assert!(measure(&mut k, id, Measured::Value(1.0)));
    assert!(measure(&mut k, id, Measured::Value(0.1)));
    assert_eq!(k.phases(id)[1], NodePhase::Installing);
}

#[test]
fn a_restored_state_keeps_the_counts() {
    let mut k = Kit::new(2);
    let mut a = analysis(AnalysisMode::PerBatch);
    a.metrics[0].count = Some(3);
    let id = batches(&mut k, vec![1], a);
    k.installed(0);
    assert!(measure(&mut k, id, Measured::Value(0.0)));
    assert!(measure(&mut k, id, Measured::Error("timeout".into())));
    let restored = ClusterState::from_snapshot_bytes(&k.s.snapshot_bytes()).unwrap();
    assert_eq!(restored.analysis_due(u64::MAX), k.s.analysis_due(u64::MAX));
    let run = restored.deployment_map()[&id].analysis.clone().unwrap();
    assert_eq!((run.metrics[0].attempts, run.metrics[0].errors), (2, 1));
}

#[test]
fn a_start_without_analysis_takes_the_subscription_s() {
    let mut k = Kit::new(2);
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Weak,
        pin: Some(1),
        policy: Policy {
            analysis: Some(analysis(AnalysisMode::PerBatch)),
            ..Policy::default()
        },
    });
    let id = k.start_with(|s| {
        s.strategy = Some(Strategy::Batch {
            sizes: vec![1],
            autopause: false,
        });
    });
    assert_eq!(
        k.d(id).settings.analysis,
        Some(analysis(AnalysisMode::PerBatch))
    );
    k.installed(0);
    assert_eq!(k.phases(id)[1], NodePhase::Pending, "gated by the analysis");
}

#[test]
fn an_analysis_out_of_bounds_is_refused_before_the_log() {
    let k = Kit::new(1);
    let mut a = analysis(AnalysisMode::Background);
    a.metrics[0].query = "x".repeat(1 << 20);
    let cmd = Command::StartDeployment(DeploymentSpec {
        consumer: "c".into(),
        resource: "r".into(),
        analysis: Some(a),
        ..DeploymentSpec::default()
    });
    let e = precheck(&k.s, &cmd).unwrap_err().to_string();
    assert!(e.contains("analysis.metrics[0].query"), "{e}");
    assert!(
        e.len() < 400,
        "the huge value is not echoed: {} bytes",
        e.len()
    );
    let cmd = Command::RecordMeasurement {
        id: DeploymentId(1),
        metric: "x".repeat(500),
        phase: 0,
        seq: 0,
        measured: Measured::Empty,
    };
    assert!(precheck(&k.s, &cmd).is_err());
}

#[test]
fn measurements_stay_an_interval_apart_in_active_time_across_a_pause() {
    let mut k = Kit::new(2);
    let id = batches(&mut k, vec![1], analysis(AnalysisMode::Background));
    let due_at = |k: &Kit| k.s.analysis_due(0).1;
    assert_eq!(due_at(&k), Some(100), "the first at once");
    k.now = 100;
    assert!(measure(&mut k, id, Measured::Value(0.0)));
    assert_eq!(due_at(&k), Some(10_100));
    k.now = 4_100;
    k.op_status(pause, id);
    assert_eq!(due_at(&k), None, "nothing is due while it waits");
    k.now = 44_100; // 40 s paused: three intervals' worth of wall time
    k.op_status(resume, id);
    assert_eq!(
        due_at(&k),
        Some(44_100 + 6_000),
        "the 6 s the interval had left, not three catch-up measurements at once"
    );
}
