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
