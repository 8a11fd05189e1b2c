use super::*;
use convoy_actors::domain::windows::Opening;
use convoy_actors::domain::{AppliesTo, Overrun};

fn window(kind: WindowKind, open: bool) -> WindowView {
    WindowView {
        name: "nights".into(),
        kind,
        schedule: "0 22 * * *".into(),
        duration_ms: 2 * 3_600_000,
        time_zone: "Europe/Berlin".into(),
        applies_to: AppliesTo::default(),
        overrun: Overrun::FinishInFlight,
        allow_rollback: true,
        open,
        next: vec![Opening {
            opens_at: 1_767_646_800_000,
            closes_at: 1_767_654_000_000,
        }],
        holds: vec![],
    }
}

#[test]
fn a_holding_window_says_until_when_in_its_zone() {
    assert_eq!(
        held_by(&window(WindowKind::Allow, false)),
        "window nights (allow, closed until 2026-01-05 22:00:00 CET)"
    );
    assert_eq!(
        held_by(&window(WindowKind::Deny, true)),
        "window nights (deny, open now, for up to 2h from its last opening)"
    );
}
