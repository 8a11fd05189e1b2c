//! The client history the linearizability checker reads: every creation of a resource, every
//! version published (acknowledged with its number, refused, or never answered) and every
//! consistent read of a resource's latest version, on the virtual clock; and the model they are
//! checked against, one register per resource (absent, or its latest version number).

use std::collections::BTreeMap;

use super::linearize::{check, Model, Operation, Verdict};
use crate::chaos::check::Violation;

/// The most operations of one resource shown in a violation.
const SHOWN: usize = 12;

/// What a write came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome<T> {
    /// Acknowledged as applied, with the state machine's answer.
    Applied(T),
    /// Acknowledged, but the state machine refused it (no effect).
    Refused,
    /// No answer: it may or may not have taken effect.
    Unknown,
}

/// One client operation on one resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResourceOp {
    /// `CreateResource`.
    Create(Outcome<()>),
    /// `PublishVersion`; applied with the number the version got.
    Publish(Outcome<u64>),
    /// A consistent read: the resource's latest version (0: none yet), `None` if absent.
    Read(Option<u64>),
}

/// One register per resource: `None` before it exists, then its latest version number.
pub struct Resources;

impl Model for Resources {
    type State = Option<u64>;
    type Op = ResourceOp;

    fn init(&self) -> Option<u64> {
        None
    }

    fn step(&self, state: &Option<u64>, op: &ResourceOp) -> Vec<Option<u64>> {
        match (op, *state) {
            (ResourceOp::Create(Outcome::Applied(())), None) => vec![Some(0)],
            (ResourceOp::Create(Outcome::Applied(())), Some(_)) => vec![],
            (ResourceOp::Create(Outcome::Unknown), None) => vec![None, Some(0)],
            (ResourceOp::Publish(Outcome::Applied(v)), Some(n)) if n + 1 == *v => vec![Some(*v)],
            (ResourceOp::Publish(Outcome::Applied(_)), _) => vec![],
            (ResourceOp::Publish(Outcome::Unknown), Some(n)) => vec![Some(n), Some(n + 1)],
            (ResourceOp::Read(seen), now) => {
                if *seen == now {
                    vec![now]
                } else {
                    vec![]
                }
            }
            // Refused, or unknown where it could not apply: no effect.
            (_, now) => vec![now],
        }
    }
}

/// The operations recorded so far, per resource.
#[derive(Default)]
pub struct History {
    ops: Vec<Option<(String, Operation<ResourceOp>)>>,
}

impl History {
    /// `op` on `resource` is invoked at `now`; returns its id.
    pub fn call(&mut self, resource: &str, op: ResourceOp, now: u64) -> usize {
        self.ops.push(Some((
            resource.to_string(),
            Operation {
                call: now,
                ret: None,
                op,
            },
        )));
        self.ops.len() - 1
    }

    /// Operation `id` returned at `now` with `op` (its outcome).
    pub fn returned(&mut self, id: usize, op: ResourceOp, now: u64) {
        if let Some(Some((_, o))) = self.ops.get_mut(id) {
            o.ret = Some(now);
            o.op = op;
        }
    }

    /// Operation `id` (a read that got no answer) is forgotten: it had no effect.
    pub fn discard(&mut self, id: usize) {
        if let Some(slot) = self.ops.get_mut(id) {
            *slot = None;
        }
    }

    /// How many operations were recorded (and not discarded).
    pub fn len(&self) -> usize {
        self.ops.iter().flatten().count()
    }

    /// How many reads were answered.
    pub fn answered_reads(&self) -> u64 {
        self.ops
            .iter()
            .flatten()
            .filter(|(_, o)| o.ret.is_some() && matches!(o.op, ResourceOp::Read(_)))
            .count() as u64
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks every resource's history (each on its own: the registers are independent).
    pub fn check(&self, budget: u64) -> Vec<Violation> {
        let mut per_key: BTreeMap<&str, Vec<Operation<ResourceOp>>> = BTreeMap::new();
        for (key, op) in self.ops.iter().flatten() {
            // A read still unanswered had no effect and saw nothing.
            if op.ret.is_none() && matches!(op.op, ResourceOp::Read(_)) {
                continue;
            }
            per_key.entry(key).or_default().push(op.clone());
        }
        let mut violations = Vec::new();
        for (key, ops) in per_key {
            match check(&Resources, &ops, budget) {
                Verdict::Linearizable => {}
                Verdict::Violation { linearized, stuck } => violations.push(Violation {
                    rule: "linearizability",
                    detail: format!(
                        "resource {key}: no order of its {} operations fits; at best {linearized} \
                         placed, then {} cannot; operations (call ms, return ms, op): {}",
                        ops.len(),
                        show(&ops[stuck]),
                        around(&ops, stuck)
                    ),
                }),
                Verdict::Undecided { steps } => violations.push(Violation {
                    rule: "linearizability-undecided",
                    detail: format!(
                        "resource {key}: {} operations, search stopped after {steps} steps",
                        ops.len()
                    ),
                }),
            }
        }
        violations
    }
}

fn show(o: &Operation<ResourceOp>) -> String {
    match o.ret {
        Some(ret) => format!("({}, {ret}, {:?})", o.call, o.op),
        None => format!("({}, none, {:?})", o.call, o.op),
    }
}

/// The operations around `stuck`: those invoked before its response, the latest first cut to
/// [`SHOWN`].
fn around(ops: &[Operation<ResourceOp>], stuck: usize) -> String {
    let until = ops[stuck].ret.unwrap_or(u64::MAX);
    let mut before: Vec<&Operation<ResourceOp>> = ops.iter().filter(|o| o.call <= until).collect();
    before.sort_by_key(|o| o.call);
    let skip = before.len().saturating_sub(SHOWN);
    before[skip..]
        .iter()
        .map(|o| show(o))
        .collect::<Vec<_>>()
        .join(" ")
}
