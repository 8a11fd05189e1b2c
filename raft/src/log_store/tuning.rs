//! How the RocksDB under the log is tuned ([`StorageTuning`]): the `logs` memtable's size, the `logs`
//! compaction style, a cap on background (flush and compaction) writes, and the directory of the
//! write-ahead log. The first three are safe to change between restarts of a server; none changes
//! what is stored or how it is read. The WAL directory is fixed when the data dir is created
//! (checked at every open, see `wal_dir.rs`).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use rocksdb::{DBCompactionStyle, Options};

/// The `logs` memtable's size unless configured (`log_memtable_mb`). Opening the database after a crash
/// replays the WAL written since the last flush into memtables and flushes them, before anything else can
/// run: RocksDB's default (64 MiB) let a million entries pile up in the WAL, and reopening took 1.2 s. This
/// bounds it.
pub const DEFAULT_LOG_MEMTABLE_BYTES: usize = 8 * 1024 * 1024;

/// The largest `log_memtable_mb` accepted: a memtable is held in memory twice while it is flushed.
pub const MAX_LOG_MEMTABLE_MB: u64 = 1024;

/// The largest `background_io_mb_per_sec` accepted (1 TiB/s: any real disk; 0 means no cap).
pub const MAX_BACKGROUND_IO_MB_PER_SEC: u64 = 1 << 20;

/// How the `logs` column family compacts its files (`log_compaction`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogCompaction {
    /// RocksDB's default: files merged level by level; the least space.
    #[default]
    Level,
    /// Whole sorted runs merged at once: less rewriting of entries that are purged soon anyway.
    Universal,
}

impl FromStr for LogCompaction {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "level" => Ok(LogCompaction::Level),
            "universal" => Ok(LogCompaction::Universal),
            other => Err(format!(
                "unknown log_compaction {:?}: expected \"level\" or \"universal\"",
                other.chars().take(32).collect::<String>()
            )),
        }
    }
}

impl fmt::Display for LogCompaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LogCompaction::Level => "level",
            LogCompaction::Universal => "universal",
        })
    }
}

/// RocksDB settings for the log (see the module docs); `Default` is what a server runs unless configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageTuning {
    /// Size of the `logs` memtable, bytes: larger flushes less often but makes a restart after a crash
    /// replay more of the WAL.
    pub log_memtable_bytes: usize,
    /// Compaction style of the `logs` column family.
    pub log_compaction: LogCompaction,
    /// Cap on the bytes per second flushes and compactions write (RocksDB's rate limiter), so that they
    /// leave the disk to the WAL's fsyncs; `None`: no cap.
    pub background_io_bytes_per_sec: Option<u64>,
    /// Where RocksDB keeps the write-ahead log (every append is fsynced there), e.g. on a disk of
    /// its own; `None`: in the data dir. Recorded when the data dir is created and fixed after.
    pub wal_dir: Option<PathBuf>,
}

impl Default for StorageTuning {
    fn default() -> Self {
        StorageTuning {
            log_memtable_bytes: DEFAULT_LOG_MEMTABLE_BYTES,
            log_compaction: LogCompaction::Level,
            background_io_bytes_per_sec: None,
            wal_dir: None,
        }
    }
}

impl StorageTuning {
    /// Sets the database-wide options (`db`) and those of the `logs` column family (`logs`).
    pub(crate) fn apply(&self, db: &mut Options, logs: &mut Options) {
        db.set_max_total_wal_size(self.max_wal_bytes());
        logs.set_write_buffer_size(self.log_memtable_bytes);
        logs.set_compaction_style(match self.log_compaction {
            LogCompaction::Level => DBCompactionStyle::Level,
            LogCompaction::Universal => DBCompactionStyle::Universal,
        });
        if let Some(rate) = self.background_io_bytes_per_sec {
            // Refill every 100 ms (RocksDB's default period); fairness 10 is RocksDB's default too.
            db.set_ratelimiter(rate.min(i64::MAX as u64) as i64, 100_000, 10);
        }
        if let Some(dir) = &self.wal_dir {
            db.set_wal_dir(dir);
        }
    }
}

impl StorageTuning {
    /// The most WAL RocksDB keeps: past it, it flushes the column families that keep old WAL files alive
    /// (`meta` takes a few bytes per commit and never fills its memtable), so that the WAL a restart replays
    /// stays a few `logs` memtables long: four of them, and at least 32 MiB.
    pub fn max_wal_bytes(&self) -> u64 {
        (4 * self.log_memtable_bytes as u64).max(32 * 1024 * 1024)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compaction_styles_parse_and_print_back() {
        for style in [LogCompaction::Level, LogCompaction::Universal] {
            assert_eq!(style.to_string().parse::<LogCompaction>(), Ok(style));
        }
        let err = "fifo".parse::<LogCompaction>().unwrap_err();
        assert!(
            err.contains("\"fifo\"") && err.contains("universal"),
            "{err}"
        );
        let long = "x".repeat(10_000).parse::<LogCompaction>().unwrap_err();
        assert!(long.len() < 120, "a huge value is not echoed: {long}");
    }

    #[test]
    fn the_wal_holds_a_few_memtables() {
        let default = StorageTuning::default();
        assert_eq!(default.max_wal_bytes(), 32 * 1024 * 1024);
        let big = StorageTuning {
            log_memtable_bytes: 64 * 1024 * 1024,
            ..default
        };
        assert_eq!(big.max_wal_bytes(), 256 * 1024 * 1024);
    }
}
