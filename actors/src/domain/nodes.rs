//! `NodeTable`: the replicated node states, ordered by id, with an O(1) id lookup for the report hot path.
//!
//! Logically (serde, `PartialEq`, `Debug`, `iter`) it is exactly the `BTreeMap<String, NodeState>` it replaced:
//! it encodes as a map in id order, so snapshots are byte-identical. Internally the states live in a `Vec` by
//! slot (insertion order), the ids in one string arena by slot, `order` maps ids to slots in id order, and
//! `index` is an open-addressing hash table from id to slot (randomly keyed SipHash, so agents cannot force
//! collisions), used only for lookups and never iterated. Slot numbers are an internal detail: they are never serialized
//! or exposed, so a state restored from a snapshot (slots in id order) behaves identically to the original.

use super::ids::DeploymentId;
use super::model::NodeState;
use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use std::collections::hash_map::RandomState;
use std::collections::BTreeMap;
use std::fmt;
use std::hash::BuildHasher;

const EMPTY: u32 = u32::MAX;

/// Node states by id (see the module docs).
#[derive(Clone, Default)]
pub(crate) struct NodeTable {
    /// States by slot.
    slots: Vec<NodeState>,
    /// Every id, concatenated in slot order; slot `s` is `names[ends[s-1]..ends[s]]`.
    names: String,
    ends: Vec<u32>,
    /// Ids in id order, with their slot.
    order: BTreeMap<String, u32>,
    /// Open addressing, linear probing, at most 3/4 full: `tag << bits | slot` (`bits` = log2 of the length, the
    /// tag is high hash bits that spare most name comparisons), or `EMPTY`. Four bytes an entry keep it small
    /// enough to stay cached between reports. Never iterated.
    index: Vec<u32>,
    hasher: RandomState,
}

impl NodeTable {
    fn name(&self, slot: u32) -> &str {
        let s = slot as usize;
        let start = if s == 0 { 0 } else { self.ends[s - 1] as usize };
        &self.names[start..self.ends[s] as usize]
    }

    /// The slot of `id`, or where to insert it and the entry's tag part.
    fn probe(&self, id: &str) -> Result<u32, (usize, u32)> {
        let hash = self.hasher.hash_one(id);
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
                return Ok(e & slot_mask);
            }
            i = (i + 1) & mask;
        }
    }

    /// The node `id`'s state.
    pub(crate) fn get<Q: AsRef<str> + ?Sized>(&self, id: &Q) -> Option<&NodeState> {
        let id = id.as_ref();
        let slot = self.probe(id).ok()?;
        Some(&self.slots[slot as usize])
    }

    /// The node `id`'s state, mutably.
    pub(crate) fn get_mut<Q: AsRef<str> + ?Sized>(&mut self, id: &Q) -> Option<&mut NodeState> {
        let id = id.as_ref();
        let slot = self.probe(id).ok()?;
        Some(&mut self.slots[slot as usize])
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
        &mut self.slots[slot as usize]
    }

    fn insert(&mut self, id: String, state: NodeState) -> u32 {
        let slot = u32::try_from(self.slots.len()).expect("fewer than 2^32 nodes");
        assert!(self.names.len() + id.len() <= u32::MAX as usize);
        if (self.slots.len() + 1) * 4 > self.index.len() * 3 {
            self.grow();
        }
        self.slots.push(state);
        self.names.push_str(&id);
        self.ends.push(self.names.len() as u32);
        let (i, tag) = self.probe(&id).expect_err("new id");
        self.index[i] = tag | slot;
        self.order.insert(id, slot);
        slot
    }

    /// Doubles the index (load factor stays at most 3/4, so a slot never reaches `EMPTY`'s bit pattern).
    fn grow(&mut self) {
        let len = (self.index.len() * 2).max(16);
        assert!(len <= 1 << 31, "fewer than 2^31 index entries");
        self.index = vec![EMPTY; len];
        for slot in 0..self.slots.len() as u32 {
            let (i, tag) = self.probe(self.name(slot)).expect_err("ids are unique");
            self.index[i] = tag | slot;
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
            for ns in &mut self.slots {
                if !ns.deployments.is_empty() {
                    ns.deployments.remove(&id);
                }
            }
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
            .map(|(id, &s)| (id, &self.slots[s as usize]))
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
        serializer.collect_map(self.iter())
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
                Ok(s) => t.slots[s as usize] = state,
                Err(_) => {
                    t.insert(id, state);
                }
            }
        }
        t
    }
}

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
