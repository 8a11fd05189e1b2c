use super::*;
use chrono::Utc;

const H: u64 = 3_600_000;

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> Timestamp {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0)
        .unwrap()
        .timestamp_millis() as u64
}

#[test]
fn a_window_follows_its_zones_wall_time_across_daylight_saving() {
    // 22:00 to 24:00 Berlin time on weekdays: 21:00 UTC in winter (CET), 20:00 UTC in summer (CEST).
    let s = Schedule::parse("0 22 * * 1-5", "Europe/Berlin", 2 * H).unwrap();
    assert!(s.in_force(utc(2026, 1, 5, 21, 30)));
    assert!(!s.in_force(utc(2026, 1, 5, 20, 30)));
    assert!(s.in_force(utc(2026, 7, 6, 20, 30)));
    assert!(
        !s.in_force(utc(2026, 7, 6, 22, 0)),
        "closed at midnight Berlin time"
    );
    assert_eq!(
        s.next_opening(utc(2026, 1, 5, 12, 0)),
        Some(utc(2026, 1, 5, 21, 0))
    );
    assert_eq!(
        s.next_opening(utc(2026, 7, 6, 12, 0)),
        Some(utc(2026, 7, 6, 20, 0))
    );
    // Saturday and Sunday are not weekdays: Friday's window, then Monday's.
    assert_eq!(
        s.next_opening(utc(2026, 1, 9, 23, 0)),
        Some(utc(2026, 1, 12, 21, 0))
    );
}

#[test]
fn a_window_over_the_spring_forward_lasts_its_duration_in_real_time() {
    // 29 March 2026, 02:00 CET becomes 03:00 CEST. Opening at 01:00 CET (00:00 UTC) for 3 hours: it closes
    // at 03:00 UTC (05:00 CEST), not at 04:00 wall time.
    let s = Schedule::parse("0 1 * * *", "Europe/Berlin", 3 * H).unwrap();
    let open = utc(2026, 3, 29, 0, 0);
    assert_eq!(s.last_opening(open + H), Some(open));
    assert_eq!(s.closes(open + H), Some(open + 3 * H));
    assert!(s.in_force(utc(2026, 3, 29, 2, 30)));
    assert!(!s.in_force(utc(2026, 3, 29, 3, 0)));
    // The next day it opens at 01:00 CEST, 23:00 UTC.
    assert_eq!(s.next_opening(open + 3 * H), Some(utc(2026, 3, 29, 23, 0)));
}

#[test]
fn a_window_over_the_fall_back_opens_once_and_lasts_its_duration() {
    // 25 October 2026, 03:00 CEST becomes 02:00 CET: 02:30 happens twice. A window at 02:30 opens once, at
    // the first 02:30 (00:30 UTC), and lasts one real hour.
    let s = Schedule::parse("30 2 * * *", "Europe/Berlin", H).unwrap();
    let first = utc(2026, 10, 25, 0, 30);
    assert_eq!(s.next_opening(utc(2026, 10, 24, 12, 0)), Some(first));
    assert_eq!(s.closes(first), Some(first + H));
    assert_eq!(
        s.next_opening(first + H),
        Some(utc(2026, 10, 26, 1, 30)),
        "not again at the second 02:30 (01:30 UTC)"
    );
}

#[test]
fn the_next_change_alternates_between_openings_and_closings() {
    let s = Schedule::parse("0 */4 * * *", "UTC", H).unwrap();
    let t = utc(2026, 5, 1, 0, 30);
    assert!(s.in_force(t));
    assert_eq!(s.next_change(t), Some(utc(2026, 5, 1, 1, 0)));
    assert_eq!(
        s.next_change(utc(2026, 5, 1, 1, 0)),
        Some(utc(2026, 5, 1, 4, 0))
    );
    assert_eq!(
        s.openings(t, 2),
        vec![
            (utc(2026, 5, 1, 4, 0), utc(2026, 5, 1, 5, 0)),
            (utc(2026, 5, 1, 8, 0), utc(2026, 5, 1, 9, 0))
        ]
    );
    // Openings closer together than the duration make one long window.
    let always = Schedule::parse("0 * * * *", "UTC", 2 * H).unwrap();
    assert!(always.in_force(t));
    assert_eq!(always.closes(t), None);
}

#[test]
fn bad_schedules_zones_and_durations_are_refused_naming_the_value() {
    let err = Schedule::parse("0 25 * * *", "UTC", H)
        .unwrap_err()
        .to_string();
    assert!(err.contains("0 25 * * *"), "{err}");
    assert!(
        err.contains("hour field \"25\"") && err.contains("0-23"),
        "the field and its value: {err}"
    );
    for (schedule, field) in [
        ("0 22 * * 9", "day-of-week field \"9\""),
        ("61 0 22 * * *", "second field \"61\""),
        ("0 22 32 * *", "day-of-month field \"32\""),
        ("0 22 * 1-13 *", "month field \"1-13\""),
    ] {
        let err = Schedule::parse(schedule, "UTC", H).unwrap_err().to_string();
        assert!(err.contains(field), "{schedule}: {err}");
    }
    let err = Schedule::parse("0 22 * *", "UTC", H)
        .unwrap_err()
        .to_string();
    assert!(err.contains("4 fields"), "{err}");
    let err = Schedule::parse("0 1 * * *", "Mars/Olympus", H)
        .unwrap_err()
        .to_string();
    assert!(err.contains("Mars/Olympus"), "{err}");
    assert!(Schedule::parse("0 1 * * *", "UTC", 10).is_err());
    assert!(Schedule::parse("0 1 * * *", "UTC", 32 * 24 * H).is_err());
    assert!(Schedule::parse(&"1,".repeat(150), "UTC", H).is_err());
}

#[test]
fn a_window_applies_to_the_consumers_and_resources_it_names() {
    let all = AppliesTo::default();
    assert!(all.covers("web", "app"));
    let some = AppliesTo {
        consumers: Some(vec!["web".into()]),
        resources: None,
    };
    assert!(some.covers("web", "db") && !some.covers("api", "app"));
}

#[test]
fn a_new_window_that_never_opens_within_five_years_is_refused_naming_its_schedule() {
    let from = utc(2026, 5, 1, 0, 0);
    for never in ["0 0 30 2 *", "0 0 31 4 *", "0 0 31 2,4,6,9,11 *"] {
        let s = Schedule::parse(never, "UTC", H).unwrap();
        let err = s.check_new(never, from).unwrap_err().to_string();
        assert!(err.contains("schedule") && err.contains(never), "{err}");
        assert!(err.contains("5 years"), "{err}");
    }
    // A leap day comes within 5 years; so do ordinary dates.
    for ok in ["0 0 29 2 *", "0 22 * * 1-5", "0 0 31 12 *", "0 3 * * 0#5"] {
        let s = Schedule::parse(ok, "UTC", H).unwrap();
        assert!(s.check_new(ok, from).is_ok(), "{ok}");
    }
}

#[test]
fn a_new_window_opening_more_than_six_times_a_minute_is_refused() {
    let from = utc(2026, 5, 1, 0, 0);
    for often in ["*/5 * * * * *", "* * * * * *", "0-6 * * * * *"] {
        let s = Schedule::parse(often, "UTC", H).unwrap();
        let err = s.check_new(often, from).unwrap_err().to_string();
        assert!(
            err.contains(often) && err.contains("6 times a minute"),
            "{err}"
        );
    }
    for ok in ["*/10 * * * * *", "0,15,30,45 * * * * *", "* * * * *"] {
        let s = Schedule::parse(ok, "UTC", H).unwrap();
        assert!(s.check_new(ok, from).is_ok(), "{ok}");
    }
}
