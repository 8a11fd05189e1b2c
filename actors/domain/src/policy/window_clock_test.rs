use super::*;
use crate::policy::windows::{AppliesTo, Overrun, WindowKind};

const M: u64 = 60_000;
const H: u64 = 60 * M;
/// Monday 4 May 2026, 00:00 UTC.
const T0: Timestamp = 1_777_852_800_000;

fn window(name: &str, schedule: &str, duration_ms: u64) -> Window {
    Window {
        name: name.into(),
        kind: WindowKind::Deny,
        schedule: schedule.into(),
        duration_ms,
        time_zone: "Europe/Berlin".into(),
        applies_to: AppliesTo::default(),
        overrun: Overrun::FinishInFlight,
        allow_rollback: true,
    }
}

fn utc(name: &str, schedule: &str, duration_ms: u64) -> Window {
    Window {
        time_zone: "UTC".into(),
        ..window(name, schedule, duration_ms)
    }
}

fn map(ws: &[Window]) -> CowMap<String, Window> {
    let mut m = CowMap::new();
    for w in ws {
        m.insert(w.name.clone(), w.clone());
    }
    m
}

#[test]
fn the_clock_answers_what_a_fresh_search_answers_at_every_time() {
    // Plain, overlapping (one long window), daily across the spring-forward, and every 4 hours.
    let ws = map(&[
        window("a", "0 22 * * 1-5", 2 * H),
        window("b", "0,20,40 8-9 * * *", 30 * M),
        window("c", "30 2 * * *", H),
        utc("d", "0 */4 * * *", H),
    ]);
    let mut clock = WindowClock::default();
    let mut t = T0 - 40 * 24 * H;
    // Steps of 7 minutes for 10 weeks (the spring-forward among them): every span is entered, used and left.
    while t < T0 + 30 * 24 * H {
        clock.refresh(&ws, t);
        let kept: Vec<(bool, Option<Timestamp>)> =
            clock.now(&ws, t).iter().map(|w| (w.open, w.next)).collect();
        let fresh: Vec<(bool, Option<Timestamp>)> = crate::policy::admission::windows_at(&ws, t)
            .iter()
            .map(|w| (w.open, w.next))
            .collect();
        assert_eq!(kept, fresh, "at {t}");
        t += 7 * M;
    }
}

#[test]
fn a_span_is_kept_until_its_window_changes_and_no_longer() {
    let w = utc("d", "0 */4 * * *", H);
    let s = w.schedule().unwrap();
    let span = Span::at(&s, T0 + 30 * M);
    assert!(span.open);
    assert_eq!(span.until, Some(T0 + H));
    assert!(span.covers(T0 + 59 * M) && !span.covers(T0 + H) && !span.covers(T0));
    let closed = Span::at(&s, T0 + H);
    assert!(!closed.open);
    assert_eq!(closed.next, Some(T0 + 4 * H));
}

#[test]
fn a_deleted_window_leaves_the_clock_and_a_new_one_joins_it() {
    let mut clock = WindowClock::default();
    let mut ws = map(&[window("a", "0 22 * * 1-5", 2 * H)]);
    clock.refresh(&ws, T0);
    ws.insert("b".into(), utc("b", "0 */4 * * *", H));
    ws.remove("a");
    clock.refresh(&ws, T0 + 1);
    let now = clock.now(&ws, T0 + 30 * M);
    assert_eq!(now.len(), 1);
    assert_eq!(now[0].window.name, "b");
    assert!(now[0].open);
}

#[test]
fn a_walk_forward_agrees_with_fresh_searches() {
    let ws = map(&[
        window("a", "0 22 * * 1-5", 2 * H),
        window("b", "0,20,40 8-9 * * *", 30 * M),
    ]);
    let clock = WindowClock::default();
    let mut walk = Walk::new(&clock, &ws, "web", "app");
    let mut t = T0;
    while t < T0 + 3 * 24 * H {
        let a: Vec<_> = walk.at(t).iter().map(|w| (w.open, w.next)).collect();
        let b: Vec<_> = crate::policy::admission::windows_at(&ws, t)
            .iter()
            .map(|w| (w.open, w.next))
            .collect();
        assert_eq!(a, b, "at {t}");
        t += 11 * M;
    }
}
