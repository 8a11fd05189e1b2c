//! The snapshot directory inside the data dir: the one current snapshot file, replaced
//! atomically (written to a temporary file, fsynced, renamed), and the data dir's store id that
//! stamps every snapshot file written here.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rocksdb::DB;

use super::format::StoreId;
use crate::log_store::{cf, checked_reads, rocks_error, synced, StoreError, CF_META};

/// The snapshot directory's name inside the data dir.
pub const SNAPSHOT_DIR: &str = "snapshot";
/// The current snapshot's file name.
pub const CURRENT: &str = "current.snap";
/// Temporary files start with this; leftovers of a crash are removed on open.
const TEMP_PREFIX: &str = "tmp-";
/// The `meta` key of the data dir's store id.
const KEY_STORE_ID: &[u8] = b"store_id";

/// Where snapshot files live, and the store id they are stamped with.
#[derive(Debug)]
pub struct SnapshotDir {
    dir: PathBuf,
    store: StoreId,
    next_temp: AtomicU64,
}

impl SnapshotDir {
    /// Opens (creating) the snapshot directory of the data dir of `db`, removing temporary files
    /// left by a crash, and reads (creating on first open) the data dir's store id.
    pub fn open(db: &DB) -> Result<Self, StoreError> {
        let dir = db.path().join(SNAPSHOT_DIR);
        let io_err = |op: &'static str| {
            let path = dir.display().to_string();
            move |source: io::Error| StoreError::Io { op, path, source }
        };
        fs::create_dir_all(&dir).map_err(io_err("create the snapshot directory"))?;
        for entry in fs::read_dir(&dir).map_err(io_err("list the snapshot directory"))? {
            let entry = entry.map_err(io_err("list the snapshot directory"))?;
            if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                fs::remove_file(entry.path()).map_err(io_err("remove a temporary snapshot"))?;
            }
        }
        Ok(Self {
            dir,
            store: store_id(db)?,
            next_temp: AtomicU64::new(0),
        })
    }

    /// This data dir's store id.
    pub fn store(&self) -> &StoreId {
        &self.store
    }

    /// The snapshot directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The current snapshot's path.
    pub fn current_path(&self) -> PathBuf {
        self.dir.join(CURRENT)
    }

    /// The current snapshot file, opened for reading, if there is one.
    pub fn open_current(&self) -> io::Result<Option<File>> {
        match File::open(self.current_path()) {
            Ok(file) => Ok(Some(file)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A new temporary file (readable and writable) to write a snapshot into.
    pub fn create_temp(&self) -> io::Result<Temp> {
        let n = self.next_temp.fetch_add(1, Ordering::Relaxed);
        let path = self
            .dir
            .join(format!("{TEMP_PREFIX}{}-{n}.snap", std::process::id()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok(Temp {
            path,
            file: Some(file),
        })
    }

    /// Makes `temp` the current snapshot: fsyncs it, renames it over the current one and fsyncs
    /// the directory. Returns the file, still open (its contents stay readable even after a
    /// later snapshot replaces it).
    pub fn commit(&self, mut temp: Temp) -> io::Result<File> {
        let file = temp.file.take().expect("a temp file is committed once");
        file.sync_all()?;
        fs::rename(&temp.path, self.current_path())?;
        File::open(&self.dir)?.sync_all()?;
        Ok(file)
    }
}

/// A temporary snapshot file; removed when dropped uncommitted.
#[derive(Debug)]
pub struct Temp {
    path: PathBuf,
    file: Option<File>,
}

impl Temp {
    /// The file, to write into.
    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("an uncommitted temp file")
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the file's name and returns it, still open and readable.
    pub fn into_unlinked(mut self) -> File {
        let file = self.file.take().expect("an uncommitted temp file");
        let _ = fs::remove_file(&self.path);
        file
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Reads the data dir's store id from `meta`, creating a random one on first use (synced).
fn store_id(db: &DB) -> Result<StoreId, StoreError> {
    let meta = cf(db, CF_META)?;
    let found = db
        .get_pinned_cf_opt(meta, KEY_STORE_ID, &checked_reads())
        .map_err(rocks_error("read store id", CF_META))?;
    if let Some(bytes) = found {
        if let Ok(id) = StoreId::try_from(&bytes[..]) {
            return Ok(id);
        }
        return Err(StoreError::BadStoreId(bytes.len()));
    }
    let id: StoreId = rand::random();
    db.put_cf_opt(meta, KEY_STORE_ID, id, &synced())
        .map_err(rocks_error("save store id", CF_META))?;
    Ok(id)
}
