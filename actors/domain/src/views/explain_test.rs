use crate::testing::*;
use crate::*;

#[test]
fn a_node_history_lists_its_decisions_with_reasons() {
    let mut k = Kit::new(3);
    let id = k.start_with(|s| {
        s.strategy = Some(Strategy::Rolling {
            install_window: 1,
            download_window: 1,
        });
        s.max_failures_per_node = Some(1);
    });
    k.now = 200;
    k.failed(0);
    k.now = 300;
    k.op(pause, id).unwrap();
    let h = k.s.node_history(id, "c-0").unwrap();
    let why: Vec<&str> = h.decisions.iter().map(|d| d.why.as_str()).collect();
    assert!(
        why[0].starts_with("the deployment moves (by user"),
        "{why:#?}"
    );
    assert_eq!(
        why[1],
        "admitted to the install window: may install the version"
    );
    assert!(
        why.iter()
            .any(|w| w.starts_with("failed attempt 1, retries left") && w.contains("exit 3")),
        "{why:#?}"
    );
    assert_eq!(why.last().unwrap(), &"held: paused (by user)");
    assert_eq!(h.failures, 1);
    assert!(
        h.now
            .ends_with("(held: paused by user, until a person resumes it)"),
        "{}",
        h.now
    );
    let other = k.s.node_history(id, "c-2").unwrap();
    assert!(
        other.now.starts_with("downloading") || other.now.starts_with("pending"),
        "{}",
        other.now
    );
    assert!(
        other
            .decisions
            .iter()
            .all(|d| d.event.node.as_deref() != Some("c-0")),
        "another node's events are not its own"
    );
    assert_eq!(k.s.node_history(id, "nope"), None);
    assert_eq!(k.s.node_history(DeploymentId(9), "c-0"), None);
}
