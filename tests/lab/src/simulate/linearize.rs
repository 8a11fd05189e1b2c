//! Linearizability of a history of operations against a sequential model: the Wing–Gong–Lowe
//! search with Lowe's memoisation (as in porcupine): operations are linearized in an order
//! consistent with their real-time intervals, backtracking when a response cannot be passed, and
//! a (linearized set, model state) pair already explored is never explored again. Models may be
//! nondeterministic (an operation whose outcome is unknown may or may not have taken effect): the
//! search walks sets of states. The search is bounded: a history whose search exceeds the budget
//! is reported as undecided, never passed.

use std::collections::HashSet;
use std::fmt::Debug;
use std::hash::Hash;

/// A sequential specification.
pub trait Model {
    /// A state of the specification.
    type State: Clone + Ord + Hash + Debug;
    /// An operation with its observed outcome.
    type Op: Debug;
    /// The initial state.
    fn init(&self) -> Self::State;
    /// The states `op` may leave `state` in; empty when `op` (with its outcome) cannot happen in
    /// `state`.
    fn step(&self, state: &Self::State, op: &Self::Op) -> Vec<Self::State>;
}

/// One operation of a history, on the virtual clock (ms).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation<O> {
    /// When the client invoked it.
    pub call: u64,
    /// When its response arrived; `None` when none ever did (it may have taken effect at any
    /// time after its call, or never).
    pub ret: Option<u64>,
    /// The operation and its outcome.
    pub op: O,
}

/// What the search concluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Some order of the operations respects real time and the model.
    Linearizable,
    /// No order does. `stuck` is the operation whose response could not be passed when the most
    /// operations (`linearized`) had been placed.
    Violation {
        /// How many operations the longest legal prefix placed.
        linearized: usize,
        /// The index (in the history) of the operation no order could place before its response.
        stuck: usize,
    },
    /// The search took more than `budget` steps: undecided (reported, never passed).
    Undecided {
        /// The steps taken.
        steps: u64,
    },
}

/// The search's step budget per history unless told otherwise.
pub const DEFAULT_BUDGET: u64 = 2_000_000;

#[derive(Clone, Copy)]
struct Event {
    op: usize,
    is_call: bool,
}

/// A set of operation indexes, hashable (the memo's key).
#[derive(Clone, PartialEq, Eq, Hash)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Self {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn clear(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
}

/// The states `op` may lead to from any of `states` (sorted, without duplicates).
fn power_step<M: Model>(model: &M, states: &[M::State], op: &M::Op) -> Vec<M::State> {
    let mut next: Vec<M::State> = states.iter().flat_map(|s| model.step(s, op)).collect();
    next.sort();
    next.dedup();
    next
}

/// Checks `history` against `model` within `budget` search steps.
pub fn check<M: Model>(model: &M, history: &[Operation<M::Op>], budget: u64) -> Verdict {
    let n = history.len();
    // Calls before returns at the same instant: operations that touch in time are concurrent
    // (the clock's millisecond cannot order them), which never invents a violation.
    let mut events: Vec<(u64, u8, usize)> = Vec::with_capacity(2 * n);
    for (i, o) in history.iter().enumerate() {
        events.push((o.call, 0, i));
        events.push((o.ret.unwrap_or(u64::MAX), 1, i));
    }
    events.sort();
    let events: Vec<Event> = events
        .into_iter()
        .map(|(_, kind, op)| Event {
            op,
            is_call: kind == 0,
        })
        .collect();
    let m = events.len();
    let (head, end) = (m, m + 1);
    let mut next = vec![end; m + 2];
    let mut prev = vec![head; m + 2];
    let order: Vec<usize> = std::iter::once(head).chain(0..m).chain([end]).collect();
    for pair in order.windows(2) {
        next[pair[0]] = pair[1];
        prev[pair[1]] = pair[0];
    }
    let mut ret_node = vec![0; n];
    for (k, e) in events.iter().enumerate() {
        if !e.is_call {
            ret_node[e.op] = k;
        }
    }

    let mut state = vec![model.init()];
    let mut linearized = Bits::new(n);
    let mut seen: HashSet<(Bits, Vec<M::State>)> = HashSet::new();
    let mut stack: Vec<(usize, Vec<M::State>)> = Vec::new();
    let mut deepest = (0usize, 0usize);
    let mut entry = next[head];
    let mut steps = 0u64;
    let unlink = |next: &mut Vec<usize>, prev: &mut Vec<usize>, k: usize| {
        let (p, q) = (prev[k], next[k]);
        next[p] = q;
        prev[q] = p;
    };
    let relink = |next: &mut Vec<usize>, prev: &mut Vec<usize>, k: usize| {
        let (p, q) = (prev[k], next[k]);
        next[p] = k;
        prev[q] = k;
    };
    loop {
        if next[head] == end {
            return Verdict::Linearizable;
        }
        steps += 1;
        if steps > budget {
            return Verdict::Undecided { steps };
        }
        if entry != end && events[entry].is_call {
            let op = events[entry].op;
            let after = power_step(model, &state, &history[op].op);
            if !after.is_empty() {
                linearized.set(op);
                if seen.insert((linearized.clone(), after.clone())) {
                    stack.push((entry, std::mem::replace(&mut state, after)));
                    unlink(&mut next, &mut prev, entry);
                    unlink(&mut next, &mut prev, ret_node[op]);
                    entry = next[head];
                    continue;
                }
                linearized.clear(op);
            }
            entry = next[entry];
        } else {
            if entry != end && stack.len() >= deepest.0 {
                deepest = (stack.len(), events[entry].op);
            }
            let Some((call, before)) = stack.pop() else {
                return Verdict::Violation {
                    linearized: deepest.0,
                    stuck: deepest.1,
                };
            };
            let op = events[call].op;
            state = before;
            linearized.clear(op);
            relink(&mut next, &mut prev, ret_node[op]);
            relink(&mut next, &mut prev, call);
            entry = next[call];
        }
    }
}
