use super::*;
use convoy_actors::domain::analysis::run::{Judged, Measurement, MetricRun, Verdict};

#[test]
fn the_verdict_the_counts_and_the_newest_measurements_are_shown() {
    let run = AnalysisRun {
        phase: 2,
        measuring_since: Some(1),
        passed: 1,
        verdict: Verdict::Inconclusive,
        reason: Some("metric errors: 5 consecutive errors, 4 tolerated".into()),
        metrics: vec![MetricRun {
            name: "errors".into(),
            successes: 3,
            errors: 5,
            last: vec![
                Measurement {
                    at: 1,
                    phase: 2,
                    measured: Measured::Value(0.004),
                    judged: Judged::Success,
                },
                Measurement {
                    at: 2,
                    phase: 2,
                    measured: Measured::Error("cannot connect to Prometheus".into()),
                    judged: Judged::Error,
                },
            ],
            ..MetricRun::default()
        }],
    };
    let text = analysis(&run);
    assert!(
        text.starts_with("analysis: phase 2, inconclusive (metric errors: 5 consecutive errors, 4 tolerated), 1 phase(s) passed\n"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("errors"))
        .expect("the metric's line");
    assert!(
        line.contains("error: cannot connect to Prometheus; 0.004 success"),
        "{line}"
    );
}
