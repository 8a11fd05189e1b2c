//! `ChunkedVec` behaves and encodes like `Vec` under any sequence of operations, and a clone shares its chunks.

use super::*;
use proptest::prelude::*;

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

proptest! {
    #[test]
    fn chunked_vec_is_a_vec(ops in proptest::collection::vec(op(), 0..200), bulk in 0usize..10_000) {
        let mut v: ChunkedVec<u16> = (0..bulk as u16).collect();
        let mut b: Vec<u16> = (0..bulk as u16).collect();
        let mut frozen = Vec::new();
        for op in ops {
            match op {
                Op::Push(x) => { v.push(x); b.push(x); }
                Op::Pop => prop_assert_eq!(v.pop(), b.pop()),
                Op::Set(i, x) if !b.is_empty() => { let i = i % b.len(); v[i] = x; b[i] = x; }
                Op::SwapRemove(i) if !b.is_empty() => {
                    let i = i % b.len();
                    prop_assert_eq!(v.swap_remove(i), b.swap_remove(i));
                }
                Op::Retain(x) => { v.retain(|y| y % 7 != x % 7); b.retain(|y| y % 7 != x % 7); }
                Op::Clone => frozen.push((v.clone(), b.clone())),
                _ => {}
            }
            prop_assert_eq!(v.len(), b.len());
        }
        prop_assert_eq!(v.iter().copied().collect::<Vec<_>>(), b.clone());
        prop_assert_eq!(v.iter().rev().copied().collect::<Vec<_>>(), b.iter().rev().copied().collect::<Vec<_>>());
        prop_assert_eq!(v.iter().len(), b.len());
        prop_assert_eq!(format!("{v:?}"), format!("{b:?}"));
        let cfg = bincode::config::standard();
        let bytes = bincode::serde::encode_to_vec(&v, cfg).unwrap();
        prop_assert_eq!(&bytes, &bincode::serde::encode_to_vec(&b, cfg).unwrap());
        let (back, _): (ChunkedVec<u16>, _) = bincode::serde::decode_from_slice(&bytes, cfg).unwrap();
        prop_assert_eq!(&back, &v);
        for (fv, fb) in frozen {
            prop_assert_eq!(fv, fb, "a clone never sees later writes");
        }
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
    let shared = v
        .chunks
        .iter()
        .zip(&frozen.chunks)
        .filter(|(a, b)| Arc::ptr_eq(a, b))
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
    assert!(Arc::ptr_eq(&v.chunks[1], &frozen.chunks[1]));
    assert!(!Arc::ptr_eq(&v.chunks[0], &frozen.chunks[0]));
}

#[test]
fn a_push_after_a_clone_copies_only_the_last_chunk() {
    let mut v: ChunkedVec<u32> = (0..2 * CHUNK as u32 + 3).collect();
    let frozen = v.clone();
    v.push(99);
    assert!(Arc::ptr_eq(&v.chunks[0], &frozen.chunks[0]));
    assert!(!Arc::ptr_eq(&v.chunks[2], &frozen.chunks[2]));
    assert_eq!((v.len(), frozen.len()), (2 * CHUNK + 4, 2 * CHUNK + 3));
    assert_eq!(frozen.chunks[2].len(), 3, "the frozen chunk did not grow");
    assert_eq!(v.last(), Some(&99));
    v.push(100);
    assert_eq!(Arc::strong_count(&v.chunks[2]), 1, "written again in place");
}
