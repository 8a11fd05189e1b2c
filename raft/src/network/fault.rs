//! Fault injection for outgoing RPCs: drop, duplicate, delay (with jitter) or block traffic to a
//! target.
//!
//! Off by default (no rules). Only test configuration should install rules: the chaos and
//! partition tests use it to cut one direction of a link (`block`) or make it lossy, slow or
//! repetitive (a duplicated RPC reaches the peer twice, as a retransmitting network would).

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rand::Rng;

use crate::types::NodeId;

/// A [`FaultPolicy`] shared between a [`super::client::Network`] and whoever steers it.
pub type SharedFaultPolicy = Arc<RwLock<FaultPolicy>>;

/// What to do to outgoing RPCs towards one target.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultRule {
    /// Fail every RPC at once as unreachable: a one-way partition (this side cannot send).
    pub blocked: bool,
    /// Probability in `[0, 1]` that an RPC is lost; a lost RPC fails by timing out.
    pub drop_probability: f64,
    /// Probability in `[0, 1]` that a delivered RPC is sent twice (the first answer is used).
    pub duplicate_probability: f64,
    /// Fixed delay added before an RPC is sent.
    pub delay: Duration,
    /// Up to this much extra random delay on top of `delay`.
    pub jitter: Duration,
}

/// The fate of one outgoing RPC, drawn from a [`FaultRule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultAction {
    /// Send it after sleeping this long (zero when no rule applies).
    Deliver(Duration),
    /// Send it after sleeping this long, then send the same request again on the same
    /// connection; the caller gets the answer to the first copy.
    Duplicate(Duration),
    /// Lose it: the caller waits out its timeout and reports a timeout.
    Drop,
    /// Refuse it at once as unreachable.
    Block,
}

/// Per-target fault rules. The default has none, so every RPC is delivered untouched.
#[derive(Clone, Debug, Default)]
pub struct FaultPolicy {
    rules: BTreeMap<NodeId, FaultRule>,
}

impl FaultPolicy {
    /// Installs (or replaces) the rule for `target`.
    pub fn set(&mut self, target: NodeId, rule: FaultRule) {
        self.rules.insert(target, rule);
    }

    /// Blocks every RPC to `target` (a one-way partition), keeping the rest of its rule.
    pub fn block(&mut self, target: NodeId) {
        self.rules.entry(target).or_default().blocked = true;
    }

    /// Lifts a [`FaultPolicy::block`] on `target`.
    pub fn unblock(&mut self, target: NodeId) {
        if let Some(rule) = self.rules.get_mut(&target) {
            rule.blocked = false;
        }
    }

    /// Removes the rule for `target`.
    pub fn clear(&mut self, target: NodeId) {
        self.rules.remove(&target);
    }

    /// Removes every rule: all traffic flows again.
    pub fn clear_all(&mut self) {
        self.rules.clear();
    }

    /// The rule for `target`, if any.
    pub fn rule(&self, target: NodeId) -> Option<&FaultRule> {
        self.rules.get(&target)
    }

    /// Draws the fate of one RPC to `target`.
    pub fn decide(&self, target: NodeId) -> FaultAction {
        let Some(rule) = self.rules.get(&target) else {
            return FaultAction::Deliver(Duration::ZERO);
        };
        if rule.blocked {
            return FaultAction::Block;
        }
        let mut rng = rand::thread_rng();
        if rule.drop_probability > 0.0 && rng.gen_bool(rule.drop_probability.clamp(0.0, 1.0)) {
            return FaultAction::Drop;
        }
        let jitter = if rule.jitter.is_zero() {
            Duration::ZERO
        } else {
            rng.gen_range(Duration::ZERO..=rule.jitter)
        };
        let delay = rule.delay + jitter;
        if rule.duplicate_probability > 0.0
            && rng.gen_bool(rule.duplicate_probability.clamp(0.0, 1.0))
        {
            return FaultAction::Duplicate(delay);
        }
        FaultAction::Deliver(delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_delivers_everything_at_once() {
        let p = FaultPolicy::default();
        assert_eq!(p.decide(1), FaultAction::Deliver(Duration::ZERO));
    }

    #[test]
    fn block_and_unblock_one_target() {
        let mut p = FaultPolicy::default();
        p.block(2);
        assert_eq!(p.decide(2), FaultAction::Block);
        assert_eq!(p.decide(3), FaultAction::Deliver(Duration::ZERO));
        p.unblock(2);
        assert_eq!(p.decide(2), FaultAction::Deliver(Duration::ZERO));
    }

    #[test]
    fn drop_all_and_delay_with_jitter() {
        let mut p = FaultPolicy::default();
        p.set(
            1,
            FaultRule {
                drop_probability: 1.0,
                ..FaultRule::default()
            },
        );
        assert_eq!(p.decide(1), FaultAction::Drop);
        let (delay, jitter) = (Duration::from_millis(20), Duration::from_millis(10));
        p.set(
            1,
            FaultRule {
                delay,
                jitter,
                ..FaultRule::default()
            },
        );
        for _ in 0..100 {
            match p.decide(1) {
                FaultAction::Deliver(d) => assert!(d >= delay && d <= delay + jitter, "{d:?}"),
                other => panic!("unexpected {other:?}"),
            }
        }
        p.clear_all();
        assert!(p.rule(1).is_none());
    }

    fn duplicating(duplicate_probability: f64) -> FaultPolicy {
        let mut p = FaultPolicy::default();
        p.set(
            1,
            FaultRule {
                duplicate_probability,
                delay: Duration::from_millis(5),
                ..FaultRule::default()
            },
        );
        p
    }

    #[test]
    fn duplicate_probability_one_always_duplicates_with_the_delay() {
        let p = duplicating(1.0);
        for _ in 0..1000 {
            assert_eq!(
                p.decide(1),
                FaultAction::Duplicate(Duration::from_millis(5))
            );
        }
        assert_eq!(p.decide(2), FaultAction::Deliver(Duration::ZERO));
    }

    #[test]
    fn duplicate_probability_zero_never_duplicates() {
        let p = duplicating(0.0);
        for _ in 0..1000 {
            assert_eq!(p.decide(1), FaultAction::Deliver(Duration::from_millis(5)));
        }
    }

    #[test]
    fn duplicate_probability_half_does_both() {
        let p = duplicating(0.5);
        let dups = (0..1000)
            .filter(|_| matches!(p.decide(1), FaultAction::Duplicate(_)))
            .count();
        // Binomial(1000, 0.5): outside [350, 650] is a > 20-sigma event.
        assert!((350..=650).contains(&dups), "{dups} duplicates of 1000");
    }

    #[test]
    fn drop_wins_over_duplicate_and_block_over_both() {
        let mut p = FaultPolicy::default();
        p.set(
            1,
            FaultRule {
                drop_probability: 1.0,
                duplicate_probability: 1.0,
                ..FaultRule::default()
            },
        );
        assert_eq!(p.decide(1), FaultAction::Drop);
        p.block(1);
        assert_eq!(p.decide(1), FaultAction::Block);
    }

    #[test]
    fn out_of_range_duplicate_probability_is_clamped() {
        assert_eq!(
            duplicating(7.0).decide(1),
            FaultAction::Duplicate(Duration::from_millis(5))
        );
        assert_eq!(
            duplicating(-1.0).decide(1),
            FaultAction::Deliver(Duration::from_millis(5))
        );
    }
}
