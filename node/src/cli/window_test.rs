use super::*;
use convoy_actors::domain::windows::Opening;
use convoy_actors::domain::{AppliesTo, DeploymentId, Overrun, WindowKind};

fn view() -> WindowView {
    WindowView {
        name: "nights".into(),
        kind: WindowKind::Allow,
        schedule: "0 22 * * 1-5".into(),
        duration_ms: 2 * 3_600_000,
        time_zone: "Europe/Berlin".into(),
        applies_to: AppliesTo {
            consumers: Some(vec!["web".into()]),
            resources: None,
        },
        overrun: Overrun::FinishInFlight,
        allow_rollback: true,
        open: false,
        next: vec![Opening {
            opens_at: 1_767_646_800_000,
            closes_at: 1_767_654_000_000,
        }],
        holds: vec![DeploymentId(3)],
    }
}

#[test]
fn a_window_prints_its_schedule_scope_holds_and_next_openings() {
    let text = show(&view());
    for expected in [
        "window nights (allow): \"0 22 * * 1-5\" in Europe/Berlin, 2h each",
        "consumers: web",
        "resources: every resource",
        "holds: d-3",
        "2026-01-05 22:00:00 CET  2026-01-06 00:00:00 CET",
    ] {
        assert!(text.contains(expected), "{expected:?} not in:\n{text}");
    }
    let table = list(&[view()]);
    assert!(table.contains("nights  allow  0 22 * * 1-5"), "{table}");
}

#[test]
fn create_sends_the_window_as_the_api_takes_it() {
    let body = create_body(&WindowCommand::Create {
        name: "freeze".into(),
        kind: KindArg::Deny,
        schedule: "0 0 24 12 *".into(),
        duration: "48h".into(),
        time_zone: None,
        consumers: vec![],
        resources: vec!["db".into()],
        hold_rollbacks: true,
    })
    .unwrap();
    assert_eq!(
        body,
        json!({"name": "freeze", "kind": "deny", "schedule": "0 0 24 12 *", "duration": "48h",
               "time_zone": "UTC", "applies_to": {"resources": ["db"]}, "allow_rollback": false})
    );
}
