//! Small helpers shared by the chaos harness and the benchmarks: durations from flags, percentiles.

use std::time::Duration;

/// Parses `90s`, `2m`, `1500ms` or a number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (number, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("duration {s:?}: expected e.g. 90s, 2m or 1500ms"))?;
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        "m" => Ok(Duration::from_secs(n * 60)),
        other => Err(format!(
            "duration {s:?}: unknown unit {other:?} (use ms, s or m)"
        )),
    }
}

/// The sample at rank `ceil(p * n)` (nearest rank), or `None` without samples.
pub fn percentile(mut samples: Vec<u64>, p: f64) -> Option<u64> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_unstable();
    let rank = ((p * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
    Some(samples[rank - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units_and_refuse_nonsense() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1500ms"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert!(parse_duration("5h").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn percentiles_take_the_rank_at_or_above() {
        assert_eq!(percentile(vec![], 0.5), None);
        assert_eq!(percentile(vec![5, 1, 3], 0.5), Some(3));
        assert_eq!(percentile((1..=100).collect(), 0.99), Some(99));
        assert_eq!(percentile(vec![7], 0.99), Some(7));
    }
}
