//! Admission of unauthenticated connections: caps on pending handshakes (per source address and
//! overall) and a throttled summary of the connections refused. Pure bookkeeping: the server
//! drives it and passes the time in.
//!
//! A connection is *pending* from accept until its handshake succeeds or fails. When a source
//! already has [`DEFAULT_MAX_PENDING_PER_IP`] pending handshakes, its oldest one is dropped to
//! make room; when [`DEFAULT_MAX_PENDING`] are pending overall, the oldest of all is. So a
//! flood of silent or slow connections holds a bounded number of sockets, and cannot lock a
//! real peer out: a real handshake takes one round trip, the flood must out-pace it.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// Default cap on pending handshakes from one source IP address.
pub const DEFAULT_MAX_PENDING_PER_IP: usize = 32;
/// Default cap on pending handshakes from all sources together.
pub const DEFAULT_MAX_PENDING: usize = 128;
/// Default interval between two summary lines about refused connections.
pub const DEFAULT_REFUSAL_LOG_INTERVAL: Duration = Duration::from_secs(10);
/// At most this many distinct sources are remembered per interval (more are counted as this).
pub const MAX_SOURCES_TRACKED: usize = 4096;

/// Identifies one pending handshake in a [`Pending`] table.
pub type Ticket = u64;

/// The table of pending handshakes, each holding a `T` (the server keeps a handle that closes
/// the connection when dropped).
#[derive(Debug)]
pub struct Pending<T> {
    per_ip: usize,
    global: usize,
    next: Ticket,
    entries: BTreeMap<Ticket, (IpAddr, T)>,
    by_ip: std::collections::HashMap<IpAddr, VecDeque<Ticket>>,
}

impl<T> Pending<T> {
    /// An empty table allowing `per_ip` pending handshakes per source and `global` in all (each
    /// at least 1).
    pub fn new(per_ip: usize, global: usize) -> Self {
        Self {
            per_ip: per_ip.max(1),
            global: global.max(1),
            next: 0,
            entries: BTreeMap::new(),
            by_ip: Default::default(),
        }
    }

    /// Admits a handshake from `ip` holding `value`. Returns its ticket, and the value of the
    /// handshake evicted to make room (the oldest from `ip` if `ip` is at its cap, else the
    /// oldest overall if the table is full), if any.
    pub fn admit(&mut self, ip: IpAddr, value: T) -> (Ticket, Option<(IpAddr, T)>) {
        let from_ip = self.by_ip.get(&ip).map_or(0, VecDeque::len);
        let victim = if from_ip >= self.per_ip {
            self.by_ip.get(&ip).and_then(|q| q.front().copied())
        } else if self.entries.len() >= self.global {
            self.entries.keys().next().copied()
        } else {
            None
        };
        let evicted = victim.and_then(|t| self.finish(t));
        let ticket = self.next;
        self.next += 1;
        self.entries.insert(ticket, (ip, value));
        self.by_ip.entry(ip).or_default().push_back(ticket);
        (ticket, evicted)
    }

    /// Removes the handshake `ticket` (finished, failed or evicted); returns its value if it was
    /// still pending.
    pub fn finish(&mut self, ticket: Ticket) -> Option<(IpAddr, T)> {
        let (ip, value) = self.entries.remove(&ticket)?;
        if let Some(queue) = self.by_ip.get_mut(&ip) {
            queue.retain(|t| *t != ticket);
            if queue.is_empty() {
                self.by_ip.remove(&ip);
            }
        }
        Some((ip, value))
    }

    /// How many handshakes are pending.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no handshake is pending.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many handshakes from `ip` are pending.
    pub fn pending_from(&self, ip: IpAddr) -> usize {
        self.by_ip.get(&ip).map_or(0, VecDeque::len)
    }
}

/// Why an unauthenticated connection was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Its handshake failed (wrong secret, garbage, wrong version, reflected id, hang-up).
    BadHandshake,
    /// Its handshake did not finish within the timeout.
    TimedOut,
    /// It was dropped to make room for a newer connection.
    Evicted,
}

/// One summary of refusals over an interval, emitted as one log line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Connections refused in all.
    pub refused: u64,
    /// Distinct source addresses among them (saturates at [`MAX_SOURCES_TRACKED`]).
    pub sources: usize,
    /// Of which: failed handshakes.
    pub bad_handshake: u64,
    /// Of which: handshakes that timed out.
    pub timed_out: u64,
    /// Of which: evicted pending handshakes.
    pub evicted: u64,
    /// Accept errors (such as running out of file descriptors) in the interval.
    pub accept_errors: u64,
    /// The last accept error, if any.
    pub last_accept_error: Option<String>,
    /// The interval covered.
    pub interval: Duration,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "refused {} unauthenticated connections from {} sources in the last {:?} \
             ({} bad handshakes, {} timed out, {} evicted); {} accept errors",
            self.refused,
            self.sources,
            self.interval,
            self.bad_handshake,
            self.timed_out,
            self.evicted,
            self.accept_errors
        )?;
        if let Some(e) = &self.last_accept_error {
            write!(f, " (last: {e})")?;
        }
        Ok(())
    }
}

/// Counts refusals and accept errors, and yields at most one [`Summary`] per interval.
#[derive(Debug)]
pub struct RefusalLog {
    interval: Duration,
    since: Instant,
    current: Summary,
    sources: HashSet<IpAddr>,
    total: u64,
}

impl RefusalLog {
    /// A log summarising every `interval`, starting `now`.
    pub fn new(interval: Duration, now: Instant) -> Self {
        Self {
            interval,
            since: now,
            current: Summary::default(),
            sources: HashSet::new(),
            total: 0,
        }
    }

    /// Counts one refused connection from `ip`.
    pub fn refused(&mut self, ip: IpAddr, why: Refusal) {
        let s = &mut self.current;
        s.refused += 1;
        self.total += 1;
        match why {
            Refusal::BadHandshake => s.bad_handshake += 1,
            Refusal::TimedOut => s.timed_out += 1,
            Refusal::Evicted => s.evicted += 1,
        }
        if self.sources.len() < MAX_SOURCES_TRACKED {
            self.sources.insert(ip);
        }
    }

    /// Counts one failed accept.
    pub fn accept_failed(&mut self, error: &std::io::Error) {
        self.current.accept_errors += 1;
        self.current.last_accept_error = Some(error.to_string().chars().take(100).collect());
    }

    /// The summary of the interval that ended, if one ended by `now` and anything happened in
    /// it; starts the next interval then.
    pub fn due(&mut self, now: Instant) -> Option<Summary> {
        if now.saturating_duration_since(self.since) < self.interval {
            return None;
        }
        self.take(now)
    }

    /// The summary since the last one, whether or not the interval is over (at shutdown), if
    /// anything happened; starts the next interval.
    pub fn take(&mut self, now: Instant) -> Option<Summary> {
        let elapsed = now.saturating_duration_since(self.since);
        self.since = now;
        let mut summary = std::mem::take(&mut self.current);
        summary.sources = std::mem::take(&mut self.sources).len();
        summary.interval = elapsed;
        (summary.refused > 0 || summary.accept_errors > 0).then_some(summary)
    }

    /// Connections refused since the log was made.
    pub fn total_refused(&self) -> u64 {
        self.total
    }

    /// The summary interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }
}

#[cfg(test)]
#[path = "admission_test.rs"]
mod tests;
