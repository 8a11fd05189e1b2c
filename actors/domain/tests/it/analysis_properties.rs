//! Property tests of metric analysis: the condition parser never panics on any text, parses what it prints
//! back the same, and a run's counters never exceed what was recorded whatever the measurements.

use convoy_domain::analysis::condition::Condition;
use convoy_domain::analysis::run::{AnalysisRun, Measured, Verdict};
use convoy_domain::analysis::spec::{Analysis, AnalysisMode, MetricSpec, OnInconclusive, OnOdd};
use proptest::prelude::*;

proptest! {
    #[test]
    fn the_condition_parser_never_panics(text in ".{0,300}") {
        let _ = Condition::parse(&text);
    }

    #[test]
    fn the_condition_parser_never_panics_on_its_own_alphabet(
        text in "[ result<>=!&|()0-9.eE+-]{0,300}",
        x in any::<f64>(),
    ) {
        if let Ok(c) = Condition::parse(&text) {
            let _ = c.holds(x);
        }
    }

    #[test]
    fn counts_add_up_and_a_verdict_is_final(
        values in proptest::collection::vec(
            prop_oneof![
                any::<f64>().prop_map(Measured::Value),
                Just(Measured::Empty),
                Just(Measured::Nan),
                ".{0,20}".prop_map(Measured::Error),
            ],
            0..40,
        ),
        count in 1u32..10,
    ) {
        let spec = Analysis {
            provider: "p".into(),
            mode: AnalysisMode::PerBatch,
            metrics: vec![MetricSpec {
                name: "m".into(),
                query: "q".into(),
                success: Some("result < 1".into()),
                failure: Some("result > 5".into()),
                interval_ms: 1_000,
                count: Some(count),
                initial_delay_ms: 0,
                failure_limit: 1,
                inconclusive_limit: 2,
                consecutive_error_limit: 3,
                on_empty: OnOdd::Inconclusive,
                on_nan: OnOdd::Inconclusive,
                dry_run: false,
            }],
            on_failure: None,
            on_inconclusive: OnInconclusive::Pause,
        };
        let mut run = AnalysisRun::new(&spec, 0);
        run.start_phase(1, 0);
        let mut recorded = 0;
        for (i, v) in values.into_iter().enumerate() {
            let before = run.verdict;
            let seq = run.metrics[0].attempts;
            let out = run.record(&spec, "m", 1, seq, v, i as u64);
            if before != Verdict::Running {
                prop_assert_eq!(out, None);
            } else {
                prop_assert!(out.is_some());
                recorded += 1;
            }
        }
        let m = &run.metrics[0];
        prop_assert_eq!(m.total, recorded);
        prop_assert_eq!(m.successes + m.failures + m.inconclusive, m.taken);
        prop_assert_eq!(m.taken + m.errors, m.attempts);
        prop_assert!(m.last.len() <= 10);
        if run.verdict == Verdict::Successful {
            prop_assert!(m.successes > 0);
        }
    }
}
