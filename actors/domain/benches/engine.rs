//! Domain core benchmark: node-progress applies/s for a 100,000-node rolling deployment, and state bytes per node.
//!
//! With `CONVOY_ENGINE_ONCE=<batch>` set it skips criterion and runs the timed loop once (`timed_applies`, never
//! inlined) for that batch size, then prints the final snapshot's length and FNV-1a hash: the unit to count
//! instructions of under callgrind (`--collect-atstart=no --toggle-collect='*timed_applies*'`), which a loaded
//! machine does not disturb. See docs/BENCHMARKS.md.

use convoy_domain::*;
use criterion::{criterion_group, Criterion, Throughput};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

const NODES: usize = 100_000;

fn vp(done: bool) -> VersionProgress {
    VersionProgress {
        downloaded: true,
        installed: done,
        done,
        error: None,
        healthy: None,
    }
}

fn report(i: usize, current: u64, versions: &[u64]) -> NodeReport {
    let rr = ResourceReport {
        interested: None,
        current: Some(current),
        versions: versions.iter().map(|v| (*v, vp(true))).collect(),
        removed: false,
        log: None,
    };
    NodeReport {
        node: format!("node-{i:06}"),
        active: Some(true),
        resources: BTreeMap::from([("app".to_string(), rr)]),
        ..Default::default()
    }
}

/// 100k nodes on version 1, version 2 published, a rolling deployment (install 1000, download 1000) started.
fn fleet() -> (ClusterState, DeploymentId) {
    let mut s = ClusterState::default();
    s.apply(Command::CreateResource { name: "app".into() }, 1)
        .unwrap();
    for _ in 0..2 {
        let publish = Command::PublishVersion {
            resource: "app".into(),
            label: None,
            artifact: None,
            metadata: BTreeMap::new(),
            depends_on: vec![],
            health_port: None,
        };
        s.apply(publish, 1).unwrap();
    }
    let nodes: Vec<String> = (0..NODES).map(|i| format!("node-{i:06}")).collect();
    s.apply(
        Command::CreateConsumer {
            name: "fleet".into(),
            nodes,
        },
        1,
    )
    .unwrap();
    for chunk in (0..NODES).collect::<Vec<_>>().chunks(1000) {
        s.apply(
            Command::ReportNodes(chunk.iter().map(|&i| report(i, 1, &[1])).collect()),
            2,
        )
        .unwrap();
    }
    let spec = DeploymentSpec {
        consumer: "fleet".into(),
        resource: "app".into(),
        version: Some(2),
        strategy: Some(Strategy::Rolling {
            install_window: 1000,
            download_window: 1000,
        }),
        ..DeploymentSpec::default()
    };
    let Response::DeploymentStarted { id, .. } =
        s.apply(Command::StartDeployment(spec), 3).unwrap()
    else {
        unreachable!()
    };
    (s, id)
}

/// Every node reports version 2 installed, in order; `batch` reports per command.
fn progress_commands(batch: usize) -> Vec<Command> {
    let all: Vec<NodeReport> = (0..NODES).map(|i| report(i, 2, &[1, 2])).collect();
    all.chunks(batch)
        .map(|c| Command::ReportNodes(c.to_vec()))
        .collect()
}

/// The timed part: applies `cmds` in order (and drops each), as the criterion loop does.
#[inline(never)]
fn timed_applies(s: &mut ClusterState, cmds: Vec<Command>) {
    for (k, cmd) in cmds.into_iter().enumerate() {
        black_box(s.apply(cmd, 10 + k as u64).unwrap());
    }
}

/// FNV-1a over `bytes`: a fixed, dependency-free fingerprint of a snapshot, to show it did not change.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One timed loop for `batch` reports per command, outside criterion (for callgrind).
fn once(batch: usize) {
    let (mut s, id) = fleet();
    let cmds = progress_commands(batch);
    let n = cmds.len();
    timed_applies(&mut s, cmds);
    assert_eq!(s.deployment(id).unwrap().status, Status::RolledForward);
    let snap = s.snapshot_bytes();
    println!(
        "batch {batch}: {n} commands, {NODES} reports applied; snapshot {} bytes, fnv1a {:016x}",
        snap.len(),
        fnv1a(&snap)
    );
}

fn bench(c: &mut Criterion) {
    let (base, id) = fleet();
    {
        let mut s = base.clone();
        let before = s.snapshot_bytes().len();
        for (k, cmd) in progress_commands(1).into_iter().enumerate() {
            s.apply(cmd, 10 + k as u64).unwrap();
        }
        assert_eq!(s.deployment(id).unwrap().status, Status::RolledForward);
        let after = s.snapshot_bytes().len();
        println!("state bytes per node: {:.1} at start of the deployment, {:.1} after it (snapshot {} bytes / {NODES} nodes, fnv1a {:016x})",
            before as f64 / NODES as f64, after as f64 / NODES as f64, after, fnv1a(&s.snapshot_bytes()));
    }
    let mut g = c.benchmark_group("domain_core");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Elements(NODES as u64));
    for batch in [1usize, 100] {
        g.bench_function(format!("report_nodes_100k_rolling_batch{batch}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let mut s = base.clone();
                    let cmds = progress_commands(batch);
                    let start = Instant::now();
                    timed_applies(&mut s, cmds);
                    total += start.elapsed();
                    assert_eq!(s.deployment(id).unwrap().status, Status::RolledForward);
                }
                total
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    if let Ok(batch) = std::env::var("CONVOY_ENGINE_ONCE") {
        once(batch.parse().expect("CONVOY_ENGINE_ONCE is a batch size"));
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
