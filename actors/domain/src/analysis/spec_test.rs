use super::*;

fn metric() -> MetricSpec {
    serde_json::from_str(
        r#"{"name": "errors", "query": "sum(rate(e[1m]))", "success": "result < 0.01"}"#,
    )
    .unwrap()
}

fn analysis() -> Analysis {
    Analysis {
        provider: "prom".into(),
        mode: AnalysisMode::PerBatch,
        metrics: vec![metric()],
        on_failure: None,
        on_inconclusive: OnInconclusive::Pause,
    }
}

#[test]
fn defaults_are_those_of_the_issue() {
    let m = metric();
    assert_eq!(m.interval_ms, 60_000);
    assert_eq!(m.consecutive_error_limit, 4);
    assert_eq!((m.failure_limit, m.inconclusive_limit), (0, 0));
    assert_eq!(
        (m.on_empty, m.on_nan),
        (OnOdd::Inconclusive, OnOdd::Inconclusive)
    );
    assert_eq!(m.count_in(AnalysisMode::PerBatch), Some(1));
    assert_eq!(m.count_in(AnalysisMode::Background), None);
    let a: Analysis =
        serde_json::from_str(r#"{"provider": "prom", "metrics": [{"name": "x", "query": "up"}]}"#)
            .unwrap();
    assert_eq!(a.mode, AnalysisMode::PerBatch);
    assert!(a.validate().is_ok());
    assert!(serde_json::from_str::<Analysis>(
        r#"{"provider": "p", "metrics": [], "url": "http://x"}"#
    )
    .is_err());
}

/// A change made to a valid analysis.
type Edit = Box<dyn Fn(&mut Analysis)>;

#[test]
fn refusals_name_the_field_and_the_value() {
    let cases: Vec<(Edit, &str, &str)> = vec![
        (
            Box::new(|a: &mut Analysis| a.provider = "http://evil".into()),
            "analysis.provider",
            "\"http://evil\"",
        ),
        (
            Box::new(|a: &mut Analysis| a.metrics.clear()),
            "analysis.metrics",
            "0",
        ),
        (
            Box::new(|a: &mut Analysis| a.metrics = vec![metric(); 9]),
            "analysis.metrics",
            "9",
        ),
        (
            Box::new(|a: &mut Analysis| a.metrics.push(metric())),
            "analysis.metrics[1].name",
            "\"errors\"",
        ),
        (
            Box::new(|a: &mut Analysis| a.metrics[0].name = "a b".into()),
            "analysis.metrics[0].name",
            "\"a b\"",
        ),
        (
            Box::new(|a: &mut Analysis| a.metrics[0].query = "x".repeat(3000)),
            "analysis.metrics[0].query",
            "",
        ),
        (
            Box::new(|a: &mut Analysis| a.metrics[0].success = Some("result <".into())),
            "analysis.metrics[0].success",
            "\"result <\"",
        ),
        (
            Box::new(|a: &mut Analysis| a.metrics[0].failure = Some("1".into())),
            "analysis.metrics[0].failure",
            "\"1\"",
        ),
        (
            Box::new(|a: &mut Analysis| a.metrics[0].interval_ms = 10),
            "analysis.metrics[0].interval_ms",
            "10",
        ),
        (
            Box::new(|a: &mut Analysis| a.metrics[0].initial_delay_ms = u64::MAX),
            "analysis.metrics[0].initial_delay_ms",
            "",
        ),
        (
            Box::new(|a: &mut Analysis| a.metrics[0].count = Some(0)),
            "analysis.metrics[0].count",
            "0",
        ),
        (
            Box::new(|a: &mut Analysis| a.metrics[0].failure_limit = 5000),
            "analysis.metrics[0].failure_limit",
            "5000",
        ),
    ];
    for (change, field, value) in cases {
        let mut a = analysis();
        change(&mut a);
        let e = a.validate().unwrap_err();
        assert_eq!(e.field, field, "{e}");
        assert!(e.value.starts_with(value), "{e}");
        assert!(e.value.len() < 130, "a huge value is clipped: {e}");
    }
}
