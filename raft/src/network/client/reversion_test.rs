use openraft::raft::{AppendEntriesRequest, AppendEntriesResponse};
use openraft::type_config::alias::{LeaderIdOf, LogIdOf};
use openraft::vote::RaftLeaderIdExt;

use super::*;

fn vote(term: u64) -> VoteOf<TypeConfig> {
    VoteOf::<TypeConfig>::new_committed(term, 1)
}

fn log_id(term: u64, index: u64) -> LogIdOf<TypeConfig> {
    LogIdOf::<TypeConfig>::new(LeaderIdOf::<TypeConfig>::new_committed(term, 1), index)
}

fn heartbeat(term: u64, prev: Option<u64>) -> Sent {
    Sent::of(&AppendEntriesRequest::<TypeConfig> {
        vote: vote(term),
        prev_log_id: prev.map(|i| log_id(term, i)),
        entries: Vec::new(),
        leader_commit: None,
    })
}

#[test]
fn a_conflict_below_what_the_follower_acknowledged_is_a_reversion() {
    let mut matched = Matched::default();
    let ok = AppendEntriesResponse::Success;
    assert_eq!(
        matched.judge(2, &heartbeat(1, Some(10)), &ok),
        Verdict::Pass
    );
    let conflict = AppendEntriesResponse::Conflict;
    assert_eq!(
        matched.judge(2, &heartbeat(1, Some(10)), &conflict),
        Verdict::Reverted {
            matched: 10,
            conflict: 10
        }
    );
    // Above what it acknowledged, a conflict is the ordinary search for the follower's end.
    assert_eq!(
        matched.judge(2, &heartbeat(1, Some(11)), &conflict),
        Verdict::Pass
    );
}

#[test]
fn another_vote_or_a_forgotten_follower_starts_afresh() {
    let mut matched = Matched::default();
    matched.judge(2, &heartbeat(1, Some(10)), &AppendEntriesResponse::Success);
    let conflict = AppendEntriesResponse::Conflict;
    assert_eq!(
        matched.judge(2, &heartbeat(2, Some(5)), &conflict),
        Verdict::Pass
    );
    assert_eq!(
        matched.judge(3, &heartbeat(1, Some(5)), &conflict),
        Verdict::Pass
    );
    matched.forget(2);
    assert_eq!(
        matched.judge(2, &heartbeat(1, Some(5)), &conflict),
        Verdict::Pass
    );
}

#[test]
fn a_partial_success_acknowledges_what_it_names() {
    let mut matched = Matched::default();
    let partial = AppendEntriesResponse::PartialSuccess(Some(log_id(1, 7)));
    matched.judge(2, &heartbeat(1, Some(3)), &partial);
    assert_eq!(
        matched.judge(2, &heartbeat(1, Some(7)), &AppendEntriesResponse::Conflict),
        Verdict::Reverted {
            matched: 7,
            conflict: 7
        }
    );
}
