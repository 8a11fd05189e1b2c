//! What maintenance windows cost the write path and the windows list (issue 37): the median and p99 time of one
//! `ClusterState::apply(CreateResource)` (every applied command runs the policies' pass) with an active rolling
//! deployment and 0, 300 or 1,000 weekly deny windows that are not in force, or 5 windows on 30 February (refused
//! at creation since issue 37); and the time of `ClusterState::windows(now)` (`GET /v1/windows`) with 1,000
//! windows. Plain timing loop, no criterion: `cargo bench -p convoy-domain --bench windows`. See
//! docs/BENCHMARKS.md.

use convoy_domain::*;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

/// Wednesday 6 May 2026, 12:00 UTC: no Sunday-night window is in force.
const T: u64 = 1_778_068_800_000;
const WRITES: usize = 2_000;

fn report(node: &str) -> NodeReport {
    let rr = ResourceReport {
        interested: None,
        current: Some(1),
        versions: BTreeMap::from([(
            1,
            VersionProgress {
                downloaded: true,
                installed: true,
                done: true,
                error: None,
                healthy: None,
            },
        )]),
        removed: false,
        log: None,
    };
    NodeReport {
        node: node.into(),
        active: Some(true),
        resources: BTreeMap::from([("app".to_string(), rr)]),
        ..Default::default()
    }
}

/// A resource with versions 1 and 2, a consumer of 10 nodes on 1, a rolling deployment of 2 started.
fn base() -> ClusterState {
    let mut s = ClusterState::default();
    s.apply(Command::CreateResource { name: "app".into() }, T)
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
        s.apply(publish, T).unwrap();
    }
    let nodes: Vec<String> = (0..10).map(|i| format!("web-{i}")).collect();
    s.apply(
        Command::CreateConsumer {
            name: "web".into(),
            nodes: nodes.clone(),
        },
        T,
    )
    .unwrap();
    s.apply(
        Command::ReportNodes(nodes.iter().map(|n| report(n)).collect()),
        T,
    )
    .unwrap();
    let spec = DeploymentSpec {
        consumer: "web".into(),
        resource: "app".into(),
        version: Some(2),
        strategy: Some(Strategy::Rolling {
            install_window: 1,
            download_window: 1,
        }),
        ..DeploymentSpec::default()
    };
    s.apply(Command::StartDeployment(spec), T).unwrap();
    s
}

fn window(i: usize, schedule: &str) -> Window {
    Window {
        name: format!("w-{i:04}"),
        kind: WindowKind::Deny,
        schedule: schedule.into(),
        duration_ms: 3_600_000,
        time_zone: "Europe/Berlin".into(),
        applies_to: AppliesTo::default(),
        overrun: Overrun::FinishInFlight,
        allow_rollback: true,
    }
}

/// `base()` with `n` windows on `schedule`; how many were refused.
fn with_windows(n: usize, schedule: &str) -> (ClusterState, usize) {
    let mut s = base();
    let mut refused = 0;
    for i in 0..n {
        if s.apply(Command::CreateWindow(window(i, schedule)), T)
            .is_err()
        {
            refused += 1;
        }
    }
    (s, refused)
}

/// Median and p99 of `WRITES` timed `CreateResource` applies, in microseconds.
fn writes(s: &mut ClusterState) -> (f64, f64) {
    let mut us: Vec<f64> = (0..WRITES)
        .map(|k| {
            let cmd = Command::CreateResource {
                name: format!("r-{k}"),
            };
            let at = T + 1_000 + k as u64 * 10;
            let start = Instant::now();
            black_box(s.apply(cmd, at).unwrap());
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    us.sort_by(f64::total_cmp);
    (us[us.len() / 2], us[us.len() * 99 / 100])
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    for (n, schedule) in [
        (0, "0 3 * * 0"),
        (300, "0 3 * * 0"),
        (1_000, "0 3 * * 0"),
        (5, "0 0 30 2 *"),
    ] {
        let (mut s, refused) = with_windows(n, schedule);
        let (p50, p99) = writes(&mut s);
        println!(
            "{n:>5} windows `{schedule}` ({refused} refused): CreateResource apply p50 {p50:.1} us, p99 {p99:.1} us"
        );
    }
    let (s, _) = with_windows(1_000, "0 3 * * 0");
    let start = Instant::now();
    let views = black_box(s.windows(T + 60_000));
    println!(
        "GET /v1/windows with {} windows: {:.1} ms (one call, the state held throughout)",
        views.len(),
        start.elapsed().as_secs_f64() * 1e3
    );
}
