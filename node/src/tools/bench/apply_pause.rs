//! (h) Apply-loop pause, in process: the replicated state machine ([`Machine`]) filled with
//! `--pause-objects` plain resources or fleet nodes, then writes applied in chunks under a write lock
//! (as the replica's apply loop does) while a second thread builds snapshots the way the replica does
//! (capture under the read lock with `freeze`, serialize after releasing it). Reports how long the
//! lock is held per applied chunk and per capture, the longest wait of a chunk for the lock, the
//! old cost (serializing under the lock), and RSS per object (`VmRSS` growth / objects).
//!
//! In process, without RocksDB or the network, so that the numbers are the state machine's own;
//! run one kind per process (`--scenario apply-pause-resources`, then `apply-pause-nodes`): the
//! allocator keeps what the first fill freed, which would hide the second's growth.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use convoy_actors::domain::{Command, NodeReport, ResourceReport, VersionProgress};
use convoy_raft::StateMachine;

use super::context::Ctx;
use crate::machine::Machine;
use crate::metrics::process::resident_bytes;

/// What the state is filled with.
#[derive(Clone, Copy, Debug)]
pub enum Objects {
    /// Plain resources (`POST /v1/resources`), no versions.
    Resources,
    /// Fleet nodes in consumers of [`PER_CONSUMER`], each having reported one resource.
    Nodes,
}

/// Nodes per consumer.
const PER_CONSUMER: usize = 10_000;
/// Commands applied under one write lock (the replica applies what is ready, up to 1,024 or 1 ms).
const CHUNK: usize = 64;

fn node_id(i: usize) -> String {
    // Hostname-like ids (42 bytes), as in `large-state`.
    format!(
        "host-{:04}-{:05}.eu-west-1.fleet.example.com",
        i / PER_CONSUMER,
        i % PER_CONSUMER
    )
}

fn report(node: String, current: u64) -> NodeReport {
    let done = VersionProgress {
        downloaded: true,
        installed: true,
        done: true,
        error: None,
        healthy: Some(true),
    };
    let resource = ResourceReport {
        interested: Some(true),
        current: Some(current),
        versions: BTreeMap::from([(1, done.clone()), (2, done)]),
        removed: false,
        log: None,
    };
    NodeReport {
        node,
        active: Some(true),
        resources: BTreeMap::from([("app".to_string(), resource)]),
        ..Default::default()
    }
}

fn apply(m: &mut Machine, cmd: Command, at: u64) {
    if let Err(e) = m.apply(cmd, at) {
        panic!("bench command refused: {e}");
    }
}

/// Fills `m` with `n` objects of `kind`.
fn fill(m: &mut Machine, kind: Objects, n: usize) {
    match kind {
        Objects::Resources => {
            for i in 0..n {
                let name = format!("resource-{i:07}");
                apply(m, Command::CreateResource { name }, 1);
            }
        }
        Objects::Nodes => {
            apply(m, Command::CreateResource { name: "app".into() }, 1);
            for c in 0..n.div_ceil(PER_CONSUMER) {
                let nodes = (c * PER_CONSUMER..((c + 1) * PER_CONSUMER).min(n))
                    .map(node_id)
                    .collect();
                let name = format!("fleet{c:04}");
                apply(m, Command::CreateConsumer { name, nodes }, 1);
            }
            for start in (0..n).step_by(1000) {
                let reports = (start..(start + 1000).min(n))
                    .map(|i| report(node_id(i), 1))
                    .collect();
                apply(m, Command::ReportNodes(reports), 1);
            }
        }
    }
}

/// The `k`th write of the measured load: a new resource, or one node's changed report.
fn write(kind: Objects, n: usize, k: usize) -> Command {
    match kind {
        Objects::Resources => Command::CreateResource {
            name: format!("write-{k:08}"),
        },
        Objects::Nodes => {
            // Spread over the fleet, alternating the version each node runs.
            let i = k.wrapping_mul(7919) % n;
            Command::ReportNodes(vec![report(node_id(i), 1 + (k % 2) as u64)])
        }
    }
}

/// A writer that counts bytes, for the snapshot size.
struct Count(u64);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// This thread's CPU time so far (`CLOCK_THREAD_CPUTIME_ID`): a lock hold's own work, without the
/// time the thread sat preempted on a busy machine.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// What [`writes`] measured per chunk, each sorted.
struct Chunks {
    /// Wall time the write lock was held.
    holds: Vec<Duration>,
    /// CPU time of this thread while it held the lock.
    cpu: Vec<Duration>,
    /// Wall time waiting for the lock.
    waits: Vec<Duration>,
    /// The next write's number.
    next: usize,
}

/// Applies writes `from`, ... in chunks under the write lock for `duration`.
fn writes(
    machine: &RwLock<Machine>,
    kind: Objects,
    n: usize,
    from: usize,
    duration: Duration,
) -> Chunks {
    let (mut holds, mut waits, mut cpu) = (Vec::new(), Vec::new(), Vec::new());
    let mut k = from;
    let until = Instant::now() + duration;
    while Instant::now() < until {
        let cmds: Vec<Command> = (k..k + CHUNK).map(|k| write(kind, n, k)).collect();
        k += CHUNK;
        let asked = Instant::now();
        let mut guard = machine.write().unwrap_or_else(|e| e.into_inner());
        let t = Instant::now();
        let c = thread_cpu();
        waits.push(t - asked);
        for cmd in cmds {
            apply(&mut guard, cmd, 2);
        }
        cpu.push(thread_cpu().saturating_sub(c));
        drop(guard);
        holds.push(t.elapsed());
    }
    holds.sort();
    waits.sort();
    cpu.sort();
    Chunks {
        holds,
        cpu,
        waits,
        next: k,
    }
}

/// Runs the scenario for `kind`.
pub fn run(ctx: &mut Ctx, kind: Objects) -> anyhow::Result<()> {
    let n = ctx.args.pause_objects;
    let scenario = match kind {
        Objects::Resources => "apply-pause-resources",
        Objects::Nodes => "apply-pause-nodes",
    };
    let what = match kind {
        Objects::Resources => "resources",
        Objects::Nodes => "nodes",
    };
    let rss_before = resident_bytes();
    let t = Instant::now();
    let mut m = Machine::default();
    fill(&mut m, kind, n);
    let filled = t.elapsed();
    let rss_after = resident_bytes();
    let per_object = rss_after.saturating_sub(rss_before) as f64 / n.max(1) as f64;
    ctx.results.add(
        scenario,
        format!("RSS per object, {n} {what}"),
        Some(per_object),
        "B",
        format!(
            "VmRSS growth over the fill / {n} (in process, state only; fill took {:.1} s)",
            filled.as_secs_f64()
        ),
    );

    // The old way: the whole state serialized under the lock.
    let t = Instant::now();
    let mut bytes = Count(0);
    m.snapshot_to(&mut bytes)?;
    let locked_snapshot = t.elapsed();
    ctx.results.add(
        scenario,
        format!("snapshot serialized under the lock, {n} {what}"),
        Some(ms(locked_snapshot)),
        "ms",
        format!(
            "{} bytes: the pause every writer waited behind before `freeze`",
            bytes.0
        ),
    );

    let machine = Arc::new(RwLock::new(m));
    // The control: the same writes with no snapshot being built.
    let quiet = writes(&machine, kind, n, 0, ctx.args.duration / 2);
    let written = quiet.next;
    let quiet_note = format!("{written} writes in chunks of {CHUNK}, no snapshot running");
    let max = |v: &[Duration]| v.last().copied().unwrap_or_default();
    for (metric, value) in [
        (
            "apply chunk holds the lock, no snapshots, p99",
            percentile(&quiet.holds, 0.99),
        ),
        (
            "apply chunk holds the lock, no snapshots, max",
            max(&quiet.holds),
        ),
        (
            "apply chunk's CPU time under the lock, no snapshots, p99",
            percentile(&quiet.cpu, 0.99),
        ),
        (
            "apply chunk's CPU time under the lock, no snapshots, max",
            max(&quiet.cpu),
        ),
    ] {
        ctx.results.add(
            scenario,
            format!("{metric}, {n} {what}"),
            Some(ms(value)),
            "ms",
            quiet_note.clone(),
        );
    }
    let stop = Arc::new(AtomicBool::new(false));
    let snapshots = Arc::new(AtomicU64::new(0));
    let snapshotter = {
        let (machine, stop, snapshots) = (machine.clone(), stop.clone(), snapshots.clone());
        std::thread::spawn(move || -> io::Result<Vec<(Duration, Duration)>> {
            let mut holds = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let guard = machine.read().unwrap_or_else(|e| e.into_inner());
                let (t, c) = (Instant::now(), thread_cpu());
                let frozen = guard.freeze().expect("Machine freezes");
                let cpu = thread_cpu().saturating_sub(c);
                drop(guard);
                holds.push((t.elapsed(), cpu));
                frozen(&mut Count(0))?;
                snapshots.fetch_add(1, Ordering::Relaxed);
            }
            Ok(holds)
        })
    };
    let started = Instant::now();
    let busy = writes(&machine, kind, n, written, ctx.args.duration);
    let k = busy.next - written;
    let elapsed = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let frozen = snapshotter
        .join()
        .map_err(|_| anyhow::anyhow!("the snapshot thread panicked"))??;
    let mut freezes: Vec<Duration> = frozen.iter().map(|f| f.0).collect();
    let mut freeze_cpu: Vec<Duration> = frozen.iter().map(|f| f.1).collect();
    freezes.sort();
    freeze_cpu.sort();
    let built = snapshots.load(Ordering::Relaxed);
    let note = format!(
        "{k} writes in chunks of {CHUNK} over {:.1} s ({:.0}/s) while {built} snapshots were built",
        elapsed.as_secs_f64(),
        k as f64 / elapsed.as_secs_f64()
    );
    for (metric, value) in [
        (
            "apply chunk holds the lock, p99",
            percentile(&busy.holds, 0.99),
        ),
        ("apply chunk holds the lock, max", max(&busy.holds)),
        (
            "apply chunk's CPU time under the lock, p99",
            percentile(&busy.cpu, 0.99),
        ),
        ("apply chunk's CPU time under the lock, max", max(&busy.cpu)),
        ("freeze holds the lock, max", max(&freezes)),
        ("freeze's CPU time under the lock, max", max(&freeze_cpu)),
        (
            "apply chunk waits for the lock, p99",
            percentile(&busy.waits, 0.99),
        ),
        ("apply chunk waits for the lock, max", max(&busy.waits)),
    ] {
        ctx.results.add(
            scenario,
            format!("{metric}, {n} {what}"),
            Some(ms(value)),
            "ms",
            note.clone(),
        );
    }
    Ok(())
}
