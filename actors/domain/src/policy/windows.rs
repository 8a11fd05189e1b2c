//! Maintenance windows (issue 24 §2): a cron schedule in a time zone (DST by `chrono-tz`'s bundled
//! database, the same on every server), a duration, and what it applies to. Pure: every answer is for a
//! time passed in. A window is *in force* at `t` when an occurrence of its schedule started at most
//! `duration` before `t`; the latest occurrence decides, since every occurrence lasts as long.

use crate::errors::DomainError;
use crate::values::ids::Timestamp;
use chrono::{DateTime, TimeZone};
use chrono_tz::Tz;
use croner::Cron;
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// Longest window: 31 days.
pub const MAX_WINDOW_MS: u64 = 31 * 24 * 3_600_000;
/// Most bytes of a schedule.
pub const MAX_SCHEDULE_BYTES: usize = 200;
/// Most consumers or resources a window names.
pub const MAX_APPLIES_TO: usize = 256;
/// Most windows in the state.
pub const MAX_WINDOWS: usize = 1_000;
/// A new window's schedule must open within this many days of its creation (5 years, leap days included):
/// a date that never comes (`0 0 30 2 *`) would make every search walk to the cron library's year 5000.
pub const HORIZON_DAYS: u64 = 5 * 366;
/// A new window opens at most this many times a minute (values in its seconds field): each opening and
/// closing wakes every deployment it applies to.
pub const MAX_OPENINGS_PER_MINUTE: usize = 6;

/// Allow windows are the only times nodes may be admitted; a deny window in force forbids it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum WindowKind {
    /// Nodes are admitted only inside one (where any applies).
    Allow,
    /// No node is admitted while one is in force, whatever the allow windows say.
    Deny,
}

/// What a window closing does to a deployment's in-flight nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Overrun {
    /// They finish; no new node is admitted.
    #[default]
    FinishInFlight,
    /// Those installing finish; those admitted that have not started are taken back (as a hard pause does:
    /// pending again, admitted again when the deployment resumes).
    Pause,
}

/// What a window applies to: the deployments of these consumers and of these resources (absent: all).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AppliesTo {
    /// Consumers whose deployments it holds; absent: every consumer.
    #[serde(default)]
    pub consumers: Option<Vec<String>>,
    /// Resources whose deployments it holds; absent: every resource.
    #[serde(default)]
    pub resources: Option<Vec<String>>,
}

impl AppliesTo {
    /// Whether a deployment of `resource` on `consumer` is in its scope.
    pub fn covers(&self, consumer: &str, resource: &str) -> bool {
        let has = |list: &Option<Vec<String>>, x: &str| {
            list.as_ref().is_none_or(|l| l.iter().any(|y| y == x))
        };
        has(&self.consumers, consumer) && has(&self.resources, resource)
    }
}

/// A maintenance window, as replicated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Window {
    /// Its name, unique among windows.
    pub name: String,
    /// Allow or deny.
    pub kind: WindowKind,
    /// When it opens: a cron pattern (5 fields, or 6 with seconds) in `time_zone`'s wall time.
    pub schedule: String,
    /// How long it stays open after each opening (ms, 1 s to 31 days).
    pub duration_ms: u64,
    /// An IANA time zone (`Europe/Berlin`, `UTC`).
    pub time_zone: String,
    /// The deployments it applies to.
    pub applies_to: AppliesTo,
    /// What closing does to in-flight nodes.
    pub overrun: Overrun,
    /// Whether rollbacks go on while it holds (default true); false pauses them too.
    pub allow_rollback: bool,
}

/// A window's schedule, parsed.
#[derive(Clone, Debug)]
pub struct Schedule {
    cron: Cron,
    tz: Tz,
    duration_ms: u64,
}

impl Window {
    /// Refuses a bad name, schedule, zone or duration, and lists out of bounds.
    pub fn validate(&self) -> Result<Schedule, DomainError> {
        crate::errors::check_name("window", &self.name)?;
        for list in [&self.applies_to.consumers, &self.applies_to.resources]
            .into_iter()
            .flatten()
        {
            if list.len() > MAX_APPLIES_TO {
                return Err(DomainError::invalid(
                    "applies_to",
                    format!("{} names", list.len()),
                    "a window names at most 256 consumers and 256 resources",
                ));
            }
        }
        for c in self.applies_to.consumers.iter().flatten() {
            crate::errors::check_name("consumer", c)?;
        }
        for r in self.applies_to.resources.iter().flatten() {
            crate::errors::check_name("resource", r)?;
        }
        self.schedule()
    }

    /// The parsed schedule (refused as [`Window::validate`] says).
    pub fn schedule(&self) -> Result<Schedule, DomainError> {
        Schedule::parse(&self.schedule, &self.time_zone, self.duration_ms)
    }

    /// [`Window::validate`], and what only a new window is refused for (a window already in the state is
    /// kept whatever it says, so a log replays alike): a schedule that opens more than 6 times a minute, or
    /// not within [`HORIZON_DAYS`] of `at` (its creation).
    pub fn validate_new(&self, at: Timestamp) -> Result<Schedule, DomainError> {
        let s = self.validate()?;
        s.check_new(&self.schedule, at)?;
        Ok(s)
    }
}

/// The cron fields by count: 5 (`minute hour day-of-month month day-of-week`), 6 (seconds first) or 7
/// (a year last), with what each takes.
const FIELDS: [(&str, &str); 7] = [
    ("second", "0-59"),
    ("minute", "0-59"),
    ("hour", "0-23"),
    ("day-of-month", "1-31, L or W"),
    ("month", "1-12 or JAN-DEC"),
    ("day-of-week", "0-7 or SUN-SAT, # or L"),
    ("year", "a year"),
];

/// Why `schedule` (which croner refused) is bad, naming its first bad field and value: each field is tried
/// alone, the others `*`; `None` when no field alone is refused (then croner's own reason is given).
fn bad_field(schedule: &str) -> Option<String> {
    let parts: Vec<&str> = schedule.split_whitespace().collect();
    let names = match parts.len() {
        5 => &FIELDS[1..6],
        6 => &FIELDS[..6],
        7 => &FIELDS[..],
        n => {
            return (!schedule.contains('@')).then(|| {
                format!("{n} fields: a schedule has 5 (minute hour day-of-month month day-of-week), 6 (a second first) or 7 (a year last)")
            })
        }
    };
    parts.iter().enumerate().find_map(|(i, part)| {
        let alone: Vec<&str> = (0..parts.len())
            .map(|j| if j == i { *part } else { "*" })
            .collect();
        let e = Cron::from_str(&alone.join(" ")).err()?;
        let (name, takes) = names[i];
        let why = e.to_string();
        let why = why.trim_start_matches("Component error: ").trim_end_matches('.');
        Some(format!(
            "its {name} field {:?} is not valid ({why}); a {name} is {takes}, or *, a list, a range or a step",
            crate::errors::clip(part)
        ))
    })
}

impl Schedule {
    /// Parses a cron `schedule` in zone `time_zone`, open `duration_ms` after each occurrence.
    pub fn parse(
        schedule: &str,
        time_zone: &str,
        duration_ms: u64,
    ) -> Result<Schedule, DomainError> {
        if schedule.len() > MAX_SCHEDULE_BYTES {
            return Err(DomainError::invalid(
                "schedule",
                crate::errors::clip(schedule),
                "a schedule is at most 200 bytes",
            ));
        }
        let cron = Cron::from_str(schedule).map_err(|e| {
            DomainError::invalid(
                "schedule",
                crate::errors::clip(schedule),
                &bad_field(schedule).unwrap_or_else(|| e.to_string()),
            )
        })?;
        let tz = Tz::from_str(time_zone).map_err(|_| {
            DomainError::invalid(
                "time_zone",
                crate::errors::clip(time_zone),
                "an IANA time zone such as Europe/Berlin or UTC",
            )
        })?;
        if !(1_000..=MAX_WINDOW_MS).contains(&duration_ms) {
            return Err(DomainError::invalid(
                "duration",
                format!("{duration_ms}ms"),
                "a window lasts 1s to 31 days",
            ));
        }
        Ok(Schedule {
            cron,
            tz,
            duration_ms,
        })
    }

    /// How long each opening lasts (ms).
    pub fn duration_ms(&self) -> u64 {
        self.duration_ms
    }

    /// Refuses (naming `schedule`) a pattern that opens more than [`MAX_OPENINGS_PER_MINUTE`] times a
    /// minute, or whose date fields match no day within [`HORIZON_DAYS`] of `from`. Bounded: one look at
    /// each day, no search.
    pub fn check_new(&self, schedule: &str, from: Timestamp) -> Result<(), DomainError> {
        let p = &self.cron.pattern;
        if p.seconds.values().len() > MAX_OPENINGS_PER_MINUTE {
            return Err(DomainError::invalid(
                "schedule",
                crate::errors::clip(schedule),
                "a window opens at most 6 times a minute (at most 6 values in the seconds field)",
            ));
        }
        let refuse = || {
            DomainError::invalid(
                "schedule",
                crate::errors::clip(schedule),
                "the schedule never opens within 5 years (a date that does not exist, such as 30 February?)",
            )
        };
        let start = self.at(from).ok_or_else(refuse)?.date_naive();
        let opens = start
            .iter_days()
            .take(HORIZON_DAYS as usize + 1)
            .any(|d| day_matches(p, d));
        if opens {
            Ok(())
        } else {
            Err(refuse())
        }
    }

    fn at(&self, t: Timestamp) -> Option<DateTime<Tz>> {
        self.tz
            .timestamp_millis_opt(i64::try_from(t).ok()?)
            .single()
    }

    fn ms(t: &DateTime<Tz>) -> Option<Timestamp> {
        u64::try_from(t.timestamp_millis()).ok()
    }

    /// The latest opening at or before `t`.
    pub fn last_opening(&self, t: Timestamp) -> Option<Timestamp> {
        let at = self.at(t)?;
        let prev = self.cron.find_previous_occurrence(&at, true).ok()?;
        Self::ms(&prev)
    }

    /// The first opening strictly after `t`.
    pub fn next_opening(&self, t: Timestamp) -> Option<Timestamp> {
        let at = self.at(t)?;
        let next = self.cron.find_next_occurrence(&at, false).ok()?;
        Self::ms(&next)
    }

    /// Whether the window is open at `t`.
    pub fn in_force(&self, t: Timestamp) -> bool {
        self.last_opening(t)
            .is_some_and(|o| o.saturating_add(self.duration_ms) > t)
    }

    /// When the window open at `t` closes, following occurrences that start before it ends (`None`: it
    /// never closes, or is not open at `t`).
    pub fn closes(&self, t: Timestamp) -> Option<Timestamp> {
        let mut start = self.last_opening(t)?;
        let mut end = start.saturating_add(self.duration_ms);
        if end <= t {
            return None;
        }
        for _ in 0..1_000 {
            match self.next_opening(start) {
                Some(n) if n <= end => {
                    start = n;
                    end = end.max(n.saturating_add(self.duration_ms));
                }
                _ => return Some(end),
            }
        }
        None
    }

    /// The first time after `t` at which the window opens or closes.
    pub fn next_change(&self, t: Timestamp) -> Option<Timestamp> {
        if self.in_force(t) {
            self.closes(t)
        } else {
            self.next_opening(t)
        }
    }

    /// The next `n` times it opens after `t`, with when each closes.
    pub fn openings(&self, t: Timestamp, n: usize) -> Vec<(Timestamp, Timestamp)> {
        let mut out = Vec::new();
        let mut from = t;
        while out.len() < n {
            let Some(open) = self.next_opening(from) else {
                break;
            };
            let close = self
                .closes(open)
                .unwrap_or(open.saturating_add(self.duration_ms));
            out.push((open, close));
            from = close.max(open);
        }
        out
    }
}

/// Whether the pattern's year, month and day fields match `d` (its time fields always match some time).
fn day_matches(p: &croner::CronPattern, d: chrono::NaiveDate) -> bool {
    use chrono::Datelike;
    let weekday = match d.weekday() {
        chrono::Weekday::Sun => croner::Weekday::Sunday,
        chrono::Weekday::Mon => croner::Weekday::Monday,
        chrono::Weekday::Tue => croner::Weekday::Tuesday,
        chrono::Weekday::Wed => croner::Weekday::Wednesday,
        chrono::Weekday::Thu => croner::Weekday::Thursday,
        chrono::Weekday::Fri => croner::Weekday::Friday,
        chrono::Weekday::Sat => croner::Weekday::Saturday,
    };
    p.year_match(d.year()).unwrap_or(false)
        && p.month_match(d.month()).unwrap_or(false)
        && p.day_match(d.year(), d.month(), d.day(), weekday)
            .unwrap_or(false)
}

#[cfg(test)]
#[path = "windows_test.rs"]
mod tests;
