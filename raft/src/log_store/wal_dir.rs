//! Where the log's write-ahead log lives (`log_wal_dir`): fixed when the data dir is created,
//! recorded in the data dir, and checked before every open.
//!
//! RocksDB opened with another WAL directory than the one its WAL was written to finds no WAL
//! there, starts with an empty one and silently drops every entry not yet flushed into its
//! files: acknowledged writes and the vote. So [`check`] refuses a data dir whose recorded WAL
//! directory differs from the configured one, or is gone, and a new data dir whose WAL directory
//! already holds another database's WAL files. The record is the file [`WAL_DIR_FILE`] in the
//! data dir, holding the WAL directory's absolute path; no file means the WAL is in the data dir
//! (RocksDB's default, and every data dir made before `log_wal_dir` existed).

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::RaftError;

/// The data dir's record of its WAL directory (absent: the data dir itself).
pub const WAL_DIR_FILE: &str = "convoy-wal-dir";

/// RocksDB's file that exists once a database was created in a directory.
const ROCKSDB_CURRENT: &str = "CURRENT";

/// Checks `configured` (the `log_wal_dir` setting; `None` or the data dir itself: the WAL stays
/// in the data dir) against what `data_dir` recorded. A new data dir records it, and its WAL
/// directory is created; it must hold no WAL files yet.
pub(crate) fn check(data_dir: &Path, configured: Option<&Path>) -> Result<(), RaftError> {
    let storage = |reason: String| RaftError::Storage {
        path: data_dir.display().to_string(),
        reason,
    };
    let data_abs = std::path::absolute(data_dir)
        .map_err(|e| storage(format!("cannot resolve the data dir's path: {e}")))?;
    let configured = configured
        .map(|dir| {
            std::path::absolute(dir)
                .map_err(|e| storage(format!("cannot resolve log_wal_dir {}: {e}", dir.display())))
        })
        .transpose()?
        .filter(|dir| *dir != data_abs);
    let record = data_dir.join(WAL_DIR_FILE);
    if !data_dir.join(ROCKSDB_CURRENT).exists() {
        return start_new(data_dir, &record, configured.as_deref())
            .map_err(|e| storage(e.to_string()));
    }
    let recorded = recorded(data_dir)?;
    if recorded != configured {
        let shown = |dir: &Option<PathBuf>| match dir {
            Some(dir) => dir.display().to_string(),
            None => "the data dir itself".to_string(),
        };
        return Err(RaftError::WalDirMismatch {
            path: data_dir.display().to_string(),
            recorded: shown(&recorded),
            configured: shown(&configured),
        });
    }
    if let Some(dir) = recorded {
        if !dir.is_dir() {
            return Err(RaftError::Corrupt {
                path: data_dir.display().to_string(),
                what: "raft log (RocksDB)".to_string(),
                reason: format!(
                    "its write-ahead log directory {} (log_wal_dir) is missing; restore it if it can be",
                    dir.display()
                ),
            });
        }
    }
    Ok(())
}

/// Where `data_dir` keeps its WAL, as recorded when it was created (`None`: in the data dir), for
/// tools that open a stopped server's data dir without its config (`convoy replay`).
pub fn recorded(data_dir: &Path) -> Result<Option<PathBuf>, RaftError> {
    let record = data_dir.join(WAL_DIR_FILE);
    read_record(&record).map_err(|e| RaftError::Storage {
        path: data_dir.display().to_string(),
        reason: format!("cannot read {}: {e}", record.display()),
    })
}

/// A data dir without a database yet: records where its WAL goes (removing a record a crash
/// left before the database was created) and makes sure that directory holds no WAL files.
fn start_new(data_dir: &Path, record: &Path, wal_dir: Option<&Path>) -> io::Result<()> {
    fs::create_dir_all(data_dir)?;
    let Some(wal_dir) = wal_dir else {
        return match fs::remove_file(record) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    };
    fs::create_dir_all(wal_dir)?;
    if let Some(log) = wal_files(wal_dir)?.first() {
        return Err(io::Error::other(format!(
            "log_wal_dir {} already holds a write-ahead log ({}) of another data dir: give every \
             data dir a WAL directory of its own, and empty this one if its data dir was wiped",
            wal_dir.display(),
            log.display()
        )));
    }
    let temp = record.with_extension("tmp");
    let mut file = File::create(&temp)?;
    file.write_all(wal_dir.as_os_str().as_bytes())?;
    file.sync_all()?;
    fs::rename(&temp, record)?;
    File::open(data_dir)?.sync_all()
}

/// The WAL directory `record` names, or `None` when there is no record.
fn read_record(record: &Path) -> io::Result<Option<PathBuf>> {
    match fs::read(record) {
        Ok(bytes) if bytes.is_empty() => Err(io::Error::other("the file is empty")),
        Ok(bytes) => Ok(Some(PathBuf::from(OsStr::from_bytes(&bytes)))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The RocksDB WAL files (digits, then `.log`: `000012.log`) in `dir`.
pub fn wal_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        let numbered = path
            .file_stem()
            .is_some_and(|stem| !stem.is_empty() && stem.as_bytes().iter().all(u8::is_ascii_digit));
        if numbered && path.extension() == Some(OsStr::new("log")) {
            found.push(path);
        }
    }
    Ok(found)
}
