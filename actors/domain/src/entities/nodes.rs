//! `NodeTable`: the replicated node states, ordered by id, with an O(1) id lookup for the report hot path.
//!
//! Logically (serde, `PartialEq`, `Debug`, `iter`) it is exactly the `BTreeMap<String, NodeState>` it replaced:
//! it encodes as a map in id order, so snapshots are byte-identical. Internally each state lives beside its id
//! in a vector by slot (insertion order; a lookup compares the id and then uses the state, which share cache
//! lines), `order` maps ids to slots in id order, and `index` is an
//! open-addressing hash table from id to slot (randomly keyed SipHash, so agents cannot force collisions), used
//! only for lookups and never iterated. Slot numbers are an internal detail: they are never serialized or
//! exposed, so a state restored from a snapshot (slots in id order) behaves identically to the original.
//!
//! Every part is copy-on-write ([`ChunkedVec`] chunks, a persistent `imbl::OrdMap`, one `Arc` for the index), so
//! a clone (the frozen state a snapshot is written from) costs one pointer per group of chunks and a write after it
//! copies one group and one chunk of each part it touches, not the table. The index is the exception: it is one shared block, so that a probe is a
//! single load from it, and the first node added or removed after a clone copies it whole (4 bytes an entry,
//! 4 to 8 MB at 1M nodes, about a millisecond) — once per snapshot, while reports, which never add a node after
//! the first, never copy it.

use crate::entities::model::NodeState;
use crate::values::ids::DeploymentId;
use convoy_collections::ChunkedVec;
use imbl::OrdMap;
use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::collections::hash_map::RandomState;
use std::collections::BTreeMap;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

const EMPTY: u32 = u32::MAX;

/// A node's id and state, side by side.
#[derive(Clone)]
struct Slot {
    id: Box<str>,
    state: NodeState,
}

/// Node states by id (see the module docs).
#[derive(Clone)]
pub(crate) struct NodeTable {
    /// Ids and states by slot.
    slots: ChunkedVec<Slot>,
    /// Ids in id order, with their slot.
    order: OrdMap<String, u32>,
    /// Open addressing, linear probing, at most 3/4 full: `tag << bits | slot` (`bits` = log2 of the length, the
    /// tag is high hash bits that spare most name comparisons), or `EMPTY`. Four bytes an entry keep it small
    /// enough to stay cached between reports. Never iterated. One block behind one `Arc` (see the module docs).
    index: Arc<[u32]>,
    hasher: RandomState,
}

impl Default for NodeTable {
    fn default() -> Self {
        NodeTable {
            slots: ChunkedVec::new(),
            order: OrdMap::new(),
            index: Arc::from([]),
            hasher: RandomState::new(),
        }
    }
}

impl NodeTable {
    /// The index, writable: copied first if a clone (a frozen snapshot) shares it.
    fn index_mut(&mut self) -> &mut [u32] {
        Arc::make_mut(&mut self.index)
    }

    /// `id`'s keyed hash: SipHash-1-3 of its bytes in one `write` (`hash_one(id)` adds a second call for a
    /// terminator byte, which only a hash of several fields needs).
    fn hash(&self, id: &str) -> u64 {
        let mut h = self.hasher.build_hasher();
        h.write(id.as_bytes());
        h.finish()
    }

    fn name(&self, slot: u32) -> &str {
        &self.slots[slot as usize].id
    }

    /// Where `id`'s entry is in the index and its slot, or where to insert it and the entry's tag part.
    fn find(&self, id: &str) -> Result<(usize, u32), (usize, u32)> {
        let hash = self.hash(id);
        if self.index.is_empty() {
            return Err((0, 0));
        }
        let bits = self.index.len().trailing_zeros();
        let slot_mask = (1u32 << bits) - 1;
        let tag = ((hash >> 32) as u32 >> bits) << bits;
        let mask = self.index.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let e = self.index[i];
            if e == EMPTY {
                return Err((i, tag));
            }
            if e & !slot_mask == tag && self.name(e & slot_mask) == id {
                return Ok((i, e & slot_mask));
            }
            i = (i + 1) & mask;
        }
    }

    /// The slot of `id`, or where to insert it and the entry's tag part.
    fn probe(&self, id: &str) -> Result<u32, (usize, u32)> {
        self.find(id).map(|(_, slot)| slot)
    }

    /// The node `id`'s state.
    pub(crate) fn get<Q: AsRef<str> + ?Sized>(&self, id: &Q) -> Option<&NodeState> {
        let id = id.as_ref();
        let slot = self.probe(id).ok()?;
        Some(&self.slots[slot as usize].state)
    }

    /// The node `id`'s state, mutably.
    pub(crate) fn get_mut<Q: AsRef<str> + ?Sized>(&mut self, id: &Q) -> Option<&mut NodeState> {
        let id = id.as_ref();
        let slot = self.probe(id).ok()?;
        Some(&mut self.slots[slot as usize].state)
    }

    /// Knows node `id`.
    pub(crate) fn contains_key<Q: AsRef<str> + ?Sized>(&self, id: &Q) -> bool {
        let id = id.as_ref();
        self.probe(id).is_ok()
    }

    /// The node `id`'s state, created with defaults if unknown (`BTreeMap::entry(id).or_default()`).
    pub(crate) fn get_or_default(&mut self, id: String) -> &mut NodeState {
        let slot = match self.probe(&id) {
            Ok(slot) => slot,
            Err(_) => self.insert(id, NodeState::default()),
        };
        &mut self.slots[slot as usize].state
    }

    fn insert(&mut self, id: String, state: NodeState) -> u32 {
        let slot = u32::try_from(self.slots.len()).expect("fewer than 2^32 nodes");
        if (self.slots.len() + 1) * 4 > self.index.len() * 3 {
            self.grow();
        }
        self.slots.push(Slot {
            id: id.as_str().into(),
            state,
        });
        let (i, tag) = self.probe(&id).expect_err("new id");
        self.index_mut()[i] = tag | slot;
        self.order.insert(id, slot);
        slot
    }

    /// Doubles the index (load factor stays at most 3/4, so a slot never reaches `EMPTY`'s bit pattern).
    fn grow(&mut self) {
        let len = (self.index.len() * 2).max(16);
        assert!(len <= 1 << 31, "fewer than 2^31 index entries");
        self.index = vec![EMPTY; len].into();
        for slot in 0..self.slots.len() as u32 {
            let (i, tag) = self.probe(self.name(slot)).expect_err("ids are unique");
            self.index_mut()[i] = tag | slot;
        }
    }

    /// Forgets node `id`; returns its state. The last slot moves into its slot (slots stay dense) and its index
    /// entry is deleted by backward shifting, so no tombstone slows later lookups.
    pub(crate) fn remove(&mut self, id: &str) -> Option<NodeState> {
        let (pos, slot) = self.find(id).ok()?;
        self.delete_entry(pos);
        self.order.remove(id);
        let last = (self.slots.len() - 1) as u32;
        if slot != last {
            let moved = self.name(last).to_string();
            let (moved_pos, _) = self.find(&moved).expect("the last slot is indexed");
            let bits = self.index.len().trailing_zeros();
            let index = self.index_mut();
            index[moved_pos] = (index[moved_pos] >> bits << bits) | slot;
            self.order.insert(moved, slot);
        }
        Some(self.slots.swap_remove(slot as usize).state)
    }

    /// Empties index entry `pos` and shifts back the entries of its probe run that may move into the gap.
    fn delete_entry(&mut self, mut pos: usize) {
        let mask = self.index.len() - 1;
        let slot_mask = (1u32 << self.index.len().trailing_zeros()) - 1;
        self.index_mut()[pos] = EMPTY;
        let mut j = pos;
        loop {
            j = (j + 1) & mask;
            let e = self.index[j];
            if e == EMPTY {
                return;
            }
            let home = self.hash(self.name(e & slot_mask)) as usize & mask;
            // The entry at `j` may move to `pos` unless its home lies cyclically in (pos, j].
            let stays = if pos <= j {
                pos < home && home <= j
            } else {
                pos < home || home <= j
            };
            if !stays {
                let index = self.index_mut();
                index[pos] = e;
                index[j] = EMPTY;
                pos = j;
            }
        }
    }

    /// Removes deployment `id` from the deployments of its `nodes`. When they are a large share of the table,
    /// one sequential pass over every slot (only the deployment's nodes hold `id`) beats a random lookup each.
    pub(crate) fn leave_deployment<'a>(
        &mut self,
        id: DeploymentId,
        nodes: impl ExactSizeIterator<Item = &'a str>,
    ) {
        if nodes.len() * 4 >= self.slots.len() {
            self.slots.update_where(
                |s| s.state.deployments.contains_key(&id),
                |s| {
                    s.state.deployments.remove(&id);
                },
            );
        } else {
            for n in nodes {
                if let Some(ns) = self.get_mut(n) {
                    ns.deployments.remove(&id);
                }
            }
        }
    }

    /// Number of nodes.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// All nodes in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&String, &NodeState)> + '_ {
        self.order
            .iter()
            .map(|(id, &s)| (id, &self.slots[s as usize].state))
    }

    /// Shares every part with `other` (a clone of it, unchanged since).
    #[cfg(test)]
    pub(crate) fn shares_all_with(&self, other: &Self) -> bool {
        self.slots.shares_all_chunks_with(&other.slots)
            && Arc::ptr_eq(&self.index, &other.index)
            && self.order.ptr_eq(&other.order)
    }
}

impl PartialEq for NodeTable {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl fmt::Debug for NodeTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for NodeTable {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (id, state) in self.iter() {
            map.serialize_entry(id, state)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for NodeTable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, NodeState>::deserialize(deserializer)?;
        Ok(map.into_iter().collect())
    }
}

impl FromIterator<(String, NodeState)> for NodeTable {
    fn from_iter<I: IntoIterator<Item = (String, NodeState)>>(iter: I) -> Self {
        let mut t = NodeTable::default();
        for (id, state) in iter {
            match t.probe(&id) {
                Ok(s) => t.slots[s as usize].state = state,
                Err(_) => {
                    t.insert(id, state);
                }
            }
        }
        t
    }
}

#[cfg(test)]
#[path = "nodes_test.rs"]
mod nodes_test;

#[cfg(test)]
mod tests {
    use super::*;

    fn state(active: bool) -> NodeState {
        NodeState {
            active,
            ..NodeState::default()
        }
    }

    #[test]
    fn behaves_like_an_ordered_map() {
        let mut t = NodeTable::default();
        t.get_or_default("b".into()).active = true;
        t.get_or_default("a".into());
        t.get_or_default("b".into()).consumers.insert("c".into());
        assert_eq!(t.len(), 2);
        assert!(t.contains_key("a") && !t.contains_key("z"));
        assert!(t.get("b").unwrap().active);
        t.get_mut("a").unwrap().active = true;
        let ids: Vec<&String> = t.iter().map(|(id, _)| id).collect();
        assert_eq!(ids, ["a", "b"]);
    }

    #[test]
    fn finds_every_id_across_index_growth() {
        let mut t = NodeTable::default();
        for i in 0..5000u32 {
            t.get_or_default(format!("n-{}", i * 7919 % 5000)).active = i % 2 == 0;
            assert_eq!(t.len(), i as usize + 1);
        }
        for i in 0..5000u32 {
            let id = format!("n-{}", i * 7919 % 5000);
            assert_eq!(t.get(&id).map(|n| n.active), Some(i % 2 == 0), "{id}");
        }
        assert!(!t.contains_key("n-5000") && !t.contains_key(""));
        assert!(t.iter().map(|(id, _)| id).is_sorted());
    }

    #[test]
    fn encodes_like_a_btreemap_and_compares_by_content() {
        let map = BTreeMap::from([("y".to_string(), state(true)), ("x".into(), state(false))]);
        let mut t = NodeTable::default();
        *t.get_or_default("y".into()) = state(true);
        *t.get_or_default("x".into()) = state(false);
        let cfg = bincode::config::standard();
        let a = bincode::serde::encode_to_vec(&t, cfg).unwrap();
        assert_eq!(a, bincode::serde::encode_to_vec(&map, cfg).unwrap());
        let (back, _): (NodeTable, _) = bincode::serde::decode_from_slice(&a, cfg).unwrap();
        assert_eq!(back, t, "slot order differs, content is equal");
        assert_eq!(format!("{back:?}"), format!("{map:?}"));
        assert_eq!(back.get("x"), Some(&state(false)));
    }
}
