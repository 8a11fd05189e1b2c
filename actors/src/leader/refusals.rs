//! Refused reports are logged as a summary, never one line per refusal: at most one WARN line per
//! interval, counting what was refused since the last line and quoting the first refusal.

use std::time::{Duration, Instant};

/// How often a summary of refused reports may be logged.
pub const REFUSAL_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// Longest quote of a refusal's reason in a summary line, in bytes.
const MAX_QUOTE: usize = 200;

/// Refusals counted since the last summary line.
#[derive(Debug)]
pub struct RefusalLog {
    interval: Duration,
    last_line: Option<Instant>,
    count: u64,
    first: Option<String>,
}

impl RefusalLog {
    /// A log writing at most one line per `interval`.
    pub const fn new(interval: Duration) -> Self {
        Self {
            interval,
            last_line: None,
            count: 0,
            first: None,
        }
    }

    /// Counts one refusal (`why`) at `now`; returns the summary line to log when one is due (the first
    /// refusal at once, then at most one per interval).
    pub fn record(&mut self, now: Instant, why: &str) -> Option<String> {
        self.count += 1;
        if self.first.is_none() {
            let mut end = why.len().min(MAX_QUOTE);
            while !why.is_char_boundary(end) {
                end -= 1;
            }
            self.first = Some(why[..end].to_string());
        }
        let due = self
            .last_line
            .is_none_or(|last| now.saturating_duration_since(last) >= self.interval);
        if !due {
            return None;
        }
        let line = format!(
            "refused {} node reports out of bounds since the last summary (first: {})",
            self.count,
            self.first.take().unwrap_or_default()
        );
        self.last_line = Some(now);
        self.count = 0;
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_of_refusals_writes_one_line_per_interval() {
        let mut log = RefusalLog::new(Duration::from_secs(10));
        let start = Instant::now();
        let lines: Vec<String> = (0..3_413u64)
            .filter_map(|i| log.record(start + Duration::from_millis(i), "resource \"a/b\": bad"))
            .collect();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("refused 1 ") && lines[0].contains("a/b"),
            "{}",
            lines[0]
        );
        let next = log
            .record(start + Duration::from_secs(11), "another")
            .expect("a line after the interval");
        assert!(next.contains("refused 3413 "), "{next}");
        assert!(
            next.contains("a/b"),
            "the first refusal since the last line: {next}"
        );
    }

    #[test]
    fn a_huge_reason_is_quoted_short() {
        let mut log = RefusalLog::new(Duration::from_secs(10));
        let line = log.record(Instant::now(), &"x".repeat(100_000)).unwrap();
        assert!(line.len() < 400, "{} bytes", line.len());
    }
}
