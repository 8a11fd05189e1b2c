//! Small helpers shared by the chaos harness and the benchmarks: durations from flags, percentiles.

/// Durations of the developer tools' flags, read by the one parser (a bare number is refused).
pub use convoy_time::parse_duration;

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
    fn percentiles_take_the_rank_at_or_above() {
        assert_eq!(percentile(vec![], 0.5), None);
        assert_eq!(percentile(vec![5, 1, 3], 0.5), Some(3));
        assert_eq!(percentile((1..=100).collect(), 0.99), Some(99));
        assert_eq!(percentile(vec![7], 0.99), Some(7));
    }
}
