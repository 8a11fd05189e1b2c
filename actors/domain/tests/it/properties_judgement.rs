//! Property tests of how a deployment judges itself (issue 22): simulated nodes whose downloads and
//! installs take several report rounds, windows wider than the consumer, failures in the last slots.
//! Checked every round: never more nodes told to fetch the version they lack than the download window;
//! all-at-once (without `fail_fast`) judges only once every node is done; and at the end, ROLLED_FORWARD
//! only with a success and no more failures than tolerated.

use convoy_domain::testing::*;
use convoy_domain::Strategy;
use convoy_domain::*;
use proptest::prelude::*;
use proptest::strategy::Strategy as PStrategy;

/// One simulated node: report rounds left to download and to install, and whether its install fails.
#[derive(Clone, Debug)]
struct Sim {
    download: u32,
    install: u32,
    fails: bool,
    has: bool,
    done: bool,
    current: u64,
}

impl Sim {
    /// Acts on its target for one report round; returns whether it was told to fetch what it lacks.
    fn step(&mut self, target: Option<Target>) -> bool {
        let Some(t) = target else { return false };
        if t.version == 1 && t.install {
            self.current = 1;
            return false;
        }
        if t.version != 2 || !(t.download || t.install) {
            return false;
        }
        let fetching = !self.has;
        if !self.has {
            self.download -= 1;
            self.has = self.download == 0;
        } else if t.install && !self.done {
            self.install -= 1;
            if self.install == 0 {
                self.done = true;
                if !self.fails {
                    self.current = 2;
                }
            }
        }
        fetching
    }

    fn report(&self, k: &mut Kit, i: usize) {
        let error = (self.done && self.fails).then_some("exit 1");
        let mut v2 = vp(self.has, self.done, error);
        v2.installed = self.done && !self.fails;
        k.report(i, Some(self.current), &[(1, vp(true, true, None)), (2, v2)]);
    }
}

#[derive(Clone, Debug)]
struct Case {
    strategy: Strategy,
    tolerated: u32,
    sims: Vec<Sim>,
}

fn case() -> impl PStrategy<Value = Case> {
    let strategy = prop_oneof![
        // Windows up to 8 on consumers of 1 to 5 nodes: often wider than the consumer.
        (1u32..9, 1u32..4).prop_map(|(i, d)| Strategy::Rolling {
            install_window: i,
            download_window: d
        }),
        any::<bool>().prop_map(|fail_fast| Strategy::AllAtOnce { fail_fast }),
    ];
    let sims = (1usize..6, 0usize..4, any::<bool>()).prop_flat_map(|(n, failing, last)| {
        let rounds = prop::collection::vec((1u32..4, 1u32..4), n);
        rounds.prop_map(move |r| {
            r.into_iter()
                .enumerate()
                .map(|(i, (download, install))| Sim {
                    download,
                    install,
                    // The failing nodes are the last ones in the order, or the first.
                    fails: if last { i + failing >= n } else { i < failing },
                    has: false,
                    done: false,
                    current: 1,
                })
                .collect::<Vec<_>>()
        })
    });
    (strategy, 0u32..3, sims).prop_map(|(strategy, tolerated, sims)| Case {
        strategy,
        tolerated,
        sims,
    })
}

fn run(case: Case) -> Result<(), TestCaseError> {
    let n = case.sims.len();
    let mut k = Kit::new(n);
    let id = k.start_with(|s| {
        s.strategy = Some(case.strategy.clone());
        s.max_failed_nodes = Some(FailedNodes::Count(case.tolerated));
    });
    let limit = match case.strategy {
        Strategy::Rolling {
            download_window, ..
        } => download_window as usize,
        _ => usize::MAX,
    };
    let waits = case.strategy == Strategy::AllAtOnce { fail_fast: false };
    let mut sims = case.sims.clone();
    for _round in 0..60 {
        if k.d(id).status.is_terminal() {
            break;
        }
        let targets: Vec<Option<Target>> =
            (0..n).map(|i| k.target(&format!("c-{i}"), "r")).collect();
        let mut fetching = 0;
        for (i, sim) in sims.iter_mut().enumerate() {
            fetching += usize::from(sim.step(targets[i]));
        }
        prop_assert!(
            fetching <= limit,
            "{fetching} nodes told to fetch, download window {limit}"
        );
        for (i, sim) in sims.iter().enumerate() {
            let before = k.d(id).status;
            sim.report(&mut k, i);
            if waits && before == Status::RollingForward && k.d(id).status != before {
                let t = &k.d(id).tally;
                prop_assert_eq!(
                    t.succeeded + t.failed + t.skipped,
                    n as u32,
                    "all at once judged before every node was done"
                );
            }
        }
    }
    let d = k.d(id);
    prop_assert!(d.status.is_terminal(), "stalled in {}", d.status);
    if d.status == Status::RolledForward {
        prop_assert!(d.tally.succeeded > 0, "rolled forward with no success");
        prop_assert!(
            d.tally.failed <= case.tolerated,
            "rolled forward with {} failed, {} tolerated",
            d.tally.failed,
            case.tolerated
        );
    }
    let failing = case.sims.iter().filter(|s| s.fails).count() as u32;
    if failing == 0 {
        prop_assert_eq!(d.status, Status::RolledForward);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn slow_nodes_are_judged_by_the_rules(c in case()) {
        run(c)?;
    }
}
