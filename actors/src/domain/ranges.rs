//! Ordinal ranges such as `0-1,5` narrowing a deployment's node set (canaries).

use super::errors::DomainError;
use std::collections::BTreeSet;

/// Parses `"0-1,5"` into the set of ordinals, refusing ranges outside `0..count`.
pub fn parse_ranges(
    spec: &str,
    consumer: &str,
    count: usize,
) -> Result<BTreeSet<u32>, DomainError> {
    let bad = || {
        DomainError::invalid(
            "nodes",
            format!("{spec:?}"),
            "expected ordinal ranges such as \"0-1,5\"",
        )
    };
    let mut out = BTreeSet::new();
    for part in spec.split(',').map(str::trim) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let a: u32 = a.parse().map_err(|_| bad())?;
        let b: u32 = b.parse().map_err(|_| bad())?;
        if a > b {
            return Err(DomainError::invalid(
                "nodes",
                format!("{spec:?}"),
                "a range must go from low to high",
            ));
        }
        if b as usize >= count {
            return Err(DomainError::OrdinalOutOfRange {
                consumer: consumer.into(),
                range: part.into(),
                count,
            });
        }
        out.extend(a..=b);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ErrorKind;

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
}
