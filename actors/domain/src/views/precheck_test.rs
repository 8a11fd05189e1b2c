use super::*;
use crate::command::Command;
use crate::ErrorKind;

fn consumer_of(n: usize) -> ClusterState {
    let mut state = ClusterState::default();
    let nodes = (0..n).map(|i| format!("n{i}")).collect();
    state
        .apply(
            Command::CreateConsumer {
                name: "web".into(),
                nodes,
            },
            1,
        )
        .expect("consumer created");
    state
}

#[test]
fn a_huge_name_is_refused_and_not_echoed() {
    let name = "a".repeat(4 * 1024 * 1024);
    let e = precheck(&ClusterState::default(), &Command::CreateResource { name }).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert!(e.to_string().len() < 400, "{} bytes", e.to_string().len());
    assert!(e.to_string().contains("4194304 bytes"));
}

#[test]
fn names_with_paths_controls_or_bidi_are_refused() {
    for bad in [
        "",
        ".",
        "..",
        "a/b",
        "../etc",
        "x y",
        "a\u{202e}b",
        "tab\t",
        "é",
    ] {
        let cmd = Command::CreateResource { name: bad.into() };
        assert!(precheck(&ClusterState::default(), &cmd).is_err(), "{bad:?}");
    }
    for good in ["web", "web-0", "app_v2.tar", "a.b-c_d"] {
        let cmd = Command::CreateResource { name: good.into() };
        assert!(precheck(&ClusterState::default(), &cmd).is_ok(), "{good:?}");
    }
}

#[test]
fn a_range_bomb_on_a_deployment_is_refused_before_the_log() {
    let state = consumer_of(100);
    let spec = DeploymentSpec {
        consumer: "web".into(),
        resource: "app".into(),
        nodes: Some(vec!["0-99"; 1_000].join(",")),
        ..DeploymentSpec::default()
    };
    let e = precheck(&state, &Command::StartDeployment(spec)).unwrap_err();
    assert!(e.to_string().contains("more ranges"), "{e}");
}

#[test]
fn oversized_lists_and_messages_are_refused() {
    let nodes: Vec<String> = (0..MAX_NODES_PER_COMMAND + 1)
        .map(|i| format!("n{i}"))
        .collect();
    let cmd = Command::CreateConsumer {
        name: "big".into(),
        nodes,
    };
    assert!(precheck(&ClusterState::default(), &cmd)
        .unwrap_err()
        .to_string()
        .contains("at most 100000"));
    let cmd = Command::Pause {
        id: "d-1".parse().expect("id"),
        message: Some("m".repeat(2_000)),
        by: Default::default(),
    };
    assert!(precheck(&ClusterState::default(), &cmd).is_err());
}

#[test]
fn what_precheck_passes_apply_accepts() {
    let mut state = consumer_of(3);
    let cmd = Command::CreateResource { name: "app".into() };
    precheck(&state, &cmd).unwrap();
    state.apply(cmd, 2).unwrap();
}
