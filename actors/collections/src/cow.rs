//! `CowMap<K, V>`: a persistent ordered map (an `imbl::OrdMap` of `Arc`ed values), so a clone of the state is O(1)
//! and a write after it copies O(log n) tree nodes and the one value it changes.
//!
//! Logically it is the `BTreeMap<K, V>` it replaces: it iterates in key order, compares and debug-prints by content,
//! and its serde encoding is exactly `BTreeMap`'s (a map of its length, then the entries in key order), so
//! snapshots are byte-identical. Values sit behind `Arc`s so that copying a tree node on write clones pointers,
//! not values; `get_mut` clones a value only if a clone of the map (a frozen snapshot) still shares it.

use imbl::OrdMap;
use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Index, RangeBounds};
use std::sync::Arc;

/// An ordered map with O(1) clones (see the module docs).
#[derive(Clone)]
pub struct CowMap<K, V>(OrdMap<K, Arc<V>>);

impl<K, V> Default for CowMap<K, V> {
    fn default() -> Self {
        CowMap(OrdMap::default())
    }
}

impl<K: Ord + Clone, V: Clone> CowMap<K, V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value of `key`.
    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.0.get(key).map(|v| &**v)
    }

    /// The value of `key`, mutably (cloned first if a clone of the map shares it).
    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        self.0.get_mut(key).map(own)
    }

    /// Has `key`.
    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.0.contains_key(key)
    }

    /// Sets `key` to `value`; returns the value it had.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        self.0
            .insert(key, Arc::new(value))
            .map(Arc::unwrap_or_clone)
    }

    /// Removes `key`; returns the value it had.
    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.0.remove(key).map(Arc::unwrap_or_clone)
    }

    /// The value of `key`, inserted from `make` if absent (`BTreeMap::entry(key).or_insert_with(make)`).
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        own(self.0.entry(key).or_insert_with(|| Arc::new(make())))
    }

    /// The entries in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + '_ {
        self.0.iter().map(|(k, v)| (k, &**v))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + '_ {
        self.0.keys()
    }

    /// The values in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + '_ {
        self.0.values().map(|v| &**v)
    }

    /// The entries whose keys are in `range`, in order.
    pub fn range<Q, R>(&self, range: R) -> impl DoubleEndedIterator<Item = (&K, &V)> + '_
    where
        R: RangeBounds<Q>,
        Q: Ord + ?Sized,
        K: Borrow<Q>,
    {
        self.0.range(range).map(|(k, v)| (k, &**v))
    }

    /// The entry with the smallest key.
    pub fn first_key_value(&self) -> Option<(&K, &V)> {
        self.0.get_min().map(|(k, v)| (k, &**v))
    }

    /// The entry with the largest key.
    pub fn last_key_value(&self) -> Option<(&K, &V)> {
        self.0.get_max().map(|(k, v)| (k, &**v))
    }

    /// Keeps only the entries `keep` selects.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &V) -> bool) {
        let gone: Vec<K> = self
            .iter()
            .filter(|(k, v)| !keep(k, v))
            .map(|(k, _)| k.clone())
            .collect();
        for k in gone {
            self.0.remove(&k);
        }
    }

    /// Shares its whole tree with `other` (a clone of it, unchanged since).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        self.0.ptr_eq(&other.0)
    }
}

/// `shared`, writable: `Arc::make_mut` with its rare copying path out of line, so that the write to an unshared
/// value inlines to a count check and `Arc::get_mut` (one atomic compare-exchange). For the copy-on-write
/// containers here (`CowMap`'s values, `ChunkedVec`'s groups and chunks), which never hand out a `Weak`, so a
/// strong count of 1 under `&mut` means unshared.
#[inline(always)]
pub fn own<V: Clone>(shared: &mut Arc<V>) -> &mut V {
    if Arc::strong_count(shared) != 1 {
        unshare(shared);
    }
    Arc::get_mut(shared).expect("unshared after unshare()")
}

/// Replaces `shared`, shared with a clone, by a copy of its own: the rare first write after a snapshot.
#[cold]
#[inline(never)]
fn unshare<V: Clone>(shared: &mut Arc<V>) {
    *shared = Arc::new(V::clone(shared));
}

impl<'a, K: Ord + Clone, V: Clone> IntoIterator for &'a CowMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Box<dyn DoubleEndedIterator<Item = (&'a K, &'a V)> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl<K: Ord + Clone, V: Clone, Q: Ord + ?Sized> Index<&Q> for CowMap<K, V>
where
    K: Borrow<Q>,
{
    type Output = V;
    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("key in CowMap")
    }
}

impl<K: Ord + Clone, V: Clone> FromIterator<(K, V)> for CowMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        CowMap(iter.into_iter().map(|(k, v)| (k, Arc::new(v))).collect())
    }
}

impl<K: Ord + Clone, V: Clone> From<BTreeMap<K, V>> for CowMap<K, V> {
    fn from(map: BTreeMap<K, V>) -> Self {
        map.into_iter().collect()
    }
}

impl<K: Ord + Clone, V: Clone + PartialEq> PartialEq for CowMap<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<K: Ord + Clone, V: Clone + Eq> Eq for CowMap<K, V> {}

impl<K: Ord + Clone + fmt::Debug, V: Clone + fmt::Debug> fmt::Debug for CowMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Ord + Clone + Serialize, V: Clone + Serialize> Serialize for CowMap<K, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, K, V> Deserialize<'de> for CowMap<K, V>
where
    K: Ord + Clone + Deserialize<'de>,
    V: Clone + Deserialize<'de>,
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        BTreeMap::<K, V>::deserialize(deserializer).map(CowMap::from)
    }
}

#[cfg(test)]
#[path = "cow_test.rs"]
mod tests;
