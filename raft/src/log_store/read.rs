//! Reading a range of log entries back from the `logs` column family, checking that they are
//! contiguous.

use openraft::type_config::alias::EntryOf;
use rocksdb::{Direction, IteratorMode, DB};

use super::{cf, checked_reads, key_index, rocks_error, StoreError, CF_LOGS};
use crate::codec;
use crate::types::TypeConfig;

/// The file readahead of the read-ahead thread's sequential reads.
const BULK_READAHEAD_BYTES: usize = 1024 * 1024;

/// How [`read_entries`] reads.
#[derive(Clone, Copy, Debug)]
pub(super) enum ReadMode {
    /// Every entry of the range.
    All,
    /// Stops once it holds this many encoded bytes (always returning at least one entry).
    Budget(usize),
    /// As `Budget`, for a long sequential read: a large file readahead, the block cache left to
    /// the blocks of other reads, and room for about `expected` entries from the start.
    Bulk { budget: usize, expected: usize },
}

/// A `Vec` capacity for the entries of `[start, end)`, bounded for huge or open ranges.
pub(super) fn capacity(start: u64, end: Option<u64>) -> usize {
    end.map_or(0, |end| end.saturating_sub(start).min(4096) as usize)
}

/// Reads the entries with index in `[start, end)` (to the end of the log if `end` is `None`),
/// checking that they are contiguous.
pub(super) fn read_entries(
    db: &DB,
    start: u64,
    end: Option<u64>,
    mode: ReadMode,
) -> Result<Vec<EntryOf<TypeConfig>>, StoreError> {
    let logs = cf(db, CF_LOGS)?;
    let mut opts = checked_reads();
    if let Some(end) = end {
        opts.set_iterate_upper_bound(end.to_be_bytes());
    }
    let (budget, room) = match mode {
        ReadMode::All => (None, capacity(start, end)),
        ReadMode::Budget(budget) => (Some(budget), capacity(start, end)),
        ReadMode::Bulk { budget, expected } => {
            opts.set_readahead_size(BULK_READAHEAD_BYTES);
            opts.fill_cache(false);
            (Some(budget), expected)
        }
    };
    let start_key = start.to_be_bytes();
    let mut out = Vec::with_capacity(room);
    let mut expected: Option<u64> = None;
    let mut bytes = 0usize;
    for item in db.iterator_cf_opt(
        logs,
        opts,
        IteratorMode::From(&start_key, Direction::Forward),
    ) {
        let (key, value) = item.map_err(rocks_error("read log entries", CF_LOGS))?;
        let index = key_index(&key)?;
        if end.is_some_and(|end| index >= end)
            || budget.is_some_and(|budget| bytes >= budget && !out.is_empty())
        {
            break;
        }
        bytes += value.len();
        if let Some(expected) = expected {
            if index != expected {
                return Err(StoreError::Hole {
                    expected,
                    found: index,
                });
            }
        }
        expected = Some(index + 1);
        out.push(codec::decode(&value).map_err(|source| StoreError::Codec {
            what: "log entry",
            cf: CF_LOGS,
            key: index.to_string(),
            source,
        })?);
    }
    Ok(out)
}
