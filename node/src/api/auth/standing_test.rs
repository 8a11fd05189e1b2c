//! A secret's standing: valid, expired (by this server's clock or the leader's latest stamp), unknown; and
//! what an open stream learns when its token is revoked, replaced or expires.

use convoy_actors::domain::{Actor, Command, Role};
use convoy_raft::StateMachine;

use super::*;

const HOUR: u64 = 3_600_000;

fn wall() -> u64 {
    convoy_time::Clock::wall_ms(&convoy_time::SystemClock)
}

fn create(m: &mut Machine, name: &str, hash: u8, at: u64, ttl_ms: Option<u64>) -> Token {
    let (name_, role, nodes, hash_, by) = (
        name.to_string(),
        Role::Reader,
        None,
        [hash; 32],
        Actor::System,
    );
    let command = match ttl_ms {
        None => Command::CreateToken {
            name: name_,
            role,
            nodes,
            hash: hash_,
            by,
        },
        Some(ttl_ms) => Command::CreateTokenWithTtl {
            name: name_,
            role,
            nodes,
            hash: hash_,
            by,
            ttl_ms,
        },
    };
    m.apply(command, at).expect("created");
    m.state().tokens().get(name).cloned().expect("token")
}

#[test]
fn a_token_is_valid_until_its_ttl_runs_out() {
    let mut m = Machine::default();
    let lasting = create(&mut m, "lasting", 1, wall(), None);
    let brief = create(&mut m, "brief", 2, wall(), Some(HOUR));
    let gone = create(&mut m, "gone", 3, wall() - 2 * HOUR, Some(HOUR));
    assert_eq!(standing(&m, &[1; 32]), Standing::Valid(lasting));
    assert_eq!(standing(&m, &[2; 32]), Standing::Valid(brief));
    assert_eq!(standing(&m, &[3; 32]), Standing::Expired(gone));
    assert_eq!(standing(&m, &[4; 32]), Standing::Unknown);
}

#[test]
fn the_leaders_later_stamp_expires_a_token_a_slow_clock_would_keep() {
    let mut m = Machine::default();
    let brief = create(&mut m, "brief", 2, wall(), Some(HOUR));
    assert_eq!(standing(&m, &[2; 32]), Standing::Valid(brief.clone()));
    // An entry the leader stamped two hours on (this server's clock is behind).
    m.apply(
        Command::RevokeToken {
            name: "nobody".into(),
            by: Actor::System,
        },
        wall() + 2 * HOUR,
    )
    .expect_err("no such token");
    assert!(now_ms(&m) >= wall() + 2 * HOUR - 1_000);
    assert_eq!(standing(&m, &[2; 32]), Standing::Expired(brief.clone()));
    assert_eq!(still_valid(&m, &brief), Err(Ended::Expired));
}

#[test]
fn a_stream_learns_of_revocation_replacement_and_expiry() {
    let mut m = Machine::default();
    let token = create(&mut m, "watcher", 1, wall(), Some(HOUR));
    assert_eq!(still_valid(&m, &token), Ok(()));
    m.apply(
        Command::RevokeToken {
            name: "watcher".into(),
            by: Actor::System,
        },
        wall(),
    )
    .unwrap();
    assert_eq!(still_valid(&m, &token), Err(Ended::Revoked));
    // Another token of the same name (another secret) does not revive the stream.
    create(&mut m, "watcher", 9, wall(), None);
    assert_eq!(still_valid(&m, &token), Err(Ended::Revoked));
    let old = create(&mut m, "old", 2, wall() - 2 * HOUR, Some(HOUR));
    assert_eq!(still_valid(&m, &old), Err(Ended::Expired));
    let event = Ended::Revoked.event("watcher", 7);
    assert!(event.starts_with("event: closed\nid: 7\ndata: "), "{event}");
    assert!(event.contains("\"reason\":\"token_revoked\""), "{event}");
}

#[test]
fn a_ttl_out_of_bounds_is_refused_before_and_in_the_log() {
    let mut m = Machine::default();
    let command = Command::CreateTokenWithTtl {
        name: "t".into(),
        role: Role::Reader,
        nodes: None,
        hash: [1; 32],
        by: Actor::System,
        ttl_ms: 999,
    };
    let refused = convoy_actors::domain::precheck(m.state(), &command).unwrap_err();
    assert!(refused.to_string().contains("999 ms"), "{refused}");
    assert!(m.apply(command, wall()).is_err());
    assert_eq!(standing(&m, &[1; 32]), Standing::Unknown);
}
