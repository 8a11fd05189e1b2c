//! `CowMap` behaves, prints and encodes exactly like `BTreeMap`, and a clone never sees later writes.

use super::*;
use proptest::prelude::*;

proptest! {
    #[test]
    fn cow_map_is_a_btreemap(ops in proptest::collection::vec((0u8..4, 0u16..300, any::<u32>()), 0..300)) {
        let mut m: CowMap<String, u32> = CowMap::new();
        let mut b: BTreeMap<String, u32> = BTreeMap::new();
        let mut frozen = Vec::new();
        for (op, k, v) in ops {
            let k = format!("k{k}");
            match op {
                0 => prop_assert_eq!(m.insert(k.clone(), v), b.insert(k.clone(), v)),
                1 => prop_assert_eq!(m.remove(&k), b.remove(&k)),
                2 => {
                    if let Some(x) = m.get_mut(&k) { *x = v; }
                    if let Some(x) = b.get_mut(&k) { *x = v; }
                }
                _ => frozen.push((m.clone(), b.clone())),
            }
            prop_assert_eq!(m.get(&k), b.get(&k));
        }
        prop_assert_eq!(m.len(), b.len());
        prop_assert!(m.iter().eq(b.iter()));
        prop_assert!(m.keys().rev().eq(b.keys().rev()));
        prop_assert!(m.range("k1".to_string().."k2".to_string()).eq(b.range("k1".to_string().."k2".to_string())));
        prop_assert_eq!(m.first_key_value(), b.first_key_value());
        prop_assert_eq!(m.last_key_value(), b.last_key_value());
        prop_assert_eq!(format!("{m:?}"), format!("{b:?}"));
        let cfg = bincode::config::standard();
        let bytes = bincode::serde::encode_to_vec(&m, cfg).unwrap();
        prop_assert_eq!(&bytes, &bincode::serde::encode_to_vec(&b, cfg).unwrap());
        let (back, _): (CowMap<String, u32>, _) = bincode::serde::decode_from_slice(&bytes, cfg).unwrap();
        prop_assert_eq!(&back, &m);
        for (fm, fb) in frozen {
            prop_assert!(fm.iter().eq(fb.iter()), "a clone never sees later writes");
        }
        m.retain(|_, v| v % 2 == 0);
        b.retain(|_, v| *v % 2 == 0);
        prop_assert!(m.iter().eq(b.iter()));
    }
}

#[test]
fn a_write_after_a_clone_copies_only_the_value_it_changes() {
    let mut m: CowMap<u32, Vec<u32>> = (0..1000).map(|i| (i, vec![i])).collect();
    let frozen = m.clone();
    assert!(m.ptr_eq(&frozen));
    m.get_mut(&7).unwrap().push(8);
    assert!(!m.ptr_eq(&frozen));
    assert_eq!(frozen[&7], vec![7]);
    assert_eq!(m[&7], vec![7, 8]);
    let untouched = |k: u32| std::ptr::eq(m.get(&k).unwrap(), frozen.get(&k).unwrap());
    assert!(untouched(8) && untouched(999), "other values stay shared");
    *m.get_or_insert_with(2000, Vec::new) = vec![1];
    assert_eq!(m.get(&2000), Some(&vec![1]));
    assert_eq!(frozen.get(&2000), None);
}
