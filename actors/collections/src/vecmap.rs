//! `VecMap` and `VecSet`: small sorted maps and sets for per-node state, encoded exactly like `BTreeMap`/`BTreeSet`.
//!
//! A node holds a handful of consumers, resources, versions and deployments. A `BTreeMap` spends one heap node of
//! eleven slots (hundreds of bytes, several cache lines) on each. These keep their first entry, and by default a
//! second (see [`Pair`]), inline (no heap block at all: a node's versions and deployments live inside its state)
//! and spill to a sorted `Vec` beyond, so a node's state stays within a few adjacent cache lines and a report
//! allocates nothing. Entries stay in key order: iteration, `Debug`, equality and the serde encoding (a map, or a
//! sequence for the set) are exactly the `BTreeMap`/`BTreeSet` ones, so snapshots are byte-identical and
//! deterministic. Lookups are binary searches.

use crate::inline::{Pair, Store};
use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;
/// A map kept as a `Vec` of entries sorted by key, keys unique (see the module docs).
#[derive(Clone)]
pub struct VecMap<K, V, P = [(K, V); 2]>(Store<(K, V), P>);

impl<K: PartialEq, V: PartialEq, P: Pair<(K, V)>> PartialEq for VecMap<K, V, P> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<K: Eq, V: Eq, P: Pair<(K, V)>> Eq for VecMap<K, V, P> {}

impl<K, V, P> Default for VecMap<K, V, P> {
    fn default() -> Self {
        VecMap(Store::Empty)
    }
}

impl<K: Ord, V, P: Pair<(K, V)>> VecMap<K, V, P> {
    /// An empty map (allocates nothing).
    pub const fn new() -> Self {
        VecMap(Store::Empty)
    }

    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.0
            .as_slice()
            .binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    /// The value at `key`.
    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &self.0.as_slice()[i].1)
    }

    /// The value at `key`, mutably.
    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &mut self.0.as_mut_slice()[i].1)
    }

    /// Has `key`.
    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(key).is_ok()
    }

    /// Sets `key` to `value`, returning the previous value.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.0.as_mut_slice()[i].1, value)),
            Err(i) => {
                self.0.insert(i, (key, value));
                None
            }
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| self.0.remove(i).1)
    }

    /// The value at `key`, inserted with `make()` if missing (`BTreeMap::entry(key).or_insert_with(make)`).
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.0.insert(i, (key, make()));
                i
            }
        };
        &mut self.0.as_mut_slice()[i].1
    }

    /// The value at `key`, inserted as `V::default()` if missing (`BTreeMap::entry(key).or_default()`).
    pub fn get_or_default(&mut self, key: K) -> &mut V
    where
        V: Default,
    {
        self.get_or_insert_with(key, V::default)
    }

    /// Keeps the entries for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.0.retain(|(k, v)| keep(k, v));
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.0 = Store::Empty;
    }

    /// Makes the map hold exactly `entries` (in strictly increasing key order, as a `BTreeMap` yields them),
    /// without a temporary allocation when they fit inline.
    pub fn assign_sorted(&mut self, entries: impl IntoIterator<Item = (K, V)>) {
        self.0 = Store::Empty;
        for (k, v) in entries {
            let n = self.len();
            assert!(
                self.0.as_slice().last().is_none_or(|(last, _)| *last < k),
                "assign_sorted: keys out of order"
            );
            self.0.insert(n, (k, v));
        }
    }
}

impl<K, V, P: Pair<(K, V)>> VecMap<K, V, P> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.as_slice().len()
    }

    /// True when the map holds no entries.
    pub fn is_empty(&self) -> bool {
        self.0.as_slice().is_empty()
    }

    /// Entries in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + ExactSizeIterator + '_ {
        self.0.as_slice().iter().map(|(k, v)| (k, v))
    }

    /// Entries in key order, values mutable.
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (&K, &mut V)> + '_ {
        self.0.as_mut_slice().iter_mut().map(|(k, v)| (&*k, v))
    }

    /// Keys in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator + '_ {
        self.0.as_slice().iter().map(|(k, _)| k)
    }

    /// Values in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator + '_ {
        self.0.as_slice().iter().map(|(_, v)| v)
    }

    /// The entry with the smallest key.
    pub fn first_key_value(&self) -> Option<(&K, &V)> {
        self.0.as_slice().first().map(|(k, v)| (k, v))
    }
}

impl<'a, K, V, P: Pair<(K, V)>> IntoIterator for &'a VecMap<K, V, P> {
    type Item = (&'a K, &'a V);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.as_slice().iter().map(|(k, v)| (k, v))
    }
}

impl<K, V, P: Pair<(K, V)>> IntoIterator for VecMap<K, V, P> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_vec().into_iter()
    }
}

impl<K: Ord, V, P: Pair<(K, V)>> From<BTreeMap<K, V>> for VecMap<K, V, P> {
    fn from(map: BTreeMap<K, V>) -> Self {
        let mut m = VecMap::new();
        m.assign_sorted(map);
        m
    }
}

impl<K: Ord, V, P: Pair<(K, V)>> From<VecMap<K, V, P>> for BTreeMap<K, V> {
    fn from(map: VecMap<K, V, P>) -> Self {
        map.0.into_vec().into_iter().collect()
    }
}

impl<K: Ord, V, P: Pair<(K, V)>, const N: usize> From<[(K, V); N]> for VecMap<K, V, P> {
    fn from(entries: [(K, V); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl<K: Ord, V, P: Pair<(K, V)>> FromIterator<(K, V)> for VecMap<K, V, P> {
    /// Like `BTreeMap`: a later duplicate key replaces the earlier value.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut entries: Vec<(K, V)> = iter.into_iter().collect();
        if entries.windows(2).all(|w| w[0].0 < w[1].0) {
            return VecMap(Store::from_vec(entries));
        }
        // Stable sort keeps duplicates in arrival order; keep the last of each run.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(K, V)> = Vec::with_capacity(entries.len());
        for e in entries {
            match out.last_mut() {
                Some(last) if last.0 == e.0 => *last = e,
                _ => out.push(e),
            }
        }
        VecMap(Store::from_vec(out))
    }
}

impl<K: fmt::Debug, V: fmt::Debug, P: Pair<(K, V)>> fmt::Debug for VecMap<K, V, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Serialize, V: Serialize, P: Pair<(K, V)>> Serialize for VecMap<K, V, P> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de, K: Ord + Deserialize<'de>, V: Deserialize<'de>, P: Pair<(K, V)>> Deserialize<'de>
    for VecMap<K, V, P>
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        BTreeMap::<K, V>::deserialize(deserializer).map(VecMap::from)
    }
}

#[cfg(test)]
#[path = "vecmap_test.rs"]
mod tests;
