//! `ChunkedVec<T>`: a copy-on-write vector in shared chunks, so a clone of the state costs O(groups), not O(items).
//!
//! Items live in chunks of about [`CHUNK_BYTES`] behind `Arc`s, and the chunks in groups of [`GROUP`] chunk
//! pointers behind `Arc`s too; every chunk but the last is full and every group but the last holds [`GROUP`]
//! chunks, so item `i` is in chunk `i / per_chunk`, and that chunk in group `chunk / GROUP`. A clone copies only
//! the group pointers (about 120 for a million node states). The first write to a group still shared with a
//! clone (a frozen snapshot) copies that group's chunk pointers, and the first write to a chunk copies that one
//! chunk (both `Arc::make_mut`). Logically it is a `Vec<T>`: it indexes, iterates, compares and debug-prints like
//! one, and its serde encoding is exactly `Vec<T>`'s (a sequence), so snapshots are byte-identical to those of
//! the `Vec` it replaces.

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use std::fmt;
use std::iter::{Chain, FlatMap};
use std::ops::{Index, IndexMut};
use std::slice;
use std::sync::Arc;

use crate::cow::own;

/// Bytes of items per chunk: the first write to a chunk after a snapshot copies (clones) this much.
pub const CHUNK_BYTES: usize = 8192;

/// Chunks per group. A freeze clones one pointer per group, and the first write to a group after it copies
/// this many chunk pointers: 128 keeps both near a microsecond-scale cost at a million items (about 120 groups
/// of 128 pointers). Tests use 4, so that a few thousand items already span many groups.
pub const GROUP: usize = if cfg!(test) { 4 } else { 128 };

/// Items per chunk for `T`: [`CHUNK_BYTES`] of them, a power of two between 16 and 4096.
const fn per_chunk<T>() -> usize {
    let size = if std::mem::size_of::<T>() == 0 {
        1
    } else {
        std::mem::size_of::<T>()
    };
    let n = (CHUNK_BYTES / size).next_power_of_two();
    if n < 16 {
        16
    } else if n > 4096 {
        4096
    } else {
        n
    }
}

/// A run of items, shared between clones until one writes to it.
type Chunk<T> = Arc<Vec<T>>;
/// Up to [`GROUP`] chunk pointers, shared between clones until one writes to a chunk in it.
type Group<T> = Arc<Vec<Chunk<T>>>;

/// A `Vec<T>` in shared copy-on-write chunks (see the module docs).
#[derive(Clone)]
pub struct ChunkedVec<T> {
    groups: Vec<Group<T>>,
    len: usize,
}

impl<T> Default for ChunkedVec<T> {
    fn default() -> Self {
        ChunkedVec {
            groups: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Clone> ChunkedVec<T> {
    /// Items per chunk.
    pub const CHUNK: usize = per_chunk::<T>();

    /// An empty vector.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No items.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Item `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        let c = i / Self::CHUNK;
        Some(&self.groups[c / GROUP][c % GROUP][i % Self::CHUNK])
    }

    /// Item `i`, mutably (copies its group and chunk if a clone shares them).
    #[inline(always)]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len {
            return None;
        }
        let c = i / Self::CHUNK;
        let group = own(&mut self.groups[c / GROUP]);
        Some(&mut own(&mut group[c % GROUP])[i % Self::CHUNK])
    }

    /// The first item.
    pub fn first(&self) -> Option<&T> {
        self.get(0)
    }

    /// The last item.
    pub fn last(&self) -> Option<&T> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    /// Appends `item`.
    pub fn push(&mut self, item: T) {
        let (chunks, in_last_chunk) = (self.len / Self::CHUNK, self.len % Self::CHUNK);
        if in_last_chunk == 0 {
            // The last chunk is full (or there is none): start a chunk, and a group if the last one is full.
            let in_last_group = chunks % GROUP;
            if in_last_group == 0 {
                self.groups
                    .push(Arc::new(Vec::with_capacity(GROUP.min(chunks.max(1)))));
            }
            let capacity = Self::CHUNK.min(self.len.max(4));
            self.last_group()
                .push(Arc::new(Vec::with_capacity(capacity)));
        }
        let chunk = self.last_group().last_mut().expect("a group has a chunk");
        own(chunk).push(item);
        self.len += 1;
    }

    /// The last group, writable (copied first if a clone shares it). Panics when there is none.
    fn last_group(&mut self) -> &mut Vec<Chunk<T>> {
        own(self.groups.last_mut().expect("not empty"))
    }

    /// Removes and returns the last item.
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let group = self.last_group();
        let chunk = group.last_mut().expect("a group has a chunk");
        let item = own(chunk).pop();
        if chunk.is_empty() {
            group.pop();
            if group.is_empty() {
                self.groups.pop();
            }
        }
        self.len -= 1;
        item
    }

    /// Removes item `i`, replacing it with the last item (`Vec::swap_remove`).
    pub fn swap_remove(&mut self, i: usize) -> T {
        assert!(
            i < self.len,
            "swap_remove index {i} out of bounds {}",
            self.len
        );
        let last = self.pop().expect("not empty");
        if i == self.len {
            return last;
        }
        std::mem::replace(&mut self[i], last)
    }

    /// Removes every item.
    pub fn clear(&mut self) {
        self.groups.clear();
        self.len = 0;
    }

    /// The items in order.
    pub fn iter(&self) -> Iter<'_, T> {
        self.iter_from(0)
    }

    /// The items from position `start` on, in order (`vec[start..].iter()`, without walking the first ones).
    pub fn iter_from(&self, start: usize) -> Iter<'_, T> {
        let start = start.min(self.len);
        let c = start / Self::CHUNK;
        let (g, in_group) = (c / GROUP, c % GROUP);
        // The rest of `start`'s group, then the groups after it.
        let first: &[Chunk<T>] = self.groups.get(g).map_or(&[], |group| &group[in_group..]);
        let rest = self.groups.get(g + 1..).unwrap_or(&[]);
        let chunks = first.iter().chain(
            rest.iter()
                .flat_map(group_chunks::<T> as GroupChunks<'_, T>),
        );
        let mut inner = chunks.flat_map(chunk_items::<T> as ChunkItems<'_, T>);
        for _ in 0..start % Self::CHUNK {
            inner.next();
        }
        Iter {
            inner,
            left: self.len - start,
        }
    }

    /// The items in order, mutably: copies every group and chunk a clone shares (prefer
    /// [`ChunkedVec::update_where`]).
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut T> + '_ {
        self.groups
            .iter_mut()
            .flat_map(|g| own(g).iter_mut())
            .flat_map(|c| own(c).iter_mut())
    }

    /// Calls `f` on every item `wants` selects, copying only the groups and chunks holding one.
    pub fn update_where(&mut self, wants: impl Fn(&T) -> bool, mut f: impl FnMut(&mut T)) {
        for group in &mut self.groups {
            if !group.iter().any(|c| c.iter().any(&wants)) {
                continue;
            }
            for chunk in own(group) {
                if chunk.iter().any(&wants) {
                    for item in own(chunk).iter_mut().filter(|x| wants(x)) {
                        f(item);
                    }
                }
            }
        }
    }

    /// Keeps only the items `keep` selects, in order (rebuilds the chunks: O(len)).
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let keeps: Vec<bool> = self.iter().map(&mut keep).collect();
        if keeps.iter().all(|k| *k) {
            return;
        }
        let kept: Vec<T> = self
            .iter()
            .zip(keeps)
            .filter(|(_, k)| *k)
            .map(|(x, _)| x.clone())
            .collect();
        *self = kept.into();
    }

    /// The items as a `Vec`.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().cloned().collect()
    }

    /// Shares every chunk with `other` (both are clones of one vector, unchanged since).
    pub fn shares_all_chunks_with(&self, other: &Self) -> bool {
        self.len == other.len
            && self.groups.len() == other.groups.len()
            && self.groups.iter().zip(&other.groups).all(|(a, b)| {
                Arc::ptr_eq(a, b)
                    || (a.len() == b.len()
                        && a.iter().zip(b.iter()).all(|(x, y)| Arc::ptr_eq(x, y)))
            })
    }

    /// Chunk number `c` (tests look at what is shared).
    #[cfg(test)]
    fn chunk(&self, c: usize) -> &Chunk<T> {
        &self.groups[c / GROUP][c % GROUP]
    }
}

/// How [`Iter`] walks into a group.
type GroupChunks<'a, T> = fn(&'a Group<T>) -> slice::Iter<'a, Chunk<T>>;

fn group_chunks<T>(group: &Group<T>) -> slice::Iter<'_, Chunk<T>> {
    group.iter()
}

/// How [`Iter`] walks into a chunk.
type ChunkItems<'a, T> = fn(&'a Chunk<T>) -> slice::Iter<'a, T>;

fn chunk_items<T>(chunk: &Chunk<T>) -> slice::Iter<'_, T> {
    chunk.iter()
}

/// The chunks from some chunk on: the rest of its group, then every later group's.
type Chunks<'a, T> = Chain<
    slice::Iter<'a, Chunk<T>>,
    FlatMap<slice::Iter<'a, Group<T>>, slice::Iter<'a, Chunk<T>>, GroupChunks<'a, T>>,
>;

/// An iterator over a [`ChunkedVec`]'s items, with an exact length.
#[derive(Clone)]
pub struct Iter<'a, T> {
    inner: FlatMap<Chunks<'a, T>, slice::Iter<'a, T>, ChunkItems<'a, T>>,
    left: usize,
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;
    fn next(&mut self) -> Option<&'a T> {
        let item = self.inner.next()?;
        self.left -= 1;
        Some(item)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T> DoubleEndedIterator for Iter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let item = self.inner.next_back()?;
        self.left -= 1;
        Some(item)
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}

impl<'a, T: Clone> IntoIterator for &'a ChunkedVec<T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<T: Clone> Index<usize> for ChunkedVec<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        match self.get(i) {
            Some(item) => item,
            None => panic!("index {i} out of bounds {}", self.len),
        }
    }
}

impl<T: Clone> IndexMut<usize> for ChunkedVec<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        let len = self.len;
        match self.get_mut(i) {
            Some(item) => item,
            None => panic!("index {i} out of bounds {len}"),
        }
    }
}

impl<T: Clone> From<Vec<T>> for ChunkedVec<T> {
    fn from(items: Vec<T>) -> Self {
        let len = items.len();
        if len == 0 {
            return ChunkedVec::new();
        }
        if len <= Self::CHUNK {
            return ChunkedVec {
                groups: vec![Arc::new(vec![Arc::new(items)])],
                len,
            };
        }
        let chunk_count = len.div_ceil(Self::CHUNK);
        let mut groups = Vec::with_capacity(chunk_count.div_ceil(GROUP));
        let mut group = Vec::with_capacity(GROUP.min(chunk_count));
        let mut items = items.into_iter();
        loop {
            let chunk: Vec<T> = items.by_ref().take(Self::CHUNK).collect();
            if chunk.is_empty() {
                break;
            }
            group.push(Arc::new(chunk));
            if group.len() == GROUP {
                groups.push(Arc::new(std::mem::replace(
                    &mut group,
                    Vec::with_capacity(GROUP),
                )));
            }
        }
        if !group.is_empty() {
            groups.push(Arc::new(group));
        }
        ChunkedVec { groups, len }
    }
}

impl<T: Clone> FromIterator<T> for ChunkedVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut v = ChunkedVec::new();
        for item in iter {
            v.push(item);
        }
        v
    }
}

impl<T: Clone> Extend<T> for ChunkedVec<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for item in iter {
            self.push(item);
        }
    }
}

impl<T: Clone + PartialEq> PartialEq for ChunkedVec<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<T: Clone + Eq> Eq for ChunkedVec<T> {}

impl<T: Clone + PartialEq> PartialEq<Vec<T>> for ChunkedVec<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        self.len == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: Clone + fmt::Debug> fmt::Debug for ChunkedVec<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Clone + Serialize> Serialize for ChunkedVec<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de, T: Clone + Deserialize<'de>> Deserialize<'de> for ChunkedVec<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize(deserializer).map(ChunkedVec::from)
    }
}

#[cfg(test)]
#[path = "chunked_test.rs"]
mod tests;
