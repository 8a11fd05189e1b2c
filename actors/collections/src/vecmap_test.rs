//! `VecMap`/`VecSet` behave, print and encode exactly like `BTreeMap`/`BTreeSet` under any sequence of operations.

use super::*;
use crate::{OneInline, VecSet};
use proptest::prelude::*;
use std::collections::BTreeSet;

fn bytes<T: Serialize>(v: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(v, bincode::config::standard()).unwrap()
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u8, u16),
    Remove(u8),
    OrDefault(u8),
    Retain(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..12, any::<u16>()).prop_map(|(k, v)| Op::Insert(k, v)),
        (0u8..12).prop_map(Op::Remove),
        (0u8..12).prop_map(Op::OrDefault),
        (0u8..12).prop_map(Op::Retain),
    ]
}

fn same_as_btreemap<P: Pair<(String, u16)>>(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut m: VecMap<String, u16, P> = VecMap::new();
    let mut b: BTreeMap<String, u16> = BTreeMap::new();
    for o in ops {
        match o {
            Op::Insert(k, v) => {
                prop_assert_eq!(m.insert(k.to_string(), v), b.insert(k.to_string(), v))
            }
            Op::Remove(k) => prop_assert_eq!(m.remove(&k.to_string()), b.remove(&k.to_string())),
            Op::OrDefault(k) => {
                // Values come from any u16: count up without overflowing at u16::MAX.
                let x = m.get_or_default(k.to_string());
                *x = x.wrapping_add(1);
                let y = b.entry(k.to_string()).or_default();
                *y = y.wrapping_add(1);
            }
            Op::Retain(k) => {
                m.retain(|x, _| x.as_str() != k.to_string());
                b.retain(|x, _| x.as_str() != k.to_string());
            }
        }
        prop_assert_eq!(m.len(), b.len());
        prop_assert!(m.iter().eq(b.iter()));
        for k in 0u8..12 {
            prop_assert_eq!(m.get(k.to_string().as_str()), b.get(k.to_string().as_str()));
        }
    }
    prop_assert_eq!(format!("{m:?}"), format!("{b:?}"));
    prop_assert_eq!(bytes(&m), bytes(&b));
    let (back, _): (VecMap<String, u16, P>, _) =
        bincode::serde::decode_from_slice(&bytes(&b), bincode::config::standard()).unwrap();
    prop_assert!(back == m);
    let collected: VecMap<String, u16, P> = b.clone().into_iter().rev().collect();
    prop_assert!(collected == m);
    Ok(())
}

proptest! {
    #[test]
    fn vecmap_is_a_btreemap(ops in proptest::collection::vec(op(), 0..40)) {
        same_as_btreemap::<[(String, u16); 2]>(ops.clone())?;
        same_as_btreemap::<OneInline>(ops)?;
    }

    #[test]
    fn vecset_is_a_btreeset(ops in proptest::collection::vec((any::<bool>(), 0u8..10), 0..40)) {
        let mut s: VecSet<String, OneInline> = VecSet::new();
        let mut b: BTreeSet<String> = BTreeSet::new();
        for (add, k) in ops {
            if add {
                prop_assert_eq!(s.insert(k.to_string()), b.insert(k.to_string()));
            } else {
                prop_assert_eq!(s.remove(&k.to_string()), b.remove(&k.to_string()));
            }
            prop_assert!(s.iter().eq(b.iter()));
            prop_assert_eq!(s.first(), b.first());
        }
        prop_assert_eq!(format!("{s:?}"), format!("{b:?}"));
        prop_assert_eq!(bytes(&s), bytes(&b));
    }
}

#[test]
fn from_iter_keeps_the_last_duplicate_like_btreemap() {
    let m: VecMap<u8, &str> = [(2, "a"), (1, "b"), (2, "c")].into_iter().collect();
    let b: BTreeMap<u8, &str> = [(2, "a"), (1, "b"), (2, "c")].into_iter().collect();
    assert!(m.iter().eq(b.iter()));
}
