//! A count with its noun, for the words people read: `1 node`, `3 nodes`, `0 nodes` (issue 41 §6: never
//! "1 nodes failed").

/// `n` and `noun`, plural (`noun` + `s`) unless `n` is 1.
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1u32, "node"), "1 node");
        assert_eq!(count(0u32, "node"), "0 nodes");
        assert_eq!(count(3u64, "node"), "3 nodes");
    }
}
