//! A one-thread executor with virtual time, the simulation's only scheduler: tasks run in the order
//! they were woken, and when none can run the clock jumps to the earliest armed timer. Nothing here
//! reads a wall clock, spawns a thread or iterates a hash map, so a run is a function of its seed.
//!
//! Every task belongs to an owner (a server, or the harness): a task spawned while another is being
//! polled inherits its owner, and [`kill_owner`] drops every task of one owner at once, which is how
//! a simulated server crashes (no more code of it runs, its pending timers and channels go away).

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use thiserror::Error;

/// Who a task belongs to: a server's id, or [`HARNESS`].
pub type Owner = u64;

/// The owner of the harness's own tasks (workload, faults, checkers); never killed.
pub const HARNESS: Owner = 0;

/// Polls without the clock moving after which the run is declared a livelock.
const LIVELOCK_POLLS: u64 = 5_000_000;

/// Why a run of the executor stopped before its root future finished.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Stall {
    /// No task can run and no timer is armed: everything waits on something that never comes.
    #[error("simulation stalled at {at_ms} ms: no task can run and no timer is armed")]
    Deadlock {
        /// Virtual time of the stall.
        at_ms: u64,
    },
    /// Tasks kept waking each other without the clock moving.
    #[error("simulation livelocked at {at_ms} ms: {polls} polls without time passing")]
    Livelock {
        /// Virtual time of the livelock.
        at_ms: u64,
        /// Polls counted.
        polls: u64,
    },
}

type BoxFuture = Pin<Box<dyn Future<Output = ()>>>;

struct Task {
    owner: Owner,
    future: Option<BoxFuture>,
    /// Made once at spawn and lent to every poll (a waker per poll was a measurable cost).
    waker: Arc<TaskWaker>,
}

/// The ready queue, shared with wakers (which must be `Send + Sync`, though all stay on this thread).
#[derive(Default)]
struct Ready {
    queue: VecDeque<(u64, Arc<TaskWaker>)>,
}

struct TaskWaker {
    id: u64,
    /// In the ready queue already: a second wake before the poll adds nothing.
    queued: AtomicBool,
    ready: Arc<Mutex<Ready>>,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.queued.swap(true, Ordering::Relaxed) {
            let mut ready = self.ready.lock().unwrap_or_else(PoisonError::into_inner);
            ready.queue.push_back((self.id, self.clone()));
        }
    }
}

#[derive(Default)]
struct State {
    tasks: BTreeMap<u64, Task>,
    next_task: u64,
    /// Armed timers by (deadline in ns, arming sequence).
    timers: BTreeMap<(u64, u64), Waker>,
    next_timer: u64,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
    static READY: Arc<Mutex<Ready>> = Arc::new(Mutex::new(Ready::default()));
    static NOW_NS: Cell<u64> = const { Cell::new(0) };
    static CURRENT: Cell<Owner> = const { Cell::new(HARNESS) };
    static POLLS: Cell<u64> = const { Cell::new(0) };
}

/// Virtual nanoseconds since the start of the run.
pub fn now_ns() -> u64 {
    NOW_NS.with(Cell::get)
}

/// Virtual milliseconds since the start of the run.
pub fn now_ms() -> u64 {
    now_ns() / 1_000_000
}

/// The owner of the task being polled.
pub fn current_owner() -> Owner {
    CURRENT.with(Cell::get)
}

/// Total polls so far (a measure of the work a run did).
pub fn polls() -> u64 {
    POLLS.with(Cell::get)
}

/// Spawns `future` for the owner of the task being polled.
pub fn spawn(future: impl Future<Output = ()> + 'static) {
    spawn_owned(current_owner(), future);
}

/// Spawns `future` for `owner`; it first runs after the tasks already ready.
pub fn spawn_owned(owner: Owner, future: impl Future<Output = ()> + 'static) {
    let waker = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let id = s.next_task;
        s.next_task += 1;
        let waker = Arc::new(TaskWaker {
            id,
            queued: AtomicBool::new(false),
            ready: READY.with(Arc::clone),
        });
        s.tasks.insert(
            id,
            Task {
                owner,
                future: Some(Box::pin(future)),
                waker: waker.clone(),
            },
        );
        waker
    });
    waker.wake_by_ref();
}

/// Drops every task of `owner` (its futures' destructors run, as a process's memory goes away).
pub fn kill_owner(owner: Owner) {
    let doomed: Vec<Task> = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let ids: Vec<u64> = s
            .tasks
            .iter()
            .filter(|(_, t)| t.owner == owner)
            .map(|(id, _)| *id)
            .collect();
        ids.iter().filter_map(|id| s.tasks.remove(id)).collect()
    });
    // Dropped outside the borrow: destructors may disarm timers or wake other tasks.
    drop(doomed);
}

/// Resets the thread's executor: no task, no timer, time zero. Called at the start of every run.
pub fn reset() {
    let old = STATE.with(|s| std::mem::take(&mut *s.borrow_mut()));
    drop(old);
    READY.with(|r| *r.lock().unwrap_or_else(PoisonError::into_inner) = Ready::default());
    NOW_NS.with(|n| n.set(0));
    CURRENT.with(|c| c.set(HARNESS));
    POLLS.with(|p| p.set(0));
}

/// Takes every task ready now, in the order they were woken (one lock for all of them). A task woken
/// while these run is queued behind them, where it would have been in a single queue.
fn take_ready() -> VecDeque<(u64, Arc<TaskWaker>)> {
    READY.with(|r| std::mem::take(&mut r.lock().unwrap_or_else(PoisonError::into_inner).queue))
}

fn poll_task(id: u64) {
    let taken = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let task = s.tasks.get_mut(&id)?;
        Some((task.owner, task.future.take()?, task.waker.clone()))
    });
    let Some((owner, mut future, waker)) = taken else {
        return;
    };
    let waker = Waker::from(waker);
    let mut cx = Context::from_waker(&waker);
    let previous = CURRENT.with(|c| c.replace(owner));
    POLLS.with(|p| p.set(p.get() + 1));
    let done = future.as_mut().poll(&mut cx).is_ready();
    CURRENT.with(|c| c.set(previous));
    let finished = STATE.with(|s| {
        let mut s = s.borrow_mut();
        match s.tasks.get_mut(&id) {
            // Killed while it ran (its owner crashed itself): drop it now.
            None => Some(future),
            Some(_) if done => s.tasks.remove(&id).map(|_| future),
            Some(task) => {
                task.future = Some(future);
                None
            }
        }
    });
    drop(finished);
}

/// Moves the clock to the earliest timer and wakes every timer due then; false if none is armed.
fn advance() -> bool {
    let due: Vec<Waker> = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let Some((&(deadline, _), _)) = s.timers.iter().next() else {
            return Vec::new();
        };
        NOW_NS.with(|n| n.set(n.get().max(deadline)));
        let later = s.timers.split_off(&(deadline + 1, 0));
        let due = std::mem::replace(&mut s.timers, later);
        due.into_values().collect()
    });
    if due.is_empty() {
        return false;
    }
    for waker in due {
        waker.wake();
    }
    true
}

/// Runs `root` (as a task of [`HARNESS`]) and every task it spawns until `root` finishes.
pub fn block_on<T: 'static>(root: impl Future<Output = T> + 'static) -> Result<T, Stall> {
    let out: Arc<Mutex<Option<T>>> = Arc::new(Mutex::new(None));
    let slot = out.clone();
    spawn_owned(HARNESS, async move {
        let value = root.await;
        *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(value);
    });
    let mut since_advance = 0u64;
    loop {
        let mut ready = take_ready();
        if ready.is_empty() {
            if !advance() {
                return Err(Stall::Deadlock { at_ms: now_ms() });
            }
            since_advance = 0;
            continue;
        }
        while let Some((id, waker)) = ready.pop_front() {
            // Out of the queue: a wake from now on (during its poll too) queues it again.
            waker.queued.store(false, Ordering::Relaxed);
            poll_task(id);
            since_advance += 1;
            if let Some(value) = out.lock().unwrap_or_else(PoisonError::into_inner).take() {
                return Ok(value);
            }
            if since_advance > LIVELOCK_POLLS {
                return Err(Stall::Livelock {
                    at_ms: now_ms(),
                    polls: since_advance,
                });
            }
        }
    }
}

/// A future that is ready once the virtual clock reaches its deadline.
#[derive(Debug)]
pub struct Sleep {
    deadline_ns: u64,
    armed: Option<(u64, u64)>,
}

impl Sleep {
    /// Ready at `deadline_ns` (virtual nanoseconds since the start).
    pub fn until(deadline_ns: u64) -> Self {
        Sleep {
            deadline_ns,
            armed: None,
        }
    }

    /// Ready `duration` from now.
    pub fn for_duration(duration: Duration) -> Self {
        Self::until(now_ns().saturating_add(duration_ns(duration)))
    }

    fn disarm(&mut self) {
        if let Some(key) = self.armed.take() {
            // The thread-local may be gone when a run's state is dropped at thread exit.
            let _ = STATE.try_with(|s| {
                if let Ok(mut s) = s.try_borrow_mut() {
                    s.timers.remove(&key);
                }
            });
        }
    }
}

/// A duration in nanoseconds, saturating.
pub fn duration_ns(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if now_ns() >= self.deadline_ns {
            self.disarm();
            return Poll::Ready(());
        }
        let deadline = self.deadline_ns;
        let key = match self.armed {
            Some(key) => key,
            None => {
                let key = STATE.with(|s| {
                    let mut s = s.borrow_mut();
                    let seq = s.next_timer;
                    s.next_timer += 1;
                    (deadline, seq)
                });
                self.armed = Some(key);
                key
            }
        };
        STATE.with(|s| {
            s.borrow_mut().timers.insert(key, cx.waker().clone());
        });
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        self.disarm();
    }
}

/// Sleeps `duration` of virtual time.
pub fn sleep(duration: Duration) -> Sleep {
    Sleep::for_duration(duration)
}

/// Yields once: the task runs again after the tasks already ready.
pub async fn yield_now() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            return Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}
