//! The seam between openraft and the simulation: an [`AsyncRuntime`] whose tasks, timers and
//! instants are the virtual executor's ([`super::executor`]) and whose `thread_rng` draws from the
//! run's seed, and the openraft type configuration ([`SimConfig`]) that uses it with convoy's own
//! payload types (`Proposal`, `Reply`, `Member`). openraft reaches time and randomness only through
//! its runtime, so with this one the real openraft runs deterministically in one thread.

use std::cell::Cell;
use std::fmt;
use std::future::Future;
use std::io;
use std::ops::{Add, AddAssign, Sub, SubAssign};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::channel::oneshot;
use openraft::AsyncRuntime;
use openraft_rt_tokio::{TokioMpsc, TokioMutex, TokioOneshot};
use rand010::rngs::SmallRng;
use rand010::SeedableRng;

use super::executor::{self, duration_ns, Sleep};
use convoy_raft::{Member, Proposal, Reply};

/// Where virtual time starts, so that openraft may subtract durations from an early instant.
const EPOCH_NS: u64 = 1_000_000 * 1_000_000_000;

thread_local! {
    static RNG_STATE: Cell<u64> = const { Cell::new(0) };
}

/// Seeds the stream `thread_rng` draws from (called at the start of every run).
pub fn seed_rng(seed: u64) {
    RNG_STATE.with(|s| s.set(seed));
}

/// SplitMix64: the next value of the run's RNG stream.
fn next_seed() -> u64 {
    RNG_STATE.with(|s| {
        let z = s.get().wrapping_add(0x9e37_79b9_7f4a_7c15);
        s.set(z);
        let z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1330_11eb);
        z ^ (z >> 31)
    })
}

/// A virtual instant: nanoseconds on the executor's clock (offset by [`EPOCH_NS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SimInstant(u64);

impl SimInstant {
    fn ns_since_start(self) -> u64 {
        self.0.saturating_sub(EPOCH_NS)
    }
}

impl Add<Duration> for SimInstant {
    type Output = Self;
    fn add(self, rhs: Duration) -> Self {
        SimInstant(self.0.saturating_add(duration_ns(rhs)))
    }
}

impl AddAssign<Duration> for SimInstant {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

impl Sub<Duration> for SimInstant {
    type Output = Self;
    fn sub(self, rhs: Duration) -> Self {
        SimInstant(self.0.saturating_sub(duration_ns(rhs)))
    }
}

impl Sub<SimInstant> for SimInstant {
    type Output = Duration;
    fn sub(self, rhs: SimInstant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(rhs.0))
    }
}

impl SubAssign<Duration> for SimInstant {
    fn sub_assign(&mut self, rhs: Duration) {
        *self = *self - rhs;
    }
}

impl openraft::Instant for SimInstant {
    fn now() -> Self {
        SimInstant(EPOCH_NS + executor::now_ns())
    }
}

/// A spawned task's end: its output, or [`Cancelled`] if the task was dropped (its server crashed).
#[derive(Debug)]
pub struct SimJoinHandle<T>(oneshot::Receiver<T>);

/// The task of a [`SimJoinHandle`] was dropped before it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("simulated task cancelled (its server crashed)")]
pub struct Cancelled;

impl<T> Future for SimJoinHandle<T> {
    type Output = Result<T, Cancelled>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0)
            .poll(cx)
            .map(|r| r.map_err(|_| Cancelled))
    }
}

/// A deadline passed before the future finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("simulated deadline elapsed")]
pub struct Elapsed;

/// A future under a virtual deadline.
pub struct SimTimeout<T> {
    future: Pin<Box<T>>,
    sleep: Sleep,
}

impl<R, T: Future<Output = R>> Future for SimTimeout<T> {
    type Output = Result<R, Elapsed>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(v) = self.future.as_mut().poll(cx) {
            return Poll::Ready(Ok(v));
        }
        match Pin::new(&mut self.sleep).poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// openraft's runtime under the simulation.
#[derive(Debug, Default)]
pub struct SimRuntime;

impl AsyncRuntime for SimRuntime {
    type JoinError = Cancelled;
    type JoinHandle<T: openraft::OptionalSend + 'static> = SimJoinHandle<T>;
    type Sleep = Sleep;
    type Instant = SimInstant;
    type TimeoutError = Elapsed;
    type Timeout<R, T: Future<Output = R> + openraft::OptionalSend> = SimTimeout<T>;
    type ThreadLocalRng = SmallRng;

    fn spawn<T>(future: T) -> Self::JoinHandle<T::Output>
    where
        T: Future + openraft::OptionalSend + 'static,
        T::Output: openraft::OptionalSend + 'static,
    {
        let (tx, rx) = oneshot::channel();
        executor::spawn(async move {
            let _ = tx.send(future.await);
        });
        SimJoinHandle(rx)
    }

    fn sleep(duration: Duration) -> Self::Sleep {
        Sleep::for_duration(duration)
    }

    fn sleep_until(deadline: Self::Instant) -> Self::Sleep {
        Sleep::until(deadline.ns_since_start())
    }

    fn timeout<R, F: Future<Output = R> + openraft::OptionalSend>(
        duration: Duration,
        future: F,
    ) -> Self::Timeout<R, F> {
        SimTimeout {
            future: Box::pin(future),
            sleep: Sleep::for_duration(duration),
        }
    }

    fn timeout_at<R, F: Future<Output = R> + openraft::OptionalSend>(
        deadline: Self::Instant,
        future: F,
    ) -> Self::Timeout<R, F> {
        SimTimeout {
            future: Box::pin(future),
            sleep: Sleep::until(deadline.ns_since_start()),
        }
    }

    fn is_panic(_: &Self::JoinError) -> bool {
        // A panic is never caught: it ends the whole run and is reported as its failure.
        false
    }

    fn thread_rng() -> Self::ThreadLocalRng {
        SmallRng::seed_from_u64(next_seed())
    }

    type Mpsc = TokioMpsc;
    type Watch = super::watch::SimWatch;
    type Oneshot = TokioOneshot;
    type Mutex<T: openraft::OptionalSend + 'static> = TokioMutex<T>;

    fn new(_threads: usize) -> Self {
        SimRuntime
    }

    fn block_on<F, T>(&mut self, future: F) -> T
    where
        F: Future<Output = T>,
    {
        // The simulation drives its own root future with `executor::block_on`; openraft never
        // calls this, and a nested run could not be virtual, so it runs `future` by polling alone.
        futures::executor::block_on(future)
    }

    fn spawn_blocking<F, T>(f: F) -> impl Future<Output = Result<T, io::Error>> + Send
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        // No threads in the simulation: the work runs inline, taking no virtual time.
        std::future::ready(Ok(f()))
    }
}

impl fmt::Display for SimInstant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.ns_since_start() / 1_000_000)
    }
}

openraft::declare_raft_types!(
    /// convoy's payloads (`Proposal`, `Reply`, `Member`) on the simulated runtime.
    pub SimConfig:
        D = Proposal,
        R = Reply,
        NodeId = u64,
        Node = Member,
        AsyncRuntime = SimRuntime,
);
