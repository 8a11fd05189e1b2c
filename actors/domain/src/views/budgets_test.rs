use crate::testing::*;
use crate::*;

#[test]
fn a_budget_view_counts_the_consumers_active_nodes_and_lists_the_unavailable_ones() {
    let mut k = Kit::new(10);
    assert_eq!(k.s.budget("c"), None);
    k.ok(Command::SetBudget {
        consumer: "c".into(),
        budget: Budget {
            max_unavailable: None,
            min_available: Some(FailedNodes::Percent(75)),
        },
    });
    k.ok(Command::MarkInactive {
        nodes: vec!["c-9".into()],
    });
    let b = k.s.budget("c").unwrap();
    // 9 active nodes, at least 75% of them (7) available: 2 disruptions, one taken by the silent node.
    assert_eq!(
        (b.active, b.allowed, b.unavailable, b.disruptions_allowed),
        (9, 2, 1, 1)
    );
    assert_eq!(b.nodes.len(), 1);
    assert_eq!(b.nodes[0].node, "c-9");
    assert_eq!(b.nodes[0].deployment, None);
    let json = serde_json::to_value(&b).unwrap();
    assert_eq!(json["min_available"], "75%");
    assert!(json.get("max_unavailable").is_none());
}
