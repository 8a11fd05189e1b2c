//! `ChunkedVec<T>`: a copy-on-write vector in shared chunks, so a clone of the state costs O(chunks), not O(items).
//!
//! Items live in chunks of about [`CHUNK_BYTES`] behind `Arc`s; every chunk but the last is full, so item `i` is
//! in chunk `i / per_chunk`. A clone copies only the chunk pointers; the first write to a chunk still shared with a clone (a
//! frozen snapshot) copies that one chunk (`Arc::make_mut`). Logically it is a `Vec<T>`: it indexes, iterates,
//! compares and debug-prints like one, and its serde encoding is exactly `Vec<T>`'s (a sequence), so snapshots are
//! byte-identical to those of the `Vec` it replaces.

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use std::fmt;
use std::ops::{Index, IndexMut};
use std::sync::Arc;

/// Bytes of items per chunk: the first write to a chunk after a snapshot copies (clones) this much, and a million
/// items of 100 B need 12,000 chunk pointers (100 kB to copy when the state is frozen).
pub const CHUNK_BYTES: usize = 8192;

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

/// A `Vec<T>` in shared copy-on-write chunks (see the module docs).
#[derive(Clone)]
pub struct ChunkedVec<T> {
    chunks: Vec<Arc<Vec<T>>>,
    len: usize,
}

impl<T> Default for ChunkedVec<T> {
    fn default() -> Self {
        ChunkedVec {
            chunks: Vec::new(),
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
        (i < self.len).then(|| &self.chunks[i / Self::CHUNK][i % Self::CHUNK])
    }

    /// Item `i`, mutably (copies its chunk if a clone shares it).
    #[inline(always)]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len {
            return None;
        }
        Some(&mut own(&mut self.chunks[i / Self::CHUNK])[i % Self::CHUNK])
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
        match self.chunks.last_mut() {
            Some(last) if last.len() < Self::CHUNK => own(last).push(item),
            _ => {
                let mut chunk = Vec::with_capacity(Self::CHUNK.min(self.len.max(4)));
                chunk.push(item);
                self.chunks.push(Arc::new(chunk));
            }
        }
        self.len += 1;
    }

    /// Removes and returns the last item.
    pub fn pop(&mut self) -> Option<T> {
        let last = self.chunks.last_mut()?;
        let item = Arc::make_mut(last).pop();
        if last.is_empty() {
            self.chunks.pop();
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
        self.chunks.clear();
        self.len = 0;
    }

    /// The items in order.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            inner: self
                .chunks
                .iter()
                .flat_map(chunk_items::<T> as fn(&Arc<Vec<T>>) -> std::slice::Iter<'_, T>),
            left: self.len,
        }
    }

    /// The items from position `start` on, in order (`vec[start..].iter()`, without walking the first ones).
    pub fn iter_from(&self, start: usize) -> Iter<'_, T> {
        let start = start.min(self.len);
        let skip_chunks = start / Self::CHUNK;
        let mut inner = self.chunks[skip_chunks..]
            .iter()
            .flat_map(chunk_items::<T> as fn(&Arc<Vec<T>>) -> std::slice::Iter<'_, T>);
        for _ in 0..start % Self::CHUNK {
            inner.next();
        }
        Iter {
            inner,
            left: self.len - start,
        }
    }

    /// The items in order, mutably: copies every chunk a clone shares (prefer [`ChunkedVec::update_where`]).
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut T> + '_ {
        self.chunks
            .iter_mut()
            .flat_map(|c| Arc::make_mut(c).iter_mut())
    }

    /// Calls `f` on every item `wants` selects, copying only the chunks holding one.
    pub fn update_where(&mut self, wants: impl Fn(&T) -> bool, mut f: impl FnMut(&mut T)) {
        for chunk in &mut self.chunks {
            if chunk.iter().any(&wants) {
                for item in Arc::make_mut(chunk).iter_mut().filter(|x| wants(x)) {
                    f(item);
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
            && self
                .chunks
                .iter()
                .zip(&other.chunks)
                .all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

/// `chunk`'s items, writable: `Arc::make_mut` with its rare copying path out of line, so that the write to
/// an unshared chunk inlines to a count check and `Arc::get_mut` (one atomic compare-exchange). No `Weak` to
/// a chunk ever exists, so a strong count of 1 under `&mut` means unshared.
#[inline(always)]
fn own<T: Clone>(chunk: &mut Arc<Vec<T>>) -> &mut Vec<T> {
    if Arc::strong_count(chunk) != 1 {
        unshare(chunk);
    }
    Arc::get_mut(chunk).expect("a chunk is unshared after unshare()")
}

/// Replaces `chunk`, shared with a clone, by a copy of its own: the rare first write to a chunk after a
/// snapshot.
#[cold]
#[inline(never)]
fn unshare<T: Clone>(chunk: &mut Arc<Vec<T>>) {
    *chunk = Arc::new(Vec::clone(chunk));
}

/// How [`Iter`] walks into a chunk.
type ChunkItems<'a, T> = fn(&'a Arc<Vec<T>>) -> std::slice::Iter<'a, T>;

fn chunk_items<T>(chunk: &Arc<Vec<T>>) -> std::slice::Iter<'_, T> {
    chunk.iter()
}

/// An iterator over a [`ChunkedVec`]'s items, with an exact length.
#[derive(Clone)]
pub struct Iter<'a, T> {
    inner: std::iter::FlatMap<
        std::slice::Iter<'a, Arc<Vec<T>>>,
        std::slice::Iter<'a, T>,
        ChunkItems<'a, T>,
    >,
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
        if len <= Self::CHUNK {
            let chunks = if len == 0 {
                Vec::new()
            } else {
                vec![Arc::new(items)]
            };
            return ChunkedVec { chunks, len };
        }
        let mut chunks = Vec::with_capacity(len.div_ceil(Self::CHUNK));
        let mut items = items.into_iter();
        loop {
            let chunk: Vec<T> = items.by_ref().take(Self::CHUNK).collect();
            if chunk.is_empty() {
                break;
            }
            chunks.push(Arc::new(chunk));
        }
        ChunkedVec { chunks, len }
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
