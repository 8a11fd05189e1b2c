use std::collections::{BTreeMap, BTreeSet};

use super::*;

fn founders(addrs: &[(NodeId, &str)]) -> BTreeMap<NodeId, Member> {
    addrs
        .iter()
        .map(|(id, addr)| {
            (
                *id,
                Member {
                    raft_addr: addr.to_string(),
                    http_addr: String::new(),
                },
            )
        })
        .collect()
}

#[test]
fn every_founder_derives_the_same_cluster_id_and_another_cluster_another() {
    let a = founders(&[(1, "10.0.0.1:7000"), (2, "10.0.0.2:7000")]);
    let b = founders(&[(1, "10.0.0.1:7000"), (2, "10.0.0.3:7000")]);
    assert_eq!(
        ClusterId::of_founders(b"s", &a),
        ClusterId::of_founders(b"s", &a.clone())
    );
    assert_ne!(
        ClusterId::of_founders(b"s", &a),
        ClusterId::of_founders(b"s", &b)
    );
    assert_ne!(
        ClusterId::of_founders(b"s", &a),
        ClusterId::of_founders(b"t", &a)
    );
}

#[test]
fn an_identity_survives_a_restart_and_a_new_data_dir_gets_a_new_incarnation() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = Some(ClusterId(7));
    let (first, opened) = Identity::open(dir.path(), 1, cluster, true, 1).unwrap();
    assert_eq!(opened, Opened::Created);
    first.check(2, cluster, 22).unwrap();
    let (again, opened) = Identity::open(dir.path(), 1, cluster, false, 1).unwrap();
    assert_eq!(opened, Opened::Read);
    assert_eq!(again.incarnation(), first.incarnation());
    assert_eq!(again.cluster(), cluster);
    assert_eq!(again.known(2), Some(22));

    let other = tempfile::tempdir().unwrap();
    let (fresh, _) = Identity::open(other.path(), 1, cluster, true, 1).unwrap();
    assert_ne!(fresh.incarnation(), first.incarnation());
}

#[test]
fn a_data_dir_without_an_identity_is_adopted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("CURRENT"), "MANIFEST-000001\n").unwrap();
    let (identity, opened) = Identity::open(dir.path(), 3, None, false, 1).unwrap();
    assert_eq!(opened, Opened::Adopted);
    assert_eq!(identity.cluster(), None);
    // It takes the cluster id of the first peer that shows one, and keeps it.
    identity.check(1, Some(ClusterId(9)), 11).unwrap();
    assert_eq!(identity.cluster(), Some(ClusterId(9)));
    let (reopened, _) = Identity::open(dir.path(), 3, None, false, 1).unwrap();
    assert_eq!(reopened.cluster(), Some(ClusterId(9)));
}

#[test]
fn another_servers_data_dir_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    Identity::open(dir.path(), 1, Some(ClusterId(1)), true, 1).unwrap();
    let e = Identity::open(dir.path(), 2, Some(ClusterId(1)), false, 1).unwrap_err();
    assert!(
        matches!(
            e,
            IdentityError::OtherServer {
                owner: 1,
                id: 2,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("belongs to server 1"), "{e}");
}

#[test]
fn an_edited_initial_cluster_does_not_change_a_recorded_cluster_id() {
    let dir = tempfile::tempdir().unwrap();
    Identity::open(dir.path(), 1, Some(ClusterId(1)), true, 1).unwrap();
    let (again, _) = Identity::open(dir.path(), 1, Some(ClusterId(2)), false, 1).unwrap();
    assert_eq!(again.cluster(), Some(ClusterId(1)));
}

#[test]
fn a_malformed_file_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(IDENTITY_FILE), "server = 1\nwhat\n").unwrap();
    let e = Identity::open(dir.path(), 1, None, false, 1).unwrap_err();
    assert!(matches!(e, IdentityError::Malformed { line: 2, .. }), "{e}");
}

#[test]
fn a_peer_of_another_cluster_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (identity, _) = Identity::open(dir.path(), 1, Some(ClusterId(1)), true, 1).unwrap();
    let refusal = identity.check(2, Some(ClusterId(2)), 5).unwrap_err();
    assert!(matches!(
        refusal,
        Refusal::OtherCluster { by: 1, of: 2, .. }
    ));
    assert!(refusal.to_string().contains("different clusters"));
    // A peer that states no cluster yet (a joiner) is accepted.
    identity.check(3, None, 6).unwrap();
}

#[test]
fn a_voter_back_with_another_incarnation_is_refused_naming_the_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let (identity, _) = Identity::open(dir.path(), 1, Some(ClusterId(1)), true, 1).unwrap();
    identity.set_voters(BTreeSet::from([1, 2, 3]));
    identity.check(2, Some(ClusterId(1)), 20).unwrap();
    identity.check(2, Some(ClusterId(1)), 20).unwrap();
    let refusal = identity.check(2, Some(ClusterId(1)), 21).unwrap_err();
    assert_eq!(
        refusal,
        Refusal::Replaced {
            by: 1,
            of: 2,
            known: 20,
            got: 21
        }
    );
    assert!(
        refusal.to_string().contains("replace-member 2"),
        "{refusal}"
    );
    // Until the replica names the voters (or while it names none), every peer is judged as one.
    identity.set_voters(BTreeSet::new());
    assert!(identity.check(2, Some(ClusterId(1)), 22).is_err());
    assert_eq!(identity.known(2), Some(20));
    let other = tempfile::tempdir().unwrap();
    let (early, _) = Identity::open(other.path(), 1, None, true, 1).unwrap();
    early.check(2, None, 20).unwrap();
    assert!(early.check(2, None, 21).is_err());
}

#[test]
fn a_peer_that_left_the_voters_is_forgotten_and_met_anew() {
    let dir = tempfile::tempdir().unwrap();
    let (identity, _) = Identity::open(dir.path(), 1, None, true, 1).unwrap();
    identity.set_voters(BTreeSet::from([1, 2, 3]));
    identity.check(2, None, 20).unwrap();
    // Removed (or a learner again): the record goes, and a new data dir is met as new.
    identity.set_voters(BTreeSet::from([1, 3]));
    assert_eq!(identity.known(2), None);
    identity.check(2, None, 30).unwrap();
    identity.set_voters(BTreeSet::from([1, 2, 3]));
    assert_eq!(identity.known(2), Some(30));
    // A learner that is not yet a voter is recorded anew whatever it showed before.
    identity.set_voters(BTreeSet::from([1, 3]));
    identity.check(4, None, 40).unwrap();
    identity.check(4, None, 41).unwrap();
    assert_eq!(identity.known(4), Some(41));
}

#[test]
fn a_peer_too_old_to_state_an_incarnation_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let (identity, _) = Identity::open(dir.path(), 1, None, true, 1).unwrap();
    identity.check(2, None, 20).unwrap();
    identity.check(2, None, 0).unwrap();
    assert_eq!(identity.known(2), Some(20));
}

#[test]
fn peers_met_at_once_on_many_connections_are_all_saved() {
    // Handshakes from several peers arrive on their own tasks; each new peer saves the file.
    let dir = tempfile::tempdir().unwrap();
    let (identity, _) = Identity::open(dir.path(), 1, Some(ClusterId(1)), true, 1).unwrap();
    let identity = std::sync::Arc::new(identity);
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let identity = identity.clone();
            std::thread::spawn(move || {
                (0..25u64)
                    .map(|_| identity.save().map_err(|e| e.to_string()))
                    .chain((0..25u64).map(|i| {
                        identity
                            .check(100 + t * 25 + i, Some(ClusterId(1)), 7)
                            .unwrap();
                        Ok(())
                    }))
                    .filter_map(Result::err)
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let errors: Vec<String> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert!(errors.is_empty(), "saves failed: {errors:?}");
    let (reopened, _) = Identity::open(dir.path(), 1, Some(ClusterId(1)), false, 1).unwrap();
    assert_eq!(
        (100..300).filter(|p| reopened.known(*p) == Some(7)).count(),
        200,
        "every peer met is on disk"
    );
}

#[test]
fn a_data_dir_of_another_state_format_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    Identity::open(dir.path(), 1, Some(ClusterId(1)), true, 2).unwrap();
    let text = std::fs::read_to_string(dir.path().join(IDENTITY_FILE)).unwrap();
    assert!(text.contains("state_format = 2\n"), "{text}");
    Identity::open(dir.path(), 1, Some(ClusterId(1)), false, 2).unwrap();
    let e = Identity::open(dir.path(), 1, Some(ClusterId(1)), false, 3).unwrap_err();
    assert!(
        matches!(
            e,
            IdentityError::StateFormat {
                found: 2,
                reads: 3,
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("holds state format 2, and this build reads format 3"),
        "{e}"
    );
    // Recorded before formats were: format 1, read by a build of format 1 only.
    let old = tempfile::tempdir().unwrap();
    std::fs::write(
        old.path().join(IDENTITY_FILE),
        "server = 1\nincarnation = 00000000000000aa\n",
    )
    .unwrap();
    let e = Identity::open(old.path(), 1, None, false, 2).unwrap_err();
    assert!(
        matches!(
            e,
            IdentityError::StateFormat {
                found: 1,
                reads: 2,
                ..
            }
        ),
        "{e}"
    );
    Identity::open(old.path(), 1, None, false, 1).unwrap();
    // A data dir written before identities existed (not fresh, no file) is format 1 too.
    let older = tempfile::tempdir().unwrap();
    std::fs::write(older.path().join("CURRENT"), "x").unwrap();
    let e = Identity::open(older.path(), 1, None, false, 2).unwrap_err();
    assert!(
        matches!(e, IdentityError::StateFormat { found: 1, .. }),
        "{e}"
    );
}
