use openraft::type_config::alias::{LeaderIdOf, LogIdOf, VoteOf};
use openraft::vote::RaftLeaderIdExt;

use super::*;
use crate::types::TypeConfig;

fn id(term: u64, node: u64, index: u64) -> LogIdOf<TypeConfig> {
    LogIdOf::<TypeConfig>::new(LeaderIdOf::<TypeConfig>::new_committed(term, node), index)
}

#[test]
fn a_snapshot_whose_last_entry_the_log_holds_is_overtaken() {
    // Seed 1094: the follower holds T6-N3's entries up to 735 and has committed T4-N3.700; T6-N3
    // sends a snapshot ending at T4-N3.726, which its log holds.
    let snapshot = id(4, 3, 726);
    assert_eq!(
        overtaken(
            &snapshot,
            Some(&id(4, 3, 700)),
            Some(&snapshot),
            Some(&id(6, 3, 735))
        ),
        Some(Overtaken {
            snapshot: 726,
            last: 735
        })
    );
    // Seed 1919: after a restart, nothing committed past 1980 yet and the log ends at 2185.
    let snapshot = id(21, 3, 2133);
    assert!(overtaken(
        &snapshot,
        Some(&id(21, 3, 1980)),
        Some(&snapshot),
        Some(&id(21, 3, 2185))
    )
    .is_some());
    // A log that ends at the snapshot's entry too: openraft wants its log IO cursor to grow.
    assert!(overtaken(&snapshot, None, Some(&snapshot), Some(&snapshot)).is_some());
}

#[test]
fn a_snapshot_not_past_the_committed_log_is_left_to_openraft() {
    let snapshot = id(4, 3, 726);
    for committed in [id(4, 3, 726), id(6, 3, 730)] {
        assert_eq!(
            overtaken(
                &snapshot,
                Some(&committed),
                Some(&snapshot),
                Some(&id(6, 3, 735))
            ),
            None,
            "committed {committed}"
        );
    }
}

#[test]
fn a_snapshot_past_the_followers_log_is_installed() {
    let snapshot = id(6, 3, 735);
    for last in [None, Some(id(6, 3, 700))] {
        assert_eq!(
            overtaken(&snapshot, None, None, last.as_ref()),
            None,
            "last {last:?}"
        );
    }
}

#[test]
fn a_log_that_conflicts_at_the_snapshots_index_is_left_to_openraft_to_truncate() {
    let snapshot = id(4, 3, 726);
    assert_eq!(
        overtaken(&snapshot, None, Some(&id(3, 1, 726)), Some(&id(5, 1, 735))),
        None
    );
}

#[test]
fn the_heartbeat_says_the_log_matches_and_is_committed_at_the_snapshots_entry() {
    let vote = VoteOf::<TypeConfig>::new_committed(6, 3);
    let snapshot = id(4, 3, 726);
    let beat = heartbeat::<TypeConfig>(&vote, &snapshot);
    assert_eq!(beat.vote, vote);
    assert_eq!(beat.prev_log_id, Some(snapshot));
    assert_eq!(beat.leader_commit, Some(snapshot));
    assert!(
        beat.entries.is_empty(),
        "it carries no entry, so it truncates nothing"
    );
}

#[test]
fn the_note_names_both_indexes() {
    let text = Overtaken {
        snapshot: 726,
        last: 735,
    }
    .to_string();
    assert!(text.contains("726") && text.contains("735"), "{text}");
}
