//! Times with their zone: a window's openings in the window's own IANA zone (`2026-01-05 22:00:00 CET`),
//! other policy times in UTC saying so (`... UTC`).

use chrono::TimeZone;
use chrono_tz::Tz;

use super::table::timestamp;

/// `ms` (Unix milliseconds) as wall time in `zone` with its abbreviation; a zone this build does not know
/// (a newer server's database) as UTC, naming `UTC`.
pub fn in_zone(ms: u64, zone: &str) -> String {
    let Ok(tz) = zone.parse::<Tz>() else {
        return utc(ms);
    };
    match i64::try_from(ms)
        .ok()
        .and_then(|ms| tz.timestamp_millis_opt(ms).single())
    {
        Some(t) => t.format("%Y-%m-%d %H:%M:%S %Z").to_string(),
        None => utc(ms),
    }
}

/// `ms` as UTC wall time, naming `UTC`.
pub fn utc(ms: u64) -> String {
    format!("{} UTC", timestamp(ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_shown_in_its_zone_and_names_it() {
        // 2026-01-05 21:00 UTC is 22:00 in Berlin (winter) and 2026-07-06 20:00 UTC is 22:00 (summer).
        assert_eq!(
            in_zone(1_767_646_800_000, "Europe/Berlin"),
            "2026-01-05 22:00:00 CET"
        );
        assert_eq!(
            in_zone(1_783_368_000_000, "Europe/Berlin"),
            "2026-07-06 22:00:00 CEST"
        );
        assert_eq!(in_zone(1_767_646_800_000, "UTC"), "2026-01-05 21:00:00 UTC");
        assert_eq!(
            in_zone(1_767_646_800_000, "Mars/Olympus"),
            "2026-01-05 21:00:00.000 UTC"
        );
    }
}
