use super::*;
use convoy_actors::domain::budgets::UnavailableNode;
use convoy_actors::domain::{DeploymentId, FailedNodes};

#[test]
fn a_budget_prints_its_limit_its_use_and_who_holds_each_node() {
    let view = BudgetView {
        consumer: "web".into(),
        max_unavailable: Some(FailedNodes::Percent(10)),
        min_available: None,
        active: 20,
        allowed: 2,
        unavailable: 2,
        disruptions_allowed: 0,
        nodes: vec![
            UnavailableNode {
                node: "web-1".into(),
                deployment: Some(DeploymentId(4)),
            },
            UnavailableNode {
                node: "web-7".into(),
                deployment: None,
            },
        ],
        holders: vec![DeploymentId(4)],
    };
    let text = render(&view);
    assert!(
        text.contains("budget of web: max_unavailable 10% (2 of 20 active nodes"),
        "{text}"
    );
    assert!(
        text.contains("unavailable: 2, disruptions allowed: 0"),
        "{text}"
    );
    assert!(text.contains("web-1  held by d-4"), "{text}");
    assert!(text.contains("web-7  inactive"), "{text}");
}
