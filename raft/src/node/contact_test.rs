//! Word of a quorum: a leader by its last quorum acknowledgement (or its election), a lone voter never judged,
//! a follower by the last RPC of the leader it names.

use std::time::{Duration, Instant};

use super::*;

fn leader(now: Instant) -> Seen {
    Seen {
        id: 1,
        leading: true,
        leader: Some(1),
        voters: vec![1, 2, 3],
        quorum_acked: Some(now - Duration::from_millis(40)),
        own_clock: Some(now - Duration::from_millis(40)),
    }
}

#[test]
fn a_leader_is_silent_since_a_quorum_last_acknowledged_it() {
    let now = Instant::now() + Duration::from_secs(10);
    let heard = Heard::since(now);
    let seen = Seen {
        quorum_acked: Some(now - Duration::from_millis(2_500)),
        ..leader(now)
    };
    assert_eq!(
        contact(&seen, &heard, now),
        Contact::Leading {
            silent: Duration::from_millis(2_500)
        }
    );
}

#[test]
fn a_leader_no_quorum_acknowledged_yet_is_silent_since_its_election() {
    let now = Instant::now() + Duration::from_secs(10);
    let seen = Seen {
        quorum_acked: None,
        own_clock: Some(now - Duration::from_millis(300)),
        ..leader(now)
    };
    assert_eq!(
        contact(&seen, &Heard::since(now), now),
        Contact::Leading {
            silent: Duration::from_millis(300)
        }
    );
}

#[test]
fn a_lone_voter_is_its_own_quorum() {
    let now = Instant::now() + Duration::from_secs(10);
    let seen = Seen {
        voters: vec![1],
        quorum_acked: None,
        own_clock: None,
        ..leader(now)
    };
    assert_eq!(contact(&seen, &Heard::since(now), now), Contact::Unjudged);
}

#[test]
fn a_follower_is_silent_since_the_leader_it_names_last_sent_to_it() {
    let born = Instant::now();
    let heard = Heard::since(born);
    heard.from(2, born + Duration::from_millis(100));
    heard.from(3, born + Duration::from_millis(1_900));
    let seen = Seen {
        id: 1,
        leading: false,
        leader: Some(2),
        voters: vec![1, 2, 3],
        quorum_acked: None,
        own_clock: None,
    };
    let now = born + Duration::from_secs(2);
    assert_eq!(
        contact(&seen, &heard, now),
        Contact::Following {
            leader: 2,
            silent: Duration::from_millis(1_900)
        }
    );
    let no_leader = Seen {
        leader: None,
        ..seen
    };
    assert_eq!(contact(&no_leader, &heard, now), Contact::Unjudged);
}
