//! The slot rule: the total, one token's share, the reserve for admin and operator tokens, and slots given
//! back on drop.

use convoy_actors::domain::{Actor, Role, Token};

use super::*;

fn caller(name: &str, role: Role) -> Caller {
    Caller::Token(Token {
        name: name.into(),
        role,
        nodes: (role == Role::Agent).then(|| "*".into()),
        hash: [name.len() as u8; 32],
        created_at: 0,
        created_by: Actor::System,
        expires_at: None,
        consumers: Vec::new(),
    })
}

fn leak(limits: Limits) -> &'static Slots {
    Box::leak(Box::new(Slots::new("test streams", limits)))
}

const SMALL: Limits = Limits {
    total: 6,
    per_token: 2,
    reserved: 2,
};

#[test]
fn one_token_holds_its_share_and_no_more() {
    let slots = leak(SMALL);
    let reader = caller("r", Role::Reader);
    let held: Vec<Slot> = (0..2).map(|_| slots.claim(&reader).unwrap()).collect();
    let refused = slots.claim(&reader).unwrap_err();
    assert!(
        matches!(refused, Refusal::PerToken { per_token: 2, .. }),
        "{refused}"
    );
    assert!(refused.to_string().contains("\"r\""), "{refused}");
    drop(held);
    assert_eq!(slots.open(), 0);
    assert!(slots.claim(&reader).is_ok(), "dropped slots are given back");
}

#[test]
fn readers_leave_the_reserve_to_admins_and_operators() {
    let slots = leak(SMALL);
    let mut held = Vec::new();
    for name in ["a", "b"] {
        for _ in 0..2 {
            held.push(slots.claim(&caller(name, Role::Reader)).unwrap());
        }
    }
    let refused = slots.claim(&caller("c", Role::Agent)).unwrap_err();
    assert!(
        matches!(refused, Refusal::Reserved { left: 2, .. }),
        "{refused}"
    );
    held.push(slots.claim(&caller("op", Role::Operator)).unwrap());
    held.push(slots.claim(&caller("ad", Role::Admin)).unwrap());
    let full = slots.claim(&caller("ad2", Role::Admin)).unwrap_err();
    assert_eq!(
        full,
        Refusal::Full {
            what: "test streams",
            total: 6
        }
    );
}

#[test]
fn without_auth_only_the_total_applies() {
    let slots = leak(SMALL);
    let held: Vec<Slot> = (0..6)
        .map(|_| slots.claim(&Caller::Anonymous).unwrap())
        .collect();
    assert!(slots.claim(&Caller::Anonymous).is_err());
    assert_eq!(held.len(), 6);
}

#[test]
fn the_servers_limits_keep_a_reserve_and_a_share() {
    for limits in [
        crate::api::watch::SLOTS.limits(),
        crate::api::deployment_feed::SLOTS.limits(),
    ] {
        assert!(
            limits.per_token < limits.total - limits.reserved,
            "{limits:?}"
        );
        assert!(
            limits.reserved > 0 && limits.reserved < limits.total,
            "{limits:?}"
        );
    }
}
