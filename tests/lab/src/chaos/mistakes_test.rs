use super::*;

#[test]
fn a_config_key_is_replaced_and_the_others_kept() {
    let text = "id = 2\ndata_dir = \"data/2\"\ninitial_cluster_state = \"new\"\n";
    let edited = set_key(text, "initial_cluster_state", "\"existing\"");
    assert_eq!(
        edited,
        "id = 2\ndata_dir = \"data/2\"\ninitial_cluster_state = \"existing\"\n"
    );
    assert_eq!(set_key(text, "id", "102").lines().next(), Some("id = 102"));
    // `id` does not match `idle`-like keys or values that mention it.
    let other = set_key("idle = 1\nid = 2\n", "id", "9");
    assert_eq!(other, "idle = 1\nid = 9\n");
}

#[test]
fn only_fault_lines_that_record_a_violation_count() {
    use super::super::history::FaultRecord;
    let record = |what: &str| FaultRecord {
        at_ms: 0,
        healed_ms: 1,
        what: what.into(),
        leader_kill: false,
    };
    let faults = [
        record(
            "WipeAndRestart 2: refused to start (exit status: 1); rejoined through replace-member",
        ),
        record("WipeAndRestart 3: VIOLATION: bootstrapped on an emptied data dir"),
    ];
    let found = from_faults(&faults);
    assert_eq!(found.len(), 1);
    assert!(found[0].detail.contains("bootstrapped"));
}

#[test]
fn the_mistakes_are_not_in_the_default_schedule() {
    for kind in FaultKind::MISTAKES {
        assert!(!FaultKind::ALL.contains(&kind), "{kind:?}");
    }
}
