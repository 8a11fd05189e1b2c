//! Ordinal ranges such as `0-1,5` narrowing a deployment's node set (canaries).

use crate::errors::{clip, quote, DomainError};
use std::collections::BTreeSet;

/// Parses `"0-1,5"` into the set of ordinals, refusing ranges outside `0..count`. The cost is
/// bounded by `count`, whatever the text: at most `count` parts are read (more cannot all be
/// distinct), and overlapping parts are merged before any ordinal is produced.
pub fn parse_ranges(
    spec: &str,
    consumer: &str,
    count: usize,
) -> Result<BTreeSet<u32>, DomainError> {
    let bad = |reason: &str| DomainError::invalid("nodes", quote(spec), reason);
    let mut parts: Vec<(u32, u32)> = Vec::new();
    for part in spec.split(',').map(str::trim) {
        if parts.len() == count.max(1) {
            return Err(bad("more ranges than the consumer has nodes"));
        }
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let expected = "expected ordinal ranges such as \"0-1,5\"";
        let a: u32 = a.parse().map_err(|_| bad(expected))?;
        let b: u32 = b.parse().map_err(|_| bad(expected))?;
        if a > b {
            return Err(bad("a range must go from low to high"));
        }
        if b as usize >= count {
            return Err(DomainError::OrdinalOutOfRange {
                consumer: consumer.into(),
                range: clip(part),
                count,
            });
        }
        parts.push((a, b));
    }
    parts.sort_unstable();
    let mut out = BTreeSet::new();
    let mut next = 0u32; // every ordinal below this is in `out` already, or skipped by the sort
    for (a, b) in parts {
        let from = a.max(next);
        if from <= b {
            out.extend(from..=b);
            next = b + 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn parses_ranges_and_singles() {
        assert_eq!(
            parse_ranges("0-1,5", "c", 6).unwrap(),
            BTreeSet::from([0, 1, 5])
        );
        assert_eq!(parse_ranges(" 2 ", "c", 3).unwrap(), BTreeSet::from([2]));
    }

    #[test]
    fn refuses_out_of_range_naming_it() {
        let e = parse_ranges("0-1,7", "web", 4).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid);
        assert_eq!(
            e.to_string(),
            "node range \"7\" is outside the node set of consumer \"web\" (4 nodes)"
        );
    }

    #[test]
    fn refuses_malformed_and_reversed() {
        for spec in ["", "a-b", "1-", "3-1", "1,,2"] {
            assert!(parse_ranges(spec, "c", 10).is_err(), "{spec}");
        }
    }

    #[test]
    fn a_range_bomb_is_refused_without_expanding_it() {
        // 14,000 copies of the whole set of a 10,000-node consumer: ~100 KB of text.
        let bomb = vec!["0-9999"; 14_000].join(",");
        let e = parse_ranges(&bomb, "web", 10_000).unwrap_err();
        assert!(e
            .to_string()
            .contains("more ranges than the consumer has nodes"));
        assert!(
            e.to_string().len() < 300,
            "the error quotes a bounded part: {e}"
        );
    }

    #[test]
    fn overlapping_parts_are_merged_once() {
        let spec = vec!["0-9999"; 500].join(",") + ",5,20000-20001";
        let set = parse_ranges(&spec, "web", 30_000).unwrap();
        assert_eq!(set.len(), 10_002);
        assert_eq!(set.iter().next_back(), Some(&20_001));
        let set = parse_ranges("5-9,0-6,8", "c", 10).unwrap();
        assert_eq!(
            set.into_iter().collect::<Vec<_>>(),
            (0..=9).collect::<Vec<_>>()
        );
    }
}
