//! The fsync model: a crash keeps exactly what was synced.

use openraft::type_config::alias::{EntryOf, LogIdOf};
use openraft::vote::{RaftLeaderId, RaftVote};
use openraft::EntryPayload;

use super::disk::{Disk, FsyncModel};
use super::runtime::SimConfig;

fn entry(term: u64, index: u64) -> EntryOf<SimConfig> {
    let leader =
        <openraft::type_config::alias::LeaderIdOf<SimConfig> as RaftLeaderId>::new(term, 1);
    EntryOf::<SimConfig> {
        log_id: LogIdOf::<SimConfig>::new(leader.to_committed(), index),
        payload: EntryPayload::Blank,
    }
}

#[test]
fn a_crash_drops_what_was_not_synced() {
    let mut disk = Disk::new(FsyncModel::Honest);
    disk.append([entry(1, 1), entry(1, 2)]);
    disk.sync();
    disk.append([entry(1, 3)]);
    assert_eq!(disk.crash(), 1);
    assert_eq!(disk.log().keys().copied().collect::<Vec<_>>(), vec![1, 2]);
}

#[test]
fn a_truncation_syncs_what_came_before_it() {
    let mut disk = Disk::new(FsyncModel::Honest);
    disk.append([entry(1, 1), entry(1, 2), entry(1, 3)]);
    disk.truncate_after(Some(2));
    assert_eq!(disk.crash(), 0);
    assert_eq!(disk.log().keys().copied().collect::<Vec<_>>(), vec![1, 2]);
}

#[test]
fn an_honest_vote_survives_a_crash_and_a_lying_one_does_not() {
    let leader = <openraft::type_config::alias::LeaderIdOf<SimConfig> as RaftLeaderId>::new(3, 2);
    let vote = openraft::type_config::alias::VoteOf::<SimConfig>::from_leader_id(leader, false);
    let mut honest = Disk::new(FsyncModel::Honest);
    honest.save_vote(&vote);
    honest.crash();
    assert_eq!(honest.vote(), Some(vote));
    let mut lying = Disk::new(FsyncModel::AckBeforeSync);
    lying.save_vote(&vote);
    lying.crash();
    assert_eq!(lying.vote(), None);
}

#[test]
fn the_prefix_hash_tells_logs_apart_at_the_same_term_and_index() {
    let (mut a, mut b) = (Disk::new(FsyncModel::Honest), Disk::new(FsyncModel::Honest));
    let wa = a.append([entry(1, 1), entry(2, 2)]);
    let wb = b.append([entry(2, 1), entry(2, 2)]);
    assert_eq!(wa[1].1.term, wb[1].1.term);
    assert_ne!(wa[1].2, wb[1].2, "different prefixes, different hashes");
    let wc = Disk::new(FsyncModel::Honest).append([entry(1, 1), entry(2, 2)]);
    assert_eq!(wa[1].2, wc[1].2, "same prefix, same hash");
}
