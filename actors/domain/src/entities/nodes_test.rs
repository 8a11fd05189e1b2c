//! `NodeTable` stays a `BTreeMap<String, NodeState>` under inserts and removals, and a clone shares it.

use super::*;
use proptest::prelude::*;

fn state(active: bool) -> NodeState {
    NodeState {
        active,
        ..NodeState::default()
    }
}

proptest! {
    #[test]
    fn inserts_and_removals_keep_it_a_btreemap(ops in proptest::collection::vec((any::<bool>(), 0u16..400), 0..600)) {
        let mut t = NodeTable::default();
        let mut b: BTreeMap<String, NodeState> = BTreeMap::new();
        for (insert, k) in ops {
            let id = format!("n-{k}");
            if insert {
                *t.get_or_default(id.clone()) = state(k % 2 == 0);
                b.insert(id, state(k % 2 == 0));
            } else {
                prop_assert_eq!(t.remove(&id), b.remove(&id));
            }
            prop_assert_eq!(t.len(), b.len());
        }
        for k in 0..400u16 {
            let id = format!("n-{k}");
            prop_assert_eq!(t.get(&id), b.get(&id), "{}", id);
        }
        prop_assert!(t.iter().eq(b.iter()));
        let cfg = bincode::config::standard();
        prop_assert_eq!(
            bincode::serde::encode_to_vec(&t, cfg).unwrap(),
            bincode::serde::encode_to_vec(&b, cfg).unwrap()
        );
    }
}

#[test]
fn a_clone_shares_everything_and_never_sees_later_writes() {
    let mut t: NodeTable = (0..5000)
        .map(|i| (format!("n-{i}"), state(false)))
        .collect();
    let frozen = t.clone();
    assert!(t.shares_all_with(&frozen));
    t.get_mut("n-42").unwrap().active = true;
    t.get_or_default("n-new".into());
    t.remove("n-7");
    assert!(!frozen.get("n-42").unwrap().active);
    assert!(frozen.get("n-new").is_none() && frozen.get("n-7").is_some());
    assert!(t.get("n-42").unwrap().active && t.get("n-7").is_none());
    assert_eq!((frozen.len(), t.len()), (5000, 5000));
    assert!(
        !Arc::ptr_eq(&t.index, &frozen.index),
        "adding a node copied the index"
    );
    for i in (0..5000).filter(|i| *i != 7) {
        let id = format!("n-{i}");
        assert!(t.contains_key(&id) && frozen.contains_key(&id), "{id}");
    }
}

#[test]
fn reports_of_known_nodes_leave_the_index_shared() {
    let mut t: NodeTable = (0..100).map(|i| (format!("n-{i}"), state(false))).collect();
    let frozen = t.clone();
    for i in 0..100 {
        t.get_or_default(format!("n-{i}")).active = true;
    }
    assert!(Arc::ptr_eq(&t.index, &frozen.index));
    assert!(frozen.iter().all(|(_, n)| !n.active) && t.iter().all(|(_, n)| n.active));
}
