use crate::analysis::run::Measured;
use crate::analysis::spec::Analysis;
use crate::testing::*;
use crate::*;

#[test]
fn due_measurements_carry_the_rendered_query_and_the_next_wake_up() {
    let mut k = Kit::new(3);
    let a: Analysis = serde_json::from_str(
        r#"{"provider": "prom", "mode": "background", "metrics": [
            {"name": "e", "query": "e{c=\"{{consumer}}\",d=\"{{deployment}}\",v=\"{{version}}\",n=~\"{{nodes}}\"}",
             "interval_ms": 5000, "initial_delay_ms": 1000}]}"#,
    )
    .unwrap();
    let id = k.start_with(|s| {
        rolling(1, 1)(s);
        s.analysis = Some(a);
    });
    let (due, next) = k.s.analysis_due(k.now);
    assert!(due.is_empty());
    assert_eq!(next, Some(k.now + 1000));
    let (due, _) = k.s.analysis_due(k.now + 1000);
    assert_eq!(due.len(), 1);
    assert_eq!(
        due[0].query,
        format!("e{{c=\"c\",d=\"{id}\",v=\"2\",n=~\"c-0\"}}")
    );
    assert_eq!((due[0].provider.as_str(), due[0].seq), ("prom", 0));
    k.ok(Command::RecordMeasurement {
        id,
        metric: "e".into(),
        phase: 0,
        seq: 0,
        measured: Measured::Value(1.0),
    });
    assert_eq!(k.s.analysis_due(u64::MAX).0[0].due_at, k.now + 6000);
    k.ok(pause(id, None, Actor::System));
    assert!(
        k.s.analysis_due(u64::MAX).0.is_empty(),
        "nothing measured while paused"
    );
}
