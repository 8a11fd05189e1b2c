//! Read-ahead of the log for openraft's startup replay, which reads it back 64 entries at a time.
//!
//! On a restart openraft re-applies every committed entry after the last snapshot, asking the
//! log reader for `[i, i + 64)`, then `[i + 64, i + 128)`, ... (a fixed chunk size, no setting).
//! A fresh RocksDB iterator and seek per 64 entries, and reading on the thread that applies, made
//! reading half of a long replay. So once a reader asks for the range right after the previous one,
//! a thread reads on from there, one iterator per chunk (32 KiB of encoded entries, doubling up to
//! [`CHUNK_BYTES`]), and decodes the entries into a bounded queue: the reader takes its entries
//! from the queue while the thread reads ahead on another core.
//!
//! The queue only ever serves a log nobody has written to since it was opened: the first append,
//! truncation or purge switches the read-ahead off for good (before writing), and a read that used
//! the queue is redone directly if that happened while it ran. So every answer is what a direct read
//! would have returned at some moment during the call. A read that does not continue the queue
//! (another range, a concurrent reader) is a direct read and stops the thread: openraft's start
//! makes one right after the replay (it looks up the first log id), so the thread and its queue
//! do not outlive the start.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use openraft::type_config::alias::EntryOf;
use rocksdb::DB;
use tokio::sync::mpsc;

use super::{read_entries, ReadMode};
use crate::types::TypeConfig;

/// Encoded bytes of entries the thread reads per iterator (and sends as one chunk), at most.
const CHUNK_BYTES: usize = 1024 * 1024;
/// The first chunk's bytes, so that the reader starts soon; each next chunk doubles.
const FIRST_CHUNK_BYTES: usize = 32 * 1024;
/// Chunks the thread may be ahead of the reader.
const QUEUE_CHUNKS: usize = 4;

type Entry = EntryOf<TypeConfig>;

/// The read-ahead state shared by every clone of a log store.
#[derive(Default)]
pub(super) struct ReadAhead {
    /// Set, for good, by the first write to the log.
    written: AtomicBool,
    state: Mutex<State>,
}

#[derive(Default)]
enum State {
    /// No thread, and no range read yet.
    #[default]
    Idle,
    /// No thread; the last range read ended at this index (a read from there starts one).
    After(u64),
    /// A thread reads ahead.
    Running(Ahead),
    /// A reader is taking entries from the queue (for good if its call was cancelled: direct
    /// reads from then on).
    Busy,
    /// Direct reads only, for good: the log has been written, or the thread has stopped and
    /// its queue has been served (a new thread would find the same end of the log, or hole).
    Off,
}

/// The reader's end of a read-ahead: entries from index `next` on.
pub(super) struct Ahead {
    next: u64,
    buf: VecDeque<Entry>,
    rx: mpsc::Receiver<Vec<Entry>>,
    /// The thread has stopped (end of the log, a hole, an error): nothing more will come.
    done: bool,
}

impl ReadAhead {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the log has been written since it was opened.
    pub(super) fn written(&self) -> bool {
        self.written.load(Ordering::SeqCst)
    }

    /// Switches the read-ahead off for good and stops its thread; call before writing to the log.
    pub(super) fn stop(&self) {
        if !self.written() && !self.written.swap(true, Ordering::SeqCst) {
            *self.lock() = State::Off;
        }
    }

    /// The read-ahead to serve `[start, end)` from, starting a thread if this range continues the
    /// previous one; `None` means: read directly.
    pub(super) fn take(&self, db: &Arc<DB>, start: u64, end: u64) -> Option<Ahead> {
        let mut state = self.lock();
        if self.written() {
            *state = State::Off;
            return None;
        }
        match std::mem::replace(&mut *state, State::Busy) {
            State::Running(ahead) if ahead.next == start => Some(ahead),
            State::After(last_end) if last_end == start => match spawn(db, start) {
                Ok(ahead) => Some(ahead),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot start the log read-ahead thread; reading directly");
                    *state = State::After(end);
                    None
                }
            },
            State::Busy => None,
            State::Off => {
                *state = State::Off;
                None
            }
            // Anything else (dropping a thread that no longer matches): a direct read.
            State::Idle | State::After(_) | State::Running(_) => {
                *state = State::After(end);
                None
            }
        }
    }

    /// Hands back the read-ahead after a read.
    pub(super) fn put_back(&self, ahead: Ahead) {
        let mut state = self.lock();
        let exhausted = ahead.done && ahead.buf.is_empty();
        *state = if self.written() || exhausted {
            State::Off
        } else {
            State::Running(ahead)
        };
    }
}

impl Ahead {
    /// The index of the next entry this read-ahead serves.
    pub(super) fn next(&self) -> u64 {
        self.next
    }

    /// Moves the entries `[self.next, end)` into `out`, waiting for the thread as needed. Stops
    /// early when the thread has stopped; `self.next` is then the first index not served.
    pub(super) async fn serve(&mut self, end: u64, out: &mut Vec<Entry>) {
        while self.next < end {
            match self.buf.pop_front() {
                Some(entry) if entry.log_id.index == self.next => {
                    out.push(entry);
                    self.next += 1;
                }
                Some(_) => {
                    // Not contiguous (the thread checks, so never expected): give up on the queue.
                    self.buf.clear();
                    self.done = true;
                    self.rx.close();
                    return;
                }
                None if self.done => return,
                // `buf` is empty here: taking the chunk's allocation as it is copies nothing.
                None => match self.rx.recv().await {
                    Some(chunk) => self.buf = VecDeque::from(chunk),
                    None => self.done = true,
                },
            }
        }
    }
}

fn spawn(db: &Arc<DB>, start: u64) -> std::io::Result<Ahead> {
    let (tx, rx) = mpsc::channel(QUEUE_CHUNKS);
    let weak = Arc::downgrade(db);
    std::thread::Builder::new()
        .name("convoy-log-readahead".into())
        .spawn(move || read_ahead(weak, start, tx))?;
    Ok(Ahead {
        next: start,
        buf: VecDeque::new(),
        rx,
        done: false,
    })
}

/// The thread: reads and decodes contiguous chunks from `next` on until the end of the log, a
/// hole, an error, or the reader's end is dropped. It holds the database only while reading a
/// chunk, so closing the store is never delayed by more than one chunk.
fn read_ahead(db: Weak<DB>, mut next: u64, tx: mpsc::Sender<Vec<Entry>>) {
    let mut budget = FIRST_CHUNK_BYTES;
    let mut expected = 0;
    loop {
        let Some(db) = db.upgrade() else { return };
        let chunk = read_entries(&db, next, None, ReadMode::Bulk { budget, expected });
        drop(db);
        let chunk: Vec<Entry> = match chunk {
            Ok(chunk) => chunk,
            Err(e) => {
                // The reader reads this range directly next, and reports the error.
                tracing::debug!(error = %e, next, "log read-ahead stopped");
                return;
            }
        };
        let Some(last) = chunk.last().map(|e| e.log_id.index) else {
            return;
        };
        if chunk[0].log_id.index != next {
            return;
        }
        next = last + 1;
        // Room for the next chunk: as many entries as this one per byte of budget, and a few more.
        let doubled = (budget * 2).min(CHUNK_BYTES);
        expected = (chunk.len().saturating_mul(doubled) / budget).saturating_add(chunk.len() / 8);
        budget = doubled;
        if tx.blocking_send(chunk).is_err() {
            return;
        }
    }
}
