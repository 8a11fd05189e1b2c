//! Which of a seed's drawn operations and faults a run keeps. The workload's person commands and
//! the faults are numbered as they are drawn (from 0); a dropped one is still drawn from its
//! stream (so the others keep their draws) but not sent or injected. The shrinker filters these
//! lists; `--keep-ops 0,3,7-9 --keep-faults 2` replays a shrunk schedule.

use std::collections::BTreeSet;
use std::fmt;

use thiserror::Error;

/// The most numbers a list may name (a schedule is at most that long).
pub const MAX_LISTED: u64 = 1_000_000;

/// A list that does not parse.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ListError {
    /// An item is neither `N` nor `A-B`.
    #[error("{0:?} is not a number or a range A-B")]
    Item(String),
    /// A range ends before it starts.
    #[error("range {0}-{1} ends before it starts")]
    Backwards(u64, u64),
    /// The list names too many numbers.
    #[error("the list names more than {MAX_LISTED} numbers")]
    TooLong,
}

/// A set of numbers written as `0,3,7-9` (an empty string is the empty set).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct List(pub BTreeSet<u64>);

impl List {
    /// Parses `0,3,7-9`.
    pub fn parse(text: &str) -> Result<Self, ListError> {
        let mut set = BTreeSet::new();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let number = |s: &str| {
                s.trim()
                    .parse::<u64>()
                    .map_err(|_| ListError::Item(item.chars().take(40).collect()))
            };
            let (a, b) = match item.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None => (number(item)?, number(item)?),
            };
            if b < a {
                return Err(ListError::Backwards(a, b));
            }
            if b - a >= MAX_LISTED || set.len() as u64 + (b - a) >= MAX_LISTED {
                return Err(ListError::TooLong);
            }
            set.extend(a..=b);
        }
        Ok(List(set))
    }
}

impl fmt::Display for List {
    /// Runs of consecutive numbers as ranges: `0,3,7-9`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let mut run: Option<(u64, u64)> = None;
        for &n in &self.0 {
            run = match run {
                Some((a, b)) if b + 1 == n => Some((a, n)),
                Some(done) => {
                    parts.push(done);
                    Some((n, n))
                }
                None => Some((n, n)),
            };
        }
        parts.extend(run);
        let text: Vec<String> = parts
            .into_iter()
            .map(|(a, b)| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                }
            })
            .collect();
        f.write_str(&text.join(","))
    }
}

/// What a run keeps of its drawn schedule; `None` keeps all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    /// The person commands kept, by number.
    pub ops: Option<List>,
    /// The faults kept, by number.
    pub faults: Option<List>,
}

impl Schedule {
    /// Whether command `n` is sent.
    pub fn keeps_op(&self, n: u64) -> bool {
        self.ops.as_ref().is_none_or(|l| l.0.contains(&n))
    }

    /// Whether fault `n` is injected.
    pub fn keeps_fault(&self, n: u64) -> bool {
        self.faults.as_ref().is_none_or(|l| l.0.contains(&n))
    }

    /// The flags that select this schedule (empty when it keeps all).
    pub fn flags(&self) -> String {
        let mut flags = String::new();
        if let Some(ops) = &self.ops {
            flags.push_str(&format!(" --keep-ops '{ops}'"));
        }
        if let Some(faults) = &self.faults {
            flags.push_str(&format!(" --keep-faults '{faults}'"));
        }
        flags
    }
}
