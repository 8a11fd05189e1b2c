//! `VecSet`: a small sorted set, encoded exactly like `BTreeSet` (see `vecmap` for why and how).

use crate::inline::{Pair, Store};
use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use std::borrow::Borrow;
use std::collections::BTreeSet;
use std::fmt;
/// A set kept as a sorted `Vec` of unique items (see the module docs).
#[derive(Clone)]
pub struct VecSet<T, P = [T; 2]>(Store<T, P>);

impl<T: PartialEq, P: Pair<T>> PartialEq for VecSet<T, P> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<T: Eq, P: Pair<T>> Eq for VecSet<T, P> {}

impl<T, P> Default for VecSet<T, P> {
    fn default() -> Self {
        VecSet(Store::Empty)
    }
}

impl<T: Ord, P: Pair<T>> VecSet<T, P> {
    /// An empty set (allocates nothing).
    pub const fn new() -> Self {
        VecSet(Store::Empty)
    }

    fn find<Q: Ord + ?Sized>(&self, item: &Q) -> Result<usize, usize>
    where
        T: Borrow<Q>,
    {
        self.0.as_slice().binary_search_by(|x| x.borrow().cmp(item))
    }

    /// Holds `item`.
    pub fn contains<Q: Ord + ?Sized>(&self, item: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        self.find(item).is_ok()
    }

    /// Adds `item`; false if it was there.
    pub fn insert(&mut self, item: T) -> bool {
        match self.find(&item) {
            Ok(_) => false,
            Err(i) => {
                self.0.insert(i, item);
                true
            }
        }
    }

    /// Removes `item`; false if it was not there.
    pub fn remove<Q: Ord + ?Sized>(&mut self, item: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        match self.find(item) {
            Ok(i) => {
                self.0.remove(i);
                true
            }
            Err(_) => false,
        }
    }
}

impl<T, P: Pair<T>> VecSet<T, P> {
    /// Number of items.
    pub fn len(&self) -> usize {
        self.0.as_slice().len()
    }

    /// True when the set holds no items.
    pub fn is_empty(&self) -> bool {
        self.0.as_slice().is_empty()
    }

    /// The smallest item.
    pub fn first(&self) -> Option<&T> {
        self.0.as_slice().first()
    }

    /// Items in order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.0.as_slice().iter()
    }
}

impl<'a, T, P: Pair<T>> IntoIterator for &'a VecSet<T, P> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.as_slice().iter()
    }
}

impl<T: Ord, P: Pair<T>> FromIterator<T> for VecSet<T, P> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut items: Vec<T> = iter.into_iter().collect();
        items.sort();
        items.dedup();
        VecSet(Store::from_vec(items))
    }
}

impl<T: Ord, P: Pair<T>> From<BTreeSet<T>> for VecSet<T, P> {
    fn from(set: BTreeSet<T>) -> Self {
        VecSet(Store::from_vec(set.into_iter().collect()))
    }
}

impl<T: fmt::Debug, P: Pair<T>> fmt::Debug for VecSet<T, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<T: Serialize, P: Pair<T>> Serialize for VecSet<T, P> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de, T: Ord + Deserialize<'de>, P: Pair<T>> Deserialize<'de> for VecSet<T, P> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        BTreeSet::<T>::deserialize(deserializer).map(VecSet::from)
    }
}
