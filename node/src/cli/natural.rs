//! Natural order of names for people: runs of digits compare as numbers, so `node-2` comes before
//! `node-10` (the API lists ids in byte order, where `node-10` comes first).

use std::cmp::Ordering;

/// `a` against `b` in natural order: digit runs by value (then by length, so `01` follows `1`), the
/// rest byte by byte.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let (da, ra) = split_digits(a);
                let (db, rb) = split_digits(b);
                let order = compare_numbers(da, db).then(da.len().cmp(&db.len()));
                if order != Ordering::Equal {
                    return order;
                }
                (a, b) = (ra, rb);
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(y);
                }
                (a, b) = (&a[1..], &b[1..]);
            }
        }
    }
}

/// The leading digits of `s` and the rest.
fn split_digits(s: &[u8]) -> (&[u8], &[u8]) {
    let end = s
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(s.len());
    s.split_at(end)
}

/// Two runs of digits by value, however long (leading zeros ignored).
fn compare_numbers(a: &[u8], b: &[u8]) -> Ordering {
    let trim = |s: &[u8]| -> usize { s.iter().position(|c| *c != b'0').unwrap_or(s.len()) };
    let (a, b) = (&a[trim(a)..], &b[trim(b)..]);
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(names: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        v.sort_by(|a, b| natural_cmp(a, b));
        v
    }

    #[test]
    fn numbers_inside_names_sort_by_value() {
        assert_eq!(
            sorted(&["node-10", "node-2", "node-1", "node-100", "edge-3", "node-9"]),
            ["edge-3", "node-1", "node-2", "node-9", "node-10", "node-100"]
        );
        assert_eq!(
            sorted(&["rack2-n10", "rack10-n1", "rack2-n9"]),
            ["rack2-n9", "rack2-n10", "rack10-n1"]
        );
    }

    #[test]
    fn zeros_huge_numbers_and_plain_text_are_total_and_stable() {
        assert_eq!(sorted(&["a01", "a1", "a001"]), ["a1", "a01", "a001"]);
        let huge = "n-123456789012345678901234567890";
        assert_eq!(sorted(&[huge, "n-99"]), ["n-99", huge]);
        assert_eq!(sorted(&["b", "a", "ab", ""]), ["", "a", "ab", "b"]);
        assert_eq!(natural_cmp("x7", "x7"), Ordering::Equal);
        assert_eq!(natural_cmp("x", "x1"), Ordering::Less);
    }
}
