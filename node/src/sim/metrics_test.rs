use super::*;

#[test]
fn nodes_on_the_bad_version_report_the_bad_ratio() {
    let mut currents = BTreeMap::new();
    currents.insert("web-0".to_string(), [("app".to_string(), 2)].into());
    currents.insert("web-1".to_string(), [("app".to_string(), 1)].into());
    let model = ErrorModel {
        base: 0.001,
        bad: Some(("app".into(), 2)),
        bad_ratio: 0.25,
    };
    let text = render(&currents, &model);
    assert!(
        text.contains(
            "convoy_sim_error_ratio{node=\"web-0\",resource=\"app\",version=\"2\"} 0.25\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "convoy_sim_error_ratio{node=\"web-1\",resource=\"app\",version=\"1\"} 0.001\n"
        ),
        "{text}"
    );
}
