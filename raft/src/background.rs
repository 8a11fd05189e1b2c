//! Background work on its own thread at a lower CPU priority: a snapshot's serialization, so that
//! the apply loop, the transport and the HTTP workers preempt it on a busy machine.
//!
//! Building a snapshot of a large state is seconds of CPU (1M fleet nodes: a 110 MB snapshot) on
//! each server at about the same time. At the same priority as the write path it takes turns with
//! every write's threads and shows up in the write latency's tail; at a higher nice value the
//! scheduler runs it in the time the write path leaves. It gets its own thread, not one of tokio's
//! blocking pool, because a thread's priority can be lowered but not raised back without privilege
//! and the pool's threads are reused for the log's reads.

use std::io;
use tokio::sync::oneshot;

/// The nice value background work runs at (0 is the default, 19 the lowest priority): a weight of
/// about a tenth of a default thread's, so it still makes progress under a steady load.
pub const BACKGROUND_NICE: i32 = 10;

/// Runs `work` on a new thread named `name` and waits for its result. `work` decides when to call
/// [`lower_this_thread`] (after any step that holds a lock the write path needs).
pub async fn run<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> io::Result<T> {
    let (tx, rx) = oneshot::channel();
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let _ = tx.send(work());
        })?;
    rx.await
        .map_err(|_| io::Error::other(format!("the {name} thread panicked")))
}

/// Raises the calling thread's nice value to [`BACKGROUND_NICE`] (never lowers it). Returns the
/// thread's nice value afterwards, or `None` where per-thread priorities are not supported.
pub fn lower_this_thread() -> Option<i32> {
    imp::lower_this_thread()
}

#[cfg(target_os = "linux")]
mod imp {
    use super::BACKGROUND_NICE;

    pub fn lower_this_thread() -> Option<i32> {
        // On Linux `PRIO_PROCESS` with a thread id sets that one thread's nice value.
        // SAFETY: plain syscalls on the calling thread's own id; no memory is passed.
        unsafe {
            let tid = libc::gettid() as libc::id_t;
            *libc::__errno_location() = 0;
            let now = libc::getpriority(libc::PRIO_PROCESS, tid);
            if now == -1 && *libc::__errno_location() != 0 {
                return None;
            }
            if now < BACKGROUND_NICE
                && libc::setpriority(libc::PRIO_PROCESS, tid, BACKGROUND_NICE) != 0
            {
                tracing::debug!(error = %std::io::Error::last_os_error(), "cannot lower a background thread's priority");
                return Some(now);
            }
            Some(now.max(BACKGROUND_NICE))
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub fn lower_this_thread() -> Option<i32> {
        None
    }
}

#[cfg(test)]
#[path = "background_test.rs"]
mod tests;
