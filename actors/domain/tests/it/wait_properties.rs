//! Property test of the one clock (issue 35, DEPLOYMENTS.md §6): for any schedule of a person's pauses and
//! resumes, reports and time, no deadline fires before its active time (the time the deployment moved with
//! nothing holding it), and none is late: once a deadline's active time is reached while it moves, the next
//! tick fires it. Checked after every step: the completion timeout, the progress deadline and each node's
//! healthy deadline; a deployment held by a person is never moved on by anything but the person.

use convoy_domain::testing::*;
use convoy_domain::*;
use proptest::prelude::*;
use proptest::strategy::Strategy as _;

const NODES: usize = 4;
const TIMEOUT: u64 = 20_000;
const PROGRESS: u64 = 9_000;
const HEALTHY: u64 = 6_000;

#[derive(Clone, Debug)]
enum Step {
    Wait(u64),
    Pause,
    Resume,
    Holding(usize),
    Installed(usize),
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    prop_oneof![
        4 => (1u64..4_000).prop_map(Step::Wait),
        1 => Just(Step::Pause),
        1 => Just(Step::Resume),
        2 => (0..NODES).prop_map(Step::Holding),
        1 => (0..NODES).prop_map(Step::Installed),
    ]
}

/// What the test knows independently of the deployment: active time, and when each clock last started (a node's
/// healthy clock at the earliest: it starts once the node holds the version, after its admission or retry).
struct Model {
    active: u64,
    paused: bool,
    progress_from: u64,
    install_from: [Option<u64>; NODES],
}

fn timer_messages(k: &Kit, id: DeploymentId, from: usize) -> Vec<(Option<u32>, String)> {
    k.d(id)
        .events
        .iter()
        .skip(from)
        .filter(|e| e.by == Actor::Timer)
        .map(|e| (e.node, e.message.clone().unwrap_or_default()))
        .collect()
}

/// Judges what the timers did since event `seen` against the model's active time, then moves the model's
/// clocks on what happened (a success restarts the progress clock; an admission or a retry a node's).
fn observe(k: &Kit, id: DeploymentId, m: &mut Model, seen: usize, before: &mut [bool; NODES]) {
    let phases = k.phases(id);
    let installing = |p: usize| phases[p] == NodePhase::Installing;
    for (node, msg) in timer_messages(k, id, seen) {
        if msg.starts_with("completion timeout") {
            assert!(
                m.active >= TIMEOUT,
                "timed out at {} active ms: {msg}",
                m.active
            );
        } else if msg.starts_with("progress deadline") {
            assert!(
                m.active >= m.progress_from + PROGRESS,
                "progress deadline at {} active ms, progress from {}",
                m.active,
                m.progress_from
            );
        } else if let Some(p) = node {
            let from = m.install_from[p as usize].expect("a deadline of a node never installing");
            assert!(
                m.active >= from + HEALTHY,
                "node {p} timed out {} active ms into its install",
                m.active - from
            );
        }
    }
    let d = k.d(id);
    if d.events
        .iter()
        .skip(seen)
        .any(|e| e.kind == EventKind::Succeeded)
    {
        m.progress_from = m.active;
    }
    let now: [bool; NODES] = std::array::from_fn(installing);
    let retried = |p: usize| {
        d.events
            .iter()
            .skip(seen)
            .any(|e| e.node == Some(p as u32) && matches!(e.kind, EventKind::Retry))
    };
    for p in 0..NODES {
        if now[p] && (!before[p] || retried(p)) {
            m.install_from[p] = Some(m.active);
        }
        if !now[p] {
            m.install_from[p] = None;
        }
    }
    *before = now;
}

fn run(steps: Vec<Step>) {
    let mut k = Kit::new(NODES);
    let id = k.start_with(|s| {
        rolling(2, 2)(s);
        s.max_failures_per_node = Some(1);
        s.max_failed_nodes = Some(FailedNodes::Count(NODES as u32));
        s.completion = Some(Completion {
            timeout_ms: Some(TIMEOUT),
            ..Completion::default()
        });
        s.pacing = Some(Pacing {
            healthy_deadline_ms: Some(HEALTHY),
            progress_deadline_ms: Some(PROGRESS),
            ..Pacing::default()
        });
    });
    let mut m = Model {
        active: 0,
        paused: false,
        progress_from: 0,
        install_from: [None; NODES],
    };
    let installing = |k: &Kit| {
        let phases = k.phases(id);
        std::array::from_fn::<bool, NODES, _>(|i| phases[i] == NodePhase::Installing)
    };
    let mut before = installing(&k);
    for (p, on) in before.iter().enumerate() {
        if *on {
            m.install_from[p] = Some(0);
        }
    }
    for s in steps {
        if k.status(id).is_terminal() {
            break;
        }
        let seen = k.d(id).events.len();
        let moving = k.status(id) == Status::RollingForward && !m.paused;
        assert_eq!(k.d(id).moving(), moving, "only the person holds it here");
        match s {
            Step::Wait(dt) => {
                // Tick at every ms a deadline of the model falls in, so lateness shows.
                let mut left = dt;
                while left > 0 {
                    let due = [
                        TIMEOUT.saturating_sub(m.active),
                        (m.progress_from + PROGRESS).saturating_sub(m.active),
                    ]
                    .into_iter()
                    .chain(
                        m.install_from
                            .iter()
                            .flatten()
                            .map(|t| (t + HEALTHY).saturating_sub(m.active)),
                    )
                    .filter(|d| *d > 0)
                    .min()
                    .unwrap_or(left);
                    let d = if moving { due.min(left) } else { left };
                    left -= d;
                    if moving {
                        m.active += d;
                    }
                    let now = k.now + d;
                    let ticked = k.d(id).events.len();
                    k.tick_to(now);
                    observe(&k, id, &mut m, ticked, &mut before);
                    if k.status(id) != Status::RollingForward {
                        break;
                    }
                }
            }
            Step::Pause => {
                k.ok(pause(id, None, Actor::User));
                m.paused = true;
            }
            Step::Resume => {
                if m.paused {
                    k.ok(resume(id, None, Actor::User));
                    m.paused = false;
                }
            }
            Step::Holding(i) => k.holding(i),
            Step::Installed(i) => k.installed(i),
        }
        if !matches!(s, Step::Wait(_)) {
            observe(&k, id, &mut m, seen, &mut before);
        }
        // None is late: a deadline reached while it moved has fired.
        if k.status(id) == Status::RollingForward && !m.paused {
            assert!(m.active < TIMEOUT, "the completion timeout is late");
            assert!(
                m.active < m.progress_from + PROGRESS,
                "the progress deadline is late"
            );
        }
        if m.paused {
            assert!(k.status(id).is_paused() || k.status(id).is_terminal());
            assert_eq!(
                k.d(id).paused_by(),
                Some(PausedBy::User),
                "nothing lifts a person's pause"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn no_deadline_fires_before_its_active_time_nor_after_it(steps in proptest::collection::vec(step(), 1..60)) {
        run(steps);
    }
}
