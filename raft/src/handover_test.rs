//! Which voter the leader hands over to.

use openraft::type_config::alias::LeaderIdOf;
use openraft::vote::RaftLeaderIdExt;

use super::*;

fn at(index: u64) -> Option<LogIdOf<TypeConfig>> {
    Some(LogIdOf::<TypeConfig>::new(
        LeaderIdOf::<TypeConfig>::new_committed(3, 1),
        index,
    ))
}

fn voters(ids: &[NodeId]) -> BTreeSet<NodeId> {
    ids.iter().copied().collect()
}

#[test]
fn the_voter_with_the_furthest_log_is_chosen() {
    let replication = BTreeMap::from([(2, at(90)), (3, at(120)), (4, at(200))]);
    // 4 is furthest but a learner (not a voter): 3 it is.
    assert_eq!(successor(1, &voters(&[1, 2, 3]), &replication), Some(3));
    assert_eq!(successor(1, &voters(&[1, 2, 3, 4]), &replication), Some(4));
}

#[test]
fn ties_go_to_the_lowest_id_and_unknown_progress_comes_last() {
    let replication = BTreeMap::from([(2, at(50)), (3, at(50)), (5, None)]);
    assert_eq!(successor(1, &voters(&[1, 2, 3, 5]), &replication), Some(2));
    assert_eq!(successor(1, &voters(&[1, 5, 7]), &replication), Some(5));
}

#[test]
fn a_lone_server_has_no_successor() {
    assert_eq!(successor(1, &voters(&[1]), &BTreeMap::new()), None);
    assert_eq!(successor(1, &voters(&[]), &BTreeMap::new()), None);
}
