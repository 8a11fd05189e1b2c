use convoy_actors::domain::{ClusterState, Command};
use convoy_raft::StateMachine;

use super::*;

fn snapshot_with(resource: &str) -> Vec<u8> {
    let mut state = ClusterState::default();
    state
        .apply_with_outcome(
            Command::CreateResource {
                name: resource.to_string(),
            },
            1_000,
        )
        .expect("created");
    let mut bytes = Vec::new();
    Machine::from_state(state).snapshot_to(&mut bytes).unwrap();
    bytes
}

#[test]
fn the_same_bytes_are_decoded_once_and_give_the_same_state() {
    forget();
    let a = snapshot_with("web");
    let first = machine(&a).unwrap();
    let again = machine(&a.clone()).unwrap();
    assert_eq!(decodes(), 1);
    assert_eq!(first.state(), again.state());
    assert!(again.state().resource("web").is_some());
}

#[test]
fn other_bytes_are_decoded_and_garbage_is_an_error() {
    forget();
    let web = machine(&snapshot_with("web")).unwrap();
    let db = machine(&snapshot_with("db")).unwrap();
    assert_eq!(decodes(), 2);
    assert!(web.state().resource("db").is_none());
    assert!(db.state().resource("db").is_some());
    assert!(machine(&[0xff; 3]).is_err());
    forget();
    assert_eq!(decodes(), 0);
}
