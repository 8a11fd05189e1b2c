use super::*;
use crate::analysis::spec::OnInconclusive;

fn spec(success: Option<&str>, failure: Option<&str>) -> Analysis {
    Analysis {
        provider: "p".into(),
        mode: AnalysisMode::PerBatch,
        metrics: vec![MetricSpec {
            name: "m".into(),
            query: "q".into(),
            success: success.map(String::from),
            failure: failure.map(String::from),
            interval_ms: 1_000,
            count: Some(3),
            initial_delay_ms: 500,
            failure_limit: 1,
            inconclusive_limit: 0,
            consecutive_error_limit: 2,
            on_empty: OnOdd::Inconclusive,
            on_nan: OnOdd::Failure,
            dry_run: false,
        }],
        on_failure: None,
        on_inconclusive: OnInconclusive::Pause,
    }
}

#[test]
fn judging_follows_the_conditions() {
    let both = spec(Some("result < 1"), Some("result > 5"));
    let m = &both.metrics[0];
    assert_eq!(judge(m, &Measured::Value(0.5)), Judged::Success);
    assert_eq!(judge(m, &Measured::Value(6.0)), Judged::Failure);
    assert_eq!(judge(m, &Measured::Value(3.0)), Judged::Inconclusive);
    assert_eq!(judge(m, &Measured::Empty), Judged::Inconclusive);
    assert_eq!(judge(m, &Measured::Nan), Judged::Failure);
    assert_eq!(judge(m, &Measured::Error("x".into())), Judged::Error);
    let only_success = spec(Some("result < 1"), None);
    assert_eq!(
        judge(&only_success.metrics[0], &Measured::Value(3.0)),
        Judged::Failure
    );
    let only_failure = spec(None, Some("result > 5"));
    assert_eq!(
        judge(&only_failure.metrics[0], &Measured::Value(3.0)),
        Judged::Success
    );
}

#[test]
fn due_times_derive_from_the_phase_start_and_the_attempts() {
    let s = spec(Some("result < 1"), None);
    let mut run = AnalysisRun::new(&s, 0);
    assert_eq!(run.due(&s, 0), None, "per_batch waits for its phase");
    run.start_phase(1, 10_000);
    assert_eq!(run.due(&s, 0), Some((0, 10_500)));
    run.record(&s, "m", 1, 0, Measured::Error("boom".into()), 10_500);
    assert_eq!(
        run.due(&s, 0),
        Some((1, 11_500)),
        "an error waits an interval too"
    );
    run.record(&s, "m", 1, 1, Measured::Value(0.1), 11_500);
    run.record(&s, "m", 1, 2, Measured::Value(0.1), 12_500);
    assert_eq!(run.verdict, Verdict::Running);
    assert_eq!(
        run.record(&s, "m", 1, 3, Measured::Value(0.1), 13_500),
        Some(Verdict::Successful)
    );
    assert_eq!(run.due(&s, 0), None);
}

#[test]
fn limits_are_exceeded_not_reached() {
    let s = spec(Some("result < 1"), None);
    let mut run = AnalysisRun::new(&s, 0);
    run.start_phase(1, 0);
    assert_eq!(
        run.record(&s, "m", 1, 0, Measured::Value(9.0), 1),
        Some(Verdict::Running)
    );
    assert_eq!(
        run.record(&s, "m", 1, 1, Measured::Value(9.0), 2),
        Some(Verdict::Failed)
    );
    assert!(run
        .reason
        .as_deref()
        .unwrap()
        .contains("2 failed measurements, 1 tolerated"));
    assert_eq!(
        run.record(&s, "m", 1, 2, Measured::Value(0.0), 3),
        None,
        "a verdict is final"
    );
}

#[test]
fn only_the_last_ten_measurements_are_kept() {
    let mut s = spec(Some("result < 1"), None);
    s.metrics[0].count = Some(100);
    let mut run = AnalysisRun::new(&s, 0);
    run.start_phase(1, 0);
    for i in 0..25 {
        run.record(
            &s,
            "m",
            1,
            i,
            Measured::Value(f64::from(i) / 100.0),
            u64::from(i),
        );
    }
    let m = &run.metrics[0];
    assert_eq!((m.total, m.last.len(), m.last[0].at), (25, KEPT, 15));
    run.start_phase(2, 100);
    assert_eq!(
        (
            run.metrics[0].taken,
            run.metrics[0].total,
            run.metrics[0].last.len()
        ),
        (0, 25, KEPT)
    );
}

#[test]
fn error_texts_are_clipped() {
    let m = Measured::Error("x".repeat(5_000)).normalized();
    assert_eq!(m, Measured::Error("x".repeat(MAX_ERROR)));
    assert_eq!(Measured::Value(f64::NAN).normalized(), Measured::Nan);
}

fn with_dry_run(s: &mut Analysis) {
    let mut dry = s.metrics[0].clone();
    dry.name = "dry".into();
    dry.dry_run = true;
    s.metrics.push(dry);
}

#[test]
fn a_dry_run_metric_whose_queries_all_error_holds_nothing() {
    let mut s = spec(Some("result < 1"), None);
    with_dry_run(&mut s);
    let mut run = AnalysisRun::new(&s, 0);
    run.start_phase(1, 0);
    for seq in 0..3 {
        run.record(&s, "dry", 1, seq, Measured::Error("boom".into()), 1);
    }
    for seq in 0..2 {
        run.record(&s, "m", 1, seq, Measured::Value(0.1), 1);
    }
    assert_eq!(
        run.record(&s, "m", 1, 2, Measured::Value(0.1), 1),
        Some(Verdict::Successful),
        "the judged metric took its count: the dry-run one decides nothing"
    );
}

#[test]
fn a_phase_of_only_dry_run_metrics_ends_at_their_error_limit() {
    let mut s = spec(Some("result < 1"), None);
    s.metrics[0].dry_run = true;
    let mut run = AnalysisRun::new(&s, 0);
    run.start_phase(1, 0);
    let verdicts: Vec<_> = (0..3)
        .map(|seq| run.record(&s, "m", 1, seq, Measured::Error("boom".into()), 1))
        .collect();
    assert_eq!(
        verdicts,
        vec![
            Some(Verdict::Running),
            Some(Verdict::Running),
            Some(Verdict::Successful)
        ],
        "past its 2 tolerated errors a dry-run metric is done, never a verdict against the phase"
    );
}

#[test]
fn an_erroring_query_is_retried_after_at_most_ten_seconds() {
    let mut s = spec(Some("result < 1"), None);
    s.metrics[0].interval_ms = 60_000;
    s.metrics[0].consecutive_error_limit = 10;
    let mut run = AnalysisRun::new(&s, 0);
    run.start_phase(1, 0);
    assert_eq!(run.due(&s, 0), Some((0, 500)));
    run.record(&s, "m", 1, 0, Measured::Error("boom".into()), 500);
    assert_eq!(run.due(&s, 0), Some((1, 10_500)), "retried 10 s later");
    run.record(&s, "m", 1, 1, Measured::Error("boom".into()), 10_500);
    assert_eq!(run.due(&s, 0), Some((2, 20_500)));
    run.record(&s, "m", 1, 2, Measured::Value(0.1), 20_500);
    assert_eq!(
        run.due(&s, 0),
        Some((3, 80_500)),
        "a value waits the whole interval"
    );
}
