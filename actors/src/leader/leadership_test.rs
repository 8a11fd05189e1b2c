//! Tests of the leader-side role: only a real change is reported.

use super::{Change, Role};

#[test]
fn a_server_starts_as_a_follower() {
    assert!(!Role::default().is_leader());
}

#[test]
fn only_a_real_change_is_reported() {
    let mut role = Role::default();
    assert_eq!(role.change(false), None, "a follower told it follows");
    assert_eq!(role.change(true), Some(Change::Became));
    assert!(role.is_leader());
    assert_eq!(role.change(true), None, "a repeated notice");
    assert_eq!(role.change(false), Some(Change::SteppedDown));
    assert!(!role.is_leader());
}
