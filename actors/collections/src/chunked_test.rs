//! `ChunkedVec` behaves and encodes like `Vec` under any sequence of operations, and a clone shares its groups and
//! chunks.

use super::*;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde::{Deserialize, Serialize};

const CHUNK: usize = ChunkedVec::<u32>::CHUNK;

#[derive(Clone, Debug)]
enum Op {
    Push(u16),
    Pop,
    Set(usize, u16),
    SwapRemove(usize),
    Retain(u16),
    Clone,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => any::<u16>().prop_map(Op::Push),
        1 => Just(Op::Pop),
        2 => (any::<usize>(), any::<u16>()).prop_map(|(i, x)| Op::Set(i, x)),
        1 => any::<usize>().prop_map(Op::SwapRemove),
        1 => any::<u16>().prop_map(Op::Retain),
        1 => Just(Op::Clone),
    ]
}

/// Runs `ops` on a `ChunkedVec` and a `Vec` of `bulk` items made by `item`, and checks they agree throughout.
/// `key` reads back the `u16` an item was made from.
fn agrees_with_vec<T>(
    ops: Vec<Op>,
    bulk: usize,
    item: impl Fn(u16) -> T,
    key: impl Fn(&T) -> u16,
) -> Result<(), TestCaseError>
where
    T: Clone + PartialEq + fmt::Debug + Serialize + for<'de> Deserialize<'de>,
{
    let mut v: ChunkedVec<T> = (0..bulk as u16).map(&item).collect();
    let mut b: Vec<T> = (0..bulk as u16).map(&item).collect();
    let mut frozen = Vec::new();
    for op in ops {
        match op {
            Op::Push(x) => {
                v.push(item(x));
                b.push(item(x));
            }
            Op::Pop => prop_assert_eq!(v.pop(), b.pop()),
            Op::Set(i, x) if !b.is_empty() => {
                let i = i % b.len();
                v[i] = item(x);
                b[i] = item(x);
            }
            Op::SwapRemove(i) if !b.is_empty() => {
                let i = i % b.len();
                prop_assert_eq!(v.swap_remove(i), b.swap_remove(i));
            }
            Op::Retain(x) => {
                let keep = |y: &T| key(y) % 7 != x % 7;
                v.retain(keep);
                b.retain(keep);
            }
            Op::Clone => frozen.push((v.clone(), b.clone())),
            _ => {}
        }
        prop_assert_eq!(v.len(), b.len());
    }
    prop_assert_eq!(v.iter().cloned().collect::<Vec<_>>(), b.clone());
    prop_assert_eq!(
        v.iter().rev().cloned().collect::<Vec<_>>(),
        b.iter().rev().cloned().collect::<Vec<_>>()
    );
    prop_assert_eq!(v.iter().len(), b.len());
    for start in [
        0,
        1,
        b.len() / 2,
        b.len().saturating_sub(1),
        b.len(),
        b.len() + 3,
    ] {
        prop_assert!(
            v.iter_from(start).eq(b.iter().skip(start)),
            "iter_from({})",
            start
        );
    }
    prop_assert_eq!(format!("{v:?}"), format!("{b:?}"));
    let cfg = bincode::config::standard();
    let bytes = bincode::serde::encode_to_vec(&v, cfg).unwrap();
    prop_assert_eq!(&bytes, &bincode::serde::encode_to_vec(&b, cfg).unwrap());
    let (back, _): (ChunkedVec<T>, _) = bincode::serde::decode_from_slice(&bytes, cfg).unwrap();
    prop_assert_eq!(&back, &v);
    for (fv, fb) in frozen {
        prop_assert_eq!(fv, fb, "a clone never sees later writes");
    }
    Ok(())
}

/// An item of 256 bytes: 32 to a chunk, so a few thousand span many groups.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Wide(u16, Vec<u8>, [u64; 28]);

proptest! {
    #[test]
    fn chunked_vec_is_a_vec(ops in proptest::collection::vec(op(), 0..200), bulk in 0usize..10_000) {
        agrees_with_vec(ops, bulk, |x| x, |y| *y)?;
    }

    #[test]
    fn chunked_vec_of_many_groups_is_a_vec(ops in proptest::collection::vec(op(), 0..200), bulk in 0usize..3_000) {
        agrees_with_vec(ops, bulk, |x| Wide(x, vec![x as u8], [u64::from(x); 28]), |w| w.0)?;
    }
}

#[test]
fn chunks_hold_about_chunk_bytes_of_items() {
    assert_eq!(ChunkedVec::<u32>::CHUNK, 2048);
    assert_eq!(ChunkedVec::<[u8; 100]>::CHUNK, 128);
    assert_eq!(ChunkedVec::<[u8; 4096]>::CHUNK, 16);
    assert_eq!(ChunkedVec::<()>::CHUNK, 4096);
}

#[test]
fn iter_from_starts_anywhere() {
    let v: ChunkedVec<u32> = (0..3 * CHUNK as u32 + 7).collect();
    for start in [0, 1, CHUNK - 1, CHUNK, 2 * CHUNK + 3, v.len(), v.len() + 5] {
        let expected: Vec<u32> = (start.min(v.len()) as u32..v.len() as u32).collect();
        assert_eq!(
            v.iter_from(start).copied().collect::<Vec<_>>(),
            expected,
            "{start}"
        );
        assert_eq!(v.iter_from(start).len(), expected.len());
    }
}

#[test]
fn a_clone_shares_chunks_until_one_is_written() {
    let mut v: ChunkedVec<u32> = (0..10 * CHUNK as u32).collect();
    let frozen = v.clone();
    assert!(v.shares_all_chunks_with(&frozen));
    v[3 * CHUNK + 5] = 7;
    let shared = (0..10)
        .filter(|&c| Arc::ptr_eq(v.chunk(c), frozen.chunk(c)))
        .count();
    assert_eq!(shared, 9, "only the written chunk was copied");
    assert_eq!(frozen[3 * CHUNK + 5], (3 * CHUNK + 5) as u32);
    assert_eq!(v[3 * CHUNK + 5], 7);
}

#[test]
fn update_where_copies_only_the_chunks_it_changes() {
    let mut v: ChunkedVec<u32> = (0..4 * CHUNK as u32).collect();
    let frozen = v.clone();
    v.update_where(|x| *x == 1, |x| *x = 100);
    assert_eq!(v[1], 100);
    assert!(Arc::ptr_eq(v.chunk(1), frozen.chunk(1)));
    assert!(!Arc::ptr_eq(v.chunk(0), frozen.chunk(0)));
}

#[test]
fn a_push_after_a_clone_copies_only_the_last_chunk() {
    let mut v: ChunkedVec<u32> = (0..2 * CHUNK as u32 + 3).collect();
    let frozen = v.clone();
    v.push(99);
    assert!(Arc::ptr_eq(v.chunk(0), frozen.chunk(0)));
    assert!(!Arc::ptr_eq(v.chunk(2), frozen.chunk(2)));
    assert_eq!((v.len(), frozen.len()), (2 * CHUNK + 4, 2 * CHUNK + 3));
    assert_eq!(frozen.chunk(2).len(), 3, "the frozen chunk did not grow");
    assert_eq!(v.last(), Some(&99));
    v.push(100);
    assert_eq!(Arc::strong_count(v.chunk(2)), 1, "written again in place");
}

#[test]
fn a_write_after_a_clone_copies_one_group_and_one_chunk() {
    let mut v: ChunkedVec<u32> = (0..(3 * GROUP * CHUNK) as u32).collect();
    assert_eq!(v.groups.len(), 3, "a clone copies one pointer per group");
    let frozen = v.clone();
    v[GROUP * CHUNK + 1] = 7;
    let shared_groups = v
        .groups
        .iter()
        .zip(&frozen.groups)
        .filter(|(a, b)| Arc::ptr_eq(a, b))
        .count();
    assert_eq!(shared_groups, 2, "only the written group was copied");
    let shared_chunks = (0..3 * GROUP)
        .filter(|&c| Arc::ptr_eq(v.chunk(c), frozen.chunk(c)))
        .count();
    assert_eq!(
        shared_chunks,
        3 * GROUP - 1,
        "and in it only the written chunk"
    );
    assert!(!v.shares_all_chunks_with(&frozen));
    assert!(v.shares_all_chunks_with(&v.clone()));
    assert_eq!(frozen[GROUP * CHUNK + 1], (GROUP * CHUNK + 1) as u32);
}

#[test]
fn popping_past_a_group_boundary_drops_the_empty_group() {
    let mut v: ChunkedVec<u32> = (0..(GROUP * CHUNK + 1) as u32).collect();
    assert_eq!(v.groups.len(), 2);
    assert_eq!(v.pop(), Some((GROUP * CHUNK) as u32));
    assert_eq!(v.groups.len(), 1);
    v.push(5);
    assert_eq!((v.groups.len(), v.last()), (2, Some(&5)));
}
