//! One simulated run from a seed: three (or five) servers founded, the workload writing through
//! the leader and the agents reporting to it, the leader's own handlers (`leader.rs`), faults drawn from the seed, the
//! checkers at every step; then every fault healed, every server restarted, and the end checks:
//! the cluster converges, every replica holds the same bytes, nothing acknowledged was lost.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::time::Duration;

use convoy_actors::domain::{ClusterState, Command};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use super::cluster::{Client, Cluster, Written};
use super::decoded;
use super::disk::FsyncModel;
use super::executor::{self, HARNESS};
use super::faults::Faults;
use super::leader::LeaderJobs;
use super::net::{NetStats, SimNet};
use super::observe::Observations;
use super::reads::{self, ReadMode};
use super::runtime;
use super::schedule::Schedule;
use super::workload::Workload;
use crate::chaos::check::{rollback_order, windows, Violation};
use crate::chaos::check_policies::{
    holds_have_evidence, pins_select_their_version, rollbacks_revoke_dependencies,
    weak_moves_hold_slots, weak_moves_wait_their_jitter,
};
use crate::chaos::check_waits::{timeout_in_active_time, waits_agree};

/// The harness's step: how often it acts and checks.
const STEP: Duration = Duration::from_millis(100);

/// Steps between two reports of every agent: 1 s, `convoy agent`'s default `--interval`.
const AGENT_STEPS: u64 = 10;
/// At most this many client writes in flight.
const MAX_IN_FLIGHT: usize = 4;
/// How long the healed cluster has to converge at the end.
const SETTLE: Duration = Duration::from_secs(60);
/// The simulation's raft heartbeat (elections after 5–10 of them): convoy's production 50 ms made
/// heartbeats most of a run's messages; virtual time gains nothing from them being that short.
pub const SIM_HEARTBEAT_MS: u64 = 250;
/// convoy's production heartbeat (`RaftConfig::new`), which the regression seeds replay with.
pub const PRODUCTION_HEARTBEAT_MS: u64 = 50;

/// What one run does.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// The seed: the whole run is a function of it (and of the options).
    pub seed: u64,
    /// Servers in the cluster.
    pub servers: u64,
    /// Simulated minutes of workload and faults before the end checks.
    pub minutes: f64,
    /// The fsync model (the mutation `AckBeforeSync` must be caught).
    pub fsync: FsyncModel,
    /// Inject faults (crashes, partitions, loss, ...).
    pub faults: bool,
    /// Keep every trace line, not only the last ones.
    pub keep_trace: bool,
    /// How clients' reads are served (the mutation `Stale` must be caught).
    pub reads: ReadMode,
    /// The drawn commands and faults kept (the shrinker's filter); all by default.
    pub schedule: Schedule,
    /// The raft heartbeat in ms; the election timeout is 5–10 heartbeats.
    pub heartbeat_ms: u64,
    /// openraft's leader restore on (the mutation `LeaderRestore` must be caught).
    pub leader_restore: bool,
    /// Snapshots go to openraft without the product's guard for one the receiver's log overtook
    /// (the mutation `NoOvertakenGuard`: openraft's log IO assertion must be met).
    pub no_overtaken_guard: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            seed: 1,
            servers: 3,
            minutes: 1.0,
            fsync: FsyncModel::Honest,
            faults: true,
            keep_trace: false,
            reads: ReadMode::Consistent,
            schedule: Schedule::default(),
            heartbeat_ms: SIM_HEARTBEAT_MS,
            leader_restore: false,
            no_overtaken_guard: false,
        }
    }
}

/// Counts of one run.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// Simulated milliseconds the run lasted.
    pub sim_ms: u64,
    /// Writes acknowledged.
    pub acked: u64,
    /// Writes with no answer (maybe committed).
    pub unknown: u64,
    /// Commands the state machine refused (acknowledged all the same).
    pub refused: u64,
    /// Person commands drawn (sent, or dropped by the schedule).
    pub ops: u64,
    /// Faults drawn (injected, or dropped by the schedule).
    pub faults: u64,
    /// Clients' reads answered (and checked for linearizability).
    pub reads: u64,
    /// Terms with a leader.
    pub terms: u64,
    /// The highest index applied.
    pub applied: u64,
    /// Task polls (the work the run did).
    pub polls: u64,
    /// Messages.
    pub net: NetStats,
}

/// The result of one run.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// The options it ran with.
    pub options: SimOptions,
    /// Hex SHA-256 of the trace.
    pub trace_hash: String,
    /// Lines in the trace.
    pub trace_lines: u64,
    /// The trace lines kept (the last ones, or all with `keep_trace`).
    pub trace: Vec<String>,
    /// Broken rules; empty when the run passed.
    pub violations: Vec<Violation>,
    /// Counts.
    pub stats: RunStats,
}

impl RunReport {
    /// The command that replays this run.
    pub fn replay_command(&self) -> String {
        let o = &self.options;
        let mut cmd = format!(
            "cargo run -p convoy-lab -- simulate --seed {} --servers {} --minutes {}",
            o.seed, o.servers, o.minutes
        );
        if o.fsync == FsyncModel::AckBeforeSync {
            cmd.push_str(" --mutate ack-before-sync");
        }
        if o.reads == ReadMode::Stale {
            cmd.push_str(" --mutate stale-reads");
        }
        if o.leader_restore {
            cmd.push_str(" --mutate leader-restore");
        }
        if o.no_overtaken_guard {
            cmd.push_str(" --mutate no-overtaken-guard");
        }
        if !o.faults {
            cmd.push_str(" --no-faults");
        }
        cmd.push_str(&o.schedule.flags());
        if o.heartbeat_ms != SIM_HEARTBEAT_MS {
            cmd.push_str(&format!(" --heartbeat-ms {}", o.heartbeat_ms));
        }
        cmd.push_str(" --trace");
        cmd
    }
}

/// Runs one seed to the end and reports it. Never panics: a panic of the code under test, a stall
/// or a harness error is a violation of the run.
pub fn run(options: &SimOptions) -> RunReport {
    executor::reset();
    decoded::forget();
    runtime::seed_rng(options.seed.rotate_left(32) ^ 0x5eed);
    let obs = Observations::new(options.keep_trace);
    let scenario = scenario(options.clone(), obs.clone());
    let outcome = catch_unwind(AssertUnwindSafe(|| executor::block_on(scenario)));
    let mut stats = match outcome {
        Ok(Ok(Ok(stats))) => stats,
        Ok(Ok(Err(e))) => {
            obs.violate("harness", format!("{e:#}"));
            RunStats::default()
        }
        Ok(Err(stall)) => {
            obs.violate("stall", stall.to_string());
            RunStats::default()
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".to_string());
            obs.violate("panic", what);
            RunStats::default()
        }
    };
    (stats.ops, stats.faults) = obs.drawn();
    stats.polls = executor::polls();
    stats.sim_ms = stats.sim_ms.max(executor::now_ms());
    executor::reset();
    decoded::forget();
    let (trace_hash, trace_lines) = obs.trace_hash();
    RunReport {
        options: options.clone(),
        trace_hash,
        trace_lines,
        trace: obs.trace_lines(),
        violations: obs.violations(),
        stats,
    }
}

/// Shared between the harness loop, the faults and the writes it spawns.
pub(super) struct Shared {
    pub(super) workload: Workload,
    in_flight: usize,
    stats: RunStats,
}

/// Spawns one client write; its answer updates the model and the counts.
fn spawn_write(shared: &Rc<RefCell<Shared>>, client: &Client, command: Command) {
    shared.borrow_mut().in_flight += 1;
    let (shared, client) = (shared.clone(), client.clone());
    let obs = client.observations();
    let op = reads::write_called(&obs, &command);
    executor::spawn_owned(HARNESS, async move {
        let written = client.write(&command, Duration::from_secs(5)).await;
        reads::write_returned(&obs, op, &command, &written);
        let mut s = shared.borrow_mut();
        s.in_flight -= 1;
        match written {
            Written::Done { response, .. } => {
                s.stats.acked += 1;
                if response.is_ok() {
                    s.workload.acknowledged(&command);
                } else {
                    s.stats.refused += 1;
                }
            }
            Written::Unknown(_) => s.stats.unknown += 1,
        }
    });
}

/// A command in a trace line: its variant and its first names, cut short.
fn describe(command: &Command) -> String {
    let text = format!("{command:?}");
    text.chars().take(160).collect()
}

/// The domain checkers over one server's state: windows and rollback order of every deployment.
fn check_domain(obs: &Observations, server: u64, state: &ClusterState, all: bool) {
    let ids = if all {
        state
            .deployments(&Default::default())
            .into_iter()
            .map(|d| d.id)
            .collect()
    } else {
        state.active_deployments()
    };
    for id in ids {
        let Some(view) = state.deployment(id) else {
            continue;
        };
        let waits = waits_agree(&view)
            .into_iter()
            .chain(timeout_in_active_time(&view));
        for v in windows(&view)
            .into_iter()
            .chain(rollback_order(&view))
            .chain(waits)
        {
            obs.violate(v.rule, format!("s{server} {id}: {}", v.detail));
        }
    }
    let policies = weak_moves_hold_slots(state)
        .into_iter()
        .chain(holds_have_evidence(state))
        .chain(pins_select_their_version(state))
        .chain(weak_moves_wait_their_jitter(state))
        .chain(rollbacks_revoke_dependencies(state));
    for v in policies {
        obs.violate(v.rule, format!("s{server}: {}", v.detail));
    }
}

async fn scenario(options: SimOptions, obs: Observations) -> anyhow::Result<RunStats> {
    let mut rng = StdRng::seed_from_u64(options.seed);
    let net = SimNet::new(StdRng::seed_from_u64(rng.gen()));
    if options.no_overtaken_guard {
        net.without_overtaken_guard();
    }
    let mut cluster = Cluster::new(options.servers, options.fsync, net, obs.clone())?;
    cluster.set_heartbeat(options.heartbeat_ms)?;
    if options.leader_restore {
        cluster.restore_leaders();
    }
    obs.trace(format!("seed {} servers {}", options.seed, options.servers));
    for id in cluster.ids() {
        cluster.start(id).await?;
    }
    cluster.initialize(1).await?;
    let client = cluster.client();
    let shared = Rc::new(RefCell::new(Shared {
        workload: Workload::new(StdRng::seed_from_u64(rng.gen())),
        in_flight: 0,
        stats: RunStats::default(),
    }));
    // The reads draw from a stream of their own.
    let mut reads_rng = StdRng::seed_from_u64(options.seed ^ 0x0bad_5eed_7ead);
    let mut faults = Faults::new(
        StdRng::seed_from_u64(rng.gen()),
        options.faults,
        options.schedule.clone(),
    );
    // The one origin of the leader's jobs' instants: only virtual durations are added to it.
    let jobs = Rc::new(RefCell::new(LeaderJobs::new(std::time::Instant::now())));
    let end_ms = (options.minutes * 60_000.0) as u64;
    let mut step = 0u64;
    // The applied index each server's state was last checked at: a state not changed since is not
    // checked again (the checkers are functions of the state).
    let mut checked: std::collections::BTreeMap<u64, u64> = Default::default();
    while executor::now_ms() < end_ms {
        executor::sleep(STEP).await;
        step += 1;
        let now = Duration::from_millis(executor::now_ms());
        faults.step(&mut cluster, &shared, &obs).await?;
        let up: Vec<u64> = cluster
            .ids()
            .into_iter()
            .filter(|id| cluster.is_up(*id))
            .collect();
        let Some(&reader) = up.get(rng.gen_range(0..up.len().max(1))) else {
            continue;
        };
        // A person's command, every few steps.
        if shared.borrow().in_flight < MAX_IN_FLIGHT && rng.gen_bool(0.3) {
            let command = cluster.read(reader, |state, _| {
                shared.borrow_mut().workload.next_command(state)
            });
            if let Some(command) = command {
                let n = obs.next_op();
                if options.schedule.keeps_op(n) {
                    obs.trace(format!("op {n}: {}", describe(&command)));
                    spawn_write(&shared, &client, command);
                } else {
                    obs.trace(format!("op {n} dropped"));
                }
            }
        }
        // A client's read of a resource, on a server of its own.
        if reads_rng.gen_bool(0.2) {
            let names = shared.borrow().workload.resource_names();
            if let (Some(name), Some(&server)) =
                (names.choose(&mut reads_rng), up.choose(&mut reads_rng))
            {
                reads::spawn_read(&cluster, &client, server, name.clone(), options.reads);
            }
        }
        // The leader's handlers follow leadership.
        let leader = cluster.leader().filter(|l| cluster.is_up(*l));
        let on_leader = leader.and_then(|l| cluster.applied_of(l).map(|a| (l, a)));
        jobs.borrow_mut().leader_is(on_leader, &client);
        // The agents, every second (the agent's default interval), report to the leader's consumer
        // handlers.
        if step.is_multiple_of(AGENT_STEPS) {
            let reports = cluster.read(reader, |state, _| {
                shared.borrow_mut().workload.agents_step(state, now)
            });
            if let Some(reports) = reports {
                jobs.borrow_mut().reported(reports);
            }
        }
        // The leader's handlers: batches, deadline ticks, liveness, housekeeping.
        super::leader::step(&jobs, &obs);
        // The domain checkers, every second, on every server up whose state changed since.
        if step.is_multiple_of(10) {
            for id in &up {
                let index = cluster.last_applied(*id);
                if checked.insert(*id, index) == Some(index) {
                    continue;
                }
                cluster.read(*id, |state, _| check_domain(&obs, *id, state, false));
            }
        }
    }
    obs.trace("workload ends: healing every fault");
    faults.heal(&mut cluster, &obs).await?;
    // The writes still in flight end (answered or timed out) before the barrier.
    while shared.borrow().in_flight > 0 {
        executor::sleep(STEP).await;
    }
    let settled = settle(&cluster, &client, &obs).await;
    if settled {
        end_checks(&cluster, &obs);
    }
    obs.check_linearizable();
    let mut stats = shared.borrow().stats.clone();
    stats.reads = obs.reads_answered();
    stats.terms = obs.leaders().len() as u64;
    stats.applied = obs.max_applied();
    stats.net = cluster.net.stats();
    Ok(stats)
}

/// Waits for a write to commit on the healed cluster and every server to apply it.
async fn settle(cluster: &Cluster, client: &Client, obs: &Observations) -> bool {
    let deadline = executor::now_ms() + SETTLE.as_millis() as u64;
    let mut index = None;
    while executor::now_ms() < deadline && index.is_none() {
        let barrier = Command::CreateResource {
            name: format!("settle-{}", executor::now_ms()),
        };
        if let Written::Done { index: i, .. } = client.write(&barrier, Duration::from_secs(5)).await
        {
            index = Some(i);
        } else {
            executor::sleep(Duration::from_millis(500)).await;
        }
    }
    let Some(index) = index else {
        obs.violate(
            "liveness",
            format!("no write committed within {SETTLE:?} of healing"),
        );
        return false;
    };
    while executor::now_ms() < deadline {
        let applied: BTreeSet<u64> = cluster
            .ids()
            .iter()
            .map(|id| cluster.last_applied(*id))
            .collect();
        if applied.len() == 1 && applied.iter().all(|a| *a >= index) {
            obs.trace(format!("settled at index {index}"));
            return true;
        }
        executor::sleep(Duration::from_millis(100)).await;
    }
    let behind: Vec<(u64, u64)> = cluster
        .ids()
        .into_iter()
        .map(|id| (id, cluster.last_applied(id)))
        .filter(|(_, applied)| *applied < index)
        .collect();
    obs.violate(
        "liveness",
        format!("servers (id, applied) {behind:?} did not apply index {index} within {SETTLE:?} of healing"),
    );
    false
}

/// The end checks on the settled cluster: replicas identical, nothing acknowledged lost, the
/// domain checkers over every deployment.
fn end_checks(cluster: &Cluster, obs: &Observations) {
    let digests: Vec<(u64, (u64, String))> = cluster
        .ids()
        .into_iter()
        .filter_map(|id| cluster.digest(id).map(|d| (id, d)))
        .collect();
    let distinct: BTreeSet<&(u64, String)> = digests.iter().map(|(_, d)| d).collect();
    if distinct.len() > 1 {
        obs.violate(
            "replicas-differ",
            format!("(server, (index, sha256)): {digests:?}"),
        );
    }
    for (index, key) in obs.acked_writes() {
        match obs.applied_at(index) {
            Some(applied) if applied == key => {}
            other => obs.violate(
                "lost-write",
                format!("acknowledged {key:?} at {index}, applied {other:?}"),
            ),
        }
    }
    for id in cluster.ids() {
        cluster.read(id, |state, _| check_domain(obs, id, state, true));
    }
    let (hash, lines) = obs.trace_hash();
    obs.trace(format!(
        "end checks done; trace so far {lines} lines, {}",
        &hash[..16]
    ));
}
