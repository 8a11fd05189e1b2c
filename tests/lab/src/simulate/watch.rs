//! A watch channel for the simulated runtime that wakes its receivers in the order they waited.
//! tokio's watch spreads its waiters over eight shards picked at random (its thread-local RNG,
//! seeded from the OS), so the order in which it wakes openraft's tasks, and with it the whole
//! run, changed from one run of a seed to the next; this one has no randomness.

use std::future::poll_fn;
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard};
use std::task::{Poll, Waker};

use openraft::async_runtime::watch::{RecvError, SendError};
use openraft::async_runtime::{Watch, WatchReceiver, WatchSender};
use openraft::{OptionalSend, OptionalSync};

use super::log_store::lock;

#[derive(Default)]
struct Meta {
    version: u64,
    senders: usize,
    receivers: usize,
    waiting: Vec<Waker>,
}

struct Shared<T> {
    value: RwLock<T>,
    meta: Mutex<Meta>,
}

impl<T> Shared<T> {
    fn read(&self) -> RwLockReadGuard<'_, T> {
        self.value.read().unwrap_or_else(|e| e.into_inner())
    }

    fn changed(&self) {
        let waiting = {
            let mut meta = lock(&self.meta);
            meta.version += 1;
            std::mem::take(&mut meta.waiting)
        };
        waiting.into_iter().for_each(Waker::wake);
    }
}

/// The deterministic watch of [`super::runtime::SimRuntime`].
pub struct SimWatch;

/// Its sending half.
pub struct SimWatchSender<T>(Arc<Shared<T>>);

/// Its receiving half.
pub struct SimWatchReceiver<T> {
    shared: Arc<Shared<T>>,
    seen: u64,
}

impl<T> Clone for SimWatchSender<T> {
    fn clone(&self) -> Self {
        lock(&self.0.meta).senders += 1;
        SimWatchSender(self.0.clone())
    }
}

impl<T> Drop for SimWatchSender<T> {
    fn drop(&mut self) {
        let waiting = {
            let mut meta = lock(&self.0.meta);
            meta.senders -= 1;
            if meta.senders > 0 {
                return;
            }
            std::mem::take(&mut meta.waiting)
        };
        waiting.into_iter().for_each(Waker::wake);
    }
}

impl<T> Clone for SimWatchReceiver<T> {
    fn clone(&self) -> Self {
        lock(&self.shared.meta).receivers += 1;
        SimWatchReceiver {
            shared: self.shared.clone(),
            seen: self.seen,
        }
    }
}

impl<T> Drop for SimWatchReceiver<T> {
    fn drop(&mut self) {
        lock(&self.shared.meta).receivers -= 1;
    }
}

impl Watch for SimWatch {
    type Sender<T: OptionalSend + OptionalSync> = SimWatchSender<T>;
    type Receiver<T: OptionalSend + OptionalSync> = SimWatchReceiver<T>;
    type Ref<'a, T: OptionalSend + 'a> = RwLockReadGuard<'a, T>;

    fn channel<T: OptionalSend + OptionalSync>(init: T) -> (Self::Sender<T>, Self::Receiver<T>) {
        let shared = Arc::new(Shared {
            value: RwLock::new(init),
            meta: Mutex::new(Meta {
                version: 0,
                senders: 1,
                receivers: 1,
                waiting: Vec::new(),
            }),
        });
        (
            SimWatchSender(shared.clone()),
            SimWatchReceiver { shared, seen: 0 },
        )
    }
}

impl<T: OptionalSend + OptionalSync> WatchSender<SimWatch, T> for SimWatchSender<T> {
    fn send(&self, value: T) -> Result<(), SendError<T>> {
        if lock(&self.0.meta).receivers == 0 {
            return Err(SendError(value));
        }
        *self.0.value.write().unwrap_or_else(|e| e.into_inner()) = value;
        self.0.changed();
        Ok(())
    }

    fn send_if_modified<F>(&self, modify: F) -> bool
    where
        F: FnOnce(&mut T) -> bool,
    {
        let modified = modify(&mut self.0.value.write().unwrap_or_else(|e| e.into_inner()));
        if modified {
            self.0.changed();
        }
        modified
    }

    fn borrow_watched(&self) -> RwLockReadGuard<'_, T> {
        self.0.read()
    }

    fn subscribe(&self) -> SimWatchReceiver<T> {
        let seen = {
            let mut meta = lock(&self.0.meta);
            meta.receivers += 1;
            meta.version
        };
        SimWatchReceiver {
            shared: self.0.clone(),
            seen,
        }
    }
}

impl<T: OptionalSend + OptionalSync> WatchReceiver<SimWatch, T> for SimWatchReceiver<T> {
    async fn changed(&mut self) -> Result<(), RecvError> {
        poll_fn(|cx| {
            let mut meta = lock(&self.shared.meta);
            if meta.version != self.seen {
                self.seen = meta.version;
                return Poll::Ready(Ok(()));
            }
            if meta.senders == 0 {
                return Poll::Ready(Err(RecvError(())));
            }
            meta.waiting.push(cx.waker().clone());
            Poll::Pending
        })
        .await
    }

    fn borrow_watched(&self) -> RwLockReadGuard<'_, T> {
        self.shared.read()
    }

    fn borrow_and_update(&mut self) -> RwLockReadGuard<'_, T> {
        self.seen = lock(&self.shared.meta).version;
        self.shared.read()
    }
}
