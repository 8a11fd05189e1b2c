//! Readiness judged from a replica's view: each reason with its code, and which comes first.

use super::*;

const PATIENCE: Duration = Duration::from_millis(1_000);

fn ready() -> ReplicaView {
    ReplicaView {
        fatal: None,
        refused: None,
        refusing: None,
        member: true,
        leader: Some(1),
        committed: 5_000,
        applied: 5_000,
        contact: Contact::Leading {
            silent: Duration::from_millis(40),
        },
        patience: PATIENCE,
        bootstrapping: false,
    }
}

/// A leader no quorum acknowledged for `ms`.
fn leading(ms: u64) -> Contact {
    Contact::Leading {
        silent: Duration::from_millis(ms),
    }
}

/// A follower of server 2 that has not heard from it for `ms`.
fn following(ms: u64) -> Contact {
    Contact::Following {
        leader: 2,
        silent: Duration::from_millis(ms),
    }
}

#[test]
fn a_member_with_a_leader_that_keeps_up_is_ready() {
    assert_eq!(ready().judge(), Ok(()));
    let slightly_behind = ReplicaView {
        applied: 5_000 - MAX_READY_LAG,
        ..ready()
    };
    assert_eq!(slightly_behind.judge(), Ok(()));
    // Word of a quorum as old as the patience is still in time.
    for contact in [leading(1_000), following(1_000), Contact::Unjudged] {
        let view = ReplicaView { contact, ..ready() };
        assert_eq!(view.judge(), Ok(()), "{contact:?}");
    }
}

#[test]
fn each_reason_is_named_with_its_code() {
    let cases = [
        (
            ReplicaView {
                fatal: Some("disk full".into()),
                ..ready()
            },
            "fatal",
        ),
        (
            ReplicaView {
                refused: Some("server 1 refuses server 3".into()),
                ..ready()
            },
            "refused_by_peers",
        ),
        (
            ReplicaView {
                refusing: Some("server 0 (cluster a) refuses server 1 (cluster b)".into()),
                ..ready()
            },
            "another_cluster",
        ),
        (
            ReplicaView {
                member: false,
                ..ready()
            },
            "not_a_member",
        ),
        (
            ReplicaView {
                leader: None,
                ..ready()
            },
            "no_leader",
        ),
        (
            ReplicaView {
                applied: 5_000 - MAX_READY_LAG - 1,
                ..ready()
            },
            "catching_up",
        ),
        (
            ReplicaView {
                contact: leading(1_001),
                ..ready()
            },
            "no_quorum",
        ),
        (
            ReplicaView {
                contact: following(1_001),
                ..ready()
            },
            "leader_unreachable",
        ),
        (
            ReplicaView {
                bootstrapping: true,
                ..ready()
            },
            "bootstrapping",
        ),
    ];
    for (view, code) in cases {
        assert_eq!(view.judge().unwrap_err().code(), code, "{view:?}");
    }
}

#[test]
fn a_fatal_error_wins_over_every_other_reason() {
    let view = ReplicaView {
        fatal: Some("disk full".into()),
        refused: Some("server 1 refuses server 3".into()),
        refusing: None,
        member: false,
        leader: None,
        committed: 10,
        applied: 0,
        contact: leading(60_000),
        patience: PATIENCE,
        bootstrapping: true,
    };
    assert_eq!(view.judge(), Err(NotReady::Fatal("disk full".into())));
}

#[test]
fn peers_refusing_this_server_come_before_membership() {
    // A wiped member is no member on its own view; the refusal says what to do about it.
    let view = ReplicaView {
        refused: Some("server 1 refuses server 3: run replace-member 3".into()),
        member: false,
        leader: None,
        ..ready()
    };
    assert_eq!(view.judge().unwrap_err().code(), "refused_by_peers");
}

#[test]
fn a_leader_without_a_quorum_says_how_long_since_one_acknowledged_it() {
    let view = ReplicaView {
        contact: leading(3_250),
        ..ready()
    };
    let why = view.judge().unwrap_err();
    assert_eq!(
        why,
        NotReady::NoQuorum {
            silent: Duration::from_millis(3_250),
            patience: PATIENCE
        }
    );
    let message = why.to_string();
    assert!(
        message.contains("no quorum of voters has acknowledged it for 3.2 s")
            || message.contains("no quorum of voters has acknowledged it for 3.3 s"),
        "{message}"
    );
}

#[test]
fn a_follower_cut_off_from_its_leader_names_it_and_how_long() {
    let view = ReplicaView {
        leader: Some(2),
        contact: following(2_000),
        ..ready()
    };
    let message = view.judge().unwrap_err().to_string();
    assert!(
        message.contains("has not heard from its leader, server 2, for 2.0 s"),
        "{message}"
    );
}

#[test]
fn no_leader_and_membership_come_before_the_quorum() {
    // No leader known: that is what to fix (a follower's silence then counts for nothing).
    let leaderless = ReplicaView {
        leader: None,
        contact: following(5_000),
        ..ready()
    };
    assert_eq!(leaderless.judge(), Err(NotReady::NoLeader));
    let removed = ReplicaView {
        member: false,
        contact: leading(5_000),
        ..ready()
    };
    assert_eq!(removed.judge(), Err(NotReady::NotAMember));
}

#[test]
fn the_quorum_comes_before_catching_up_and_catching_up_before_bootstrapping() {
    // A server cut off from its quorum will neither catch up nor apply the bootstrap token until it is back.
    let behind = 5_000 - MAX_READY_LAG - 1;
    let cut_off = ReplicaView {
        contact: following(5_000),
        applied: behind,
        bootstrapping: true,
        ..ready()
    };
    assert_eq!(cut_off.judge().unwrap_err().code(), "leader_unreachable");
    let catching_up = ReplicaView {
        applied: behind,
        bootstrapping: true,
        ..ready()
    };
    assert_eq!(catching_up.judge().unwrap_err().code(), "catching_up");
}
