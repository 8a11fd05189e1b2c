//! Tests of the fleet views: versions and phases per node, pages, a consumer's nodes in ordinal order.

use crate::testing::*;

#[test]
fn a_node_line_has_its_version_and_its_phase_in_the_active_deployment() {
    let mut k = Kit::new(3);
    let line = k.s.node_line("c-0").unwrap();
    assert_eq!(line.versions["r"], Some(1));
    assert!(line.active && line.phases.is_empty());
    assert_eq!(line.consumers, vec!["c".to_string()]);
    let id = k.start_with(|_| {});
    let phases = k.phases(id);
    for (i, phase) in phases.iter().enumerate() {
        let line = k.s.node_line(&format!("c-{i}")).unwrap();
        assert_eq!(line.phases.get(&id), Some(phase));
    }
    assert_eq!(k.s.node_line("nope"), None);
}

#[test]
fn pages_cover_the_nodes_once_in_order() {
    let k = Kit::new(5);
    let first = k.s.node_page(None, 0, 2);
    let rest = k.s.node_page(None, 2, 10);
    assert_eq!((first.total, rest.total), (5, 5));
    let ids: Vec<String> = first
        .nodes
        .iter()
        .chain(&rest.nodes)
        .map(|n| n.id.clone())
        .collect();
    assert_eq!(ids, vec!["c-0", "c-1", "c-2", "c-3", "c-4"]);
    assert_eq!(k.s.node_page(Some("c"), 4, 10).nodes[0].id, "c-4");
    assert_eq!(k.s.node_page(Some("nobody"), 0, 10).total, 0);
}
