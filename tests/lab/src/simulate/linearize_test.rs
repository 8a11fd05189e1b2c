//! The linearizability checker on histories known to be linearizable or not: a register's
//! classic stale read, overlapping writes read in either order, writes that never answered, the
//! resource model's version numbers, and the search budget.

use super::history::{History, Outcome, ResourceOp};
use super::linearize::{check, Model, Operation, Verdict, DEFAULT_BUDGET};

/// A read/write register starting at 0.
struct Register;

#[derive(Clone, Debug)]
enum RegOp {
    Write(u64),
    Read(u64),
}

impl Model for Register {
    type State = u64;
    type Op = RegOp;
    fn init(&self) -> u64 {
        0
    }
    fn step(&self, state: &u64, op: &RegOp) -> Vec<u64> {
        match op {
            RegOp::Write(v) => vec![*v],
            RegOp::Read(v) if v == state => vec![*state],
            RegOp::Read(_) => vec![],
        }
    }
}

fn op(call: u64, ret: u64, op: RegOp) -> Operation<RegOp> {
    Operation {
        call,
        ret: Some(ret),
        op,
    }
}

#[test]
fn an_empty_history_is_linearizable() {
    assert_eq!(check(&Register, &[], DEFAULT_BUDGET), Verdict::Linearizable);
}

#[test]
fn sequential_writes_and_reads_in_order_are_linearizable() {
    let h = [
        op(0, 1, RegOp::Write(1)),
        op(2, 3, RegOp::Read(1)),
        op(4, 5, RegOp::Write(2)),
        op(6, 7, RegOp::Read(2)),
    ];
    assert_eq!(check(&Register, &h, DEFAULT_BUDGET), Verdict::Linearizable);
}

#[test]
fn the_classic_stale_read_is_not_linearizable() {
    // Write(1) completes, then a later read returns the old 0: a follower's stale state.
    let h = [op(0, 10, RegOp::Write(1)), op(20, 30, RegOp::Read(0))];
    assert_eq!(
        check(&Register, &h, DEFAULT_BUDGET),
        Verdict::Violation {
            linearized: 1,
            stuck: 1
        }
    );
}

#[test]
fn a_read_overlapping_a_write_may_see_either_value() {
    for seen in [0, 1] {
        let h = [op(0, 10, RegOp::Write(1)), op(5, 15, RegOp::Read(seen))];
        assert_eq!(
            check(&Register, &h, DEFAULT_BUDGET),
            Verdict::Linearizable,
            "read {seen}"
        );
    }
}

#[test]
fn two_reads_cannot_see_overlapping_writes_in_opposite_orders() {
    // Writes 1 and 2 overlap; one reader sees 1 then 2, the other (after both reads of the first)
    // sees 2 then 1: no single order of the writes explains both.
    let h = [
        op(0, 100, RegOp::Write(1)),
        op(0, 100, RegOp::Write(2)),
        op(10, 11, RegOp::Read(1)),
        op(12, 13, RegOp::Read(2)),
        op(14, 15, RegOp::Read(1)),
    ];
    assert!(matches!(
        check(&Register, &h, DEFAULT_BUDGET),
        Verdict::Violation { .. }
    ));
    let fine = &h[..4];
    assert_eq!(
        check(&Register, fine, DEFAULT_BUDGET),
        Verdict::Linearizable
    );
}

#[test]
fn a_write_that_never_answered_may_or_may_not_have_happened() {
    let pending = Operation {
        call: 0,
        ret: None,
        op: RegOp::Write(7),
    };
    for seen in [0, 7] {
        let h = [pending.clone(), op(50, 60, RegOp::Read(seen))];
        assert_eq!(
            check(&Register, &h, DEFAULT_BUDGET),
            Verdict::Linearizable,
            "read {seen}"
        );
    }
    // But once seen it cannot be unseen.
    let h = [
        pending.clone(),
        op(50, 60, RegOp::Read(7)),
        op(70, 80, RegOp::Read(0)),
    ];
    assert!(matches!(
        check(&Register, &h, DEFAULT_BUDGET),
        Verdict::Violation { .. }
    ));
}

#[test]
fn a_search_over_budget_is_undecided_never_passed() {
    // Many overlapping writes and a read no order satisfies: the search must explore.
    let mut h: Vec<Operation<RegOp>> = (1..=12).map(|v| op(0, 1_000, RegOp::Write(v))).collect();
    h.push(op(2_000, 2_001, RegOp::Read(99)));
    assert!(matches!(
        check(&Register, &h, 50),
        Verdict::Undecided { .. }
    ));
    assert!(matches!(
        check(&Register, &h, DEFAULT_BUDGET),
        Verdict::Violation { .. }
    ));
}

#[test]
fn the_resource_model_follows_version_numbers() {
    let mut h = History::default();
    let c = h.call("r1", ResourceOp::Create(Outcome::Unknown), 0);
    h.returned(c, ResourceOp::Create(Outcome::Applied(())), 5);
    let p = h.call("r1", ResourceOp::Publish(Outcome::Unknown), 10);
    h.returned(p, ResourceOp::Publish(Outcome::Applied(1)), 20);
    let lost = h.call("r1", ResourceOp::Publish(Outcome::Unknown), 30);
    let _ = lost; // never answered
    let r = h.call("r1", ResourceOp::Read(None), 40);
    h.returned(r, ResourceOp::Read(Some(2)), 50);
    let p = h.call("r1", ResourceOp::Publish(Outcome::Unknown), 60);
    h.returned(p, ResourceOp::Publish(Outcome::Applied(3)), 70);
    let refused = h.call("r1", ResourceOp::Publish(Outcome::Unknown), 80);
    h.returned(refused, ResourceOp::Publish(Outcome::Refused), 90);
    let unanswered_read = h.call("r1", ResourceOp::Read(None), 95);
    h.discard(unanswered_read);
    assert_eq!(h.len(), 6);
    assert!(h.check(DEFAULT_BUDGET).is_empty());

    // An acknowledged version read back as missing: lost, or a stale read.
    let r = h.call("r1", ResourceOp::Read(None), 100);
    h.returned(r, ResourceOp::Read(Some(1)), 110);
    let violations = h.check(DEFAULT_BUDGET);
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].rule, "linearizability");
    assert!(
        violations[0].detail.contains("resource r1"),
        "{violations:?}"
    );
    assert!(
        violations[0].detail.contains("Read(Some(1))"),
        "{violations:?}"
    );
}

#[test]
fn the_resource_model_refuses_two_writes_given_one_number() {
    let mut h = History::default();
    let c = h.call("r1", ResourceOp::Create(Outcome::Unknown), 0);
    h.returned(c, ResourceOp::Create(Outcome::Applied(())), 1);
    for at in [10, 20] {
        let p = h.call("r1", ResourceOp::Publish(Outcome::Unknown), at);
        h.returned(p, ResourceOp::Publish(Outcome::Applied(1)), at + 5);
    }
    let other = h.call("r2", ResourceOp::Create(Outcome::Unknown), 0);
    h.returned(other, ResourceOp::Create(Outcome::Applied(())), 1);
    let violations = h.check(DEFAULT_BUDGET);
    assert_eq!(violations.len(), 1, "only r1 breaks: {violations:?}");
    assert!(violations[0].detail.contains("resource r1"));
}
