use super::*;

#[test]
fn each_measurement_counts_under_its_result_only() {
    let get = |r: &str| counter().with_label_values(&[r]).get();
    let before: Vec<u64> = ["value", "empty", "nan", "error"].map(get).to_vec();
    measured(&Measured::Error("timed out".into()));
    measured(&Measured::Value(0.5));
    measured(&Measured::Error("HTTP 502".into()));
    let after: Vec<u64> = ["value", "empty", "nan", "error"].map(get).to_vec();
    assert_eq!(after[0] - before[0], 1);
    assert_eq!(after[3] - before[3], 2);
    assert_eq!((after[1], after[2]), (before[1], before[2]));
    let registry = Registry::new();
    register(&registry);
    let families = registry.gather();
    assert_eq!(families.len(), 1);
    assert_eq!(
        families[0].get_metric().len(),
        4,
        "four series, whatever the deployments"
    );
}
