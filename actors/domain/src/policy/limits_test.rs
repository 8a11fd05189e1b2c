use crate::testing::*;
use crate::*;
use std::collections::BTreeSet;

/// Resources `a`, `b` with versions 1 and 2; consumers `web` and `api` with three nodes each, every node
/// running version 1 of both.
fn two_consumers() -> Kit {
    let mut k = Kit::empty();
    for r in ["a", "b"] {
        k.ok(Command::CreateResource { name: r.into() });
        k.publish_to(r);
        k.publish_to(r);
    }
    for c in ["web", "api"] {
        let nodes: Vec<String> = (0..3).map(|i| format!("{c}-{i}")).collect();
        k.ok(Command::CreateConsumer {
            name: c.into(),
            nodes: nodes.clone(),
        });
        for n in &nodes {
            for r in ["a", "b"] {
                k.report_node(n, r, Some(1), &[(1, vp(true, true, None))]);
            }
        }
    }
    k
}

fn limits(installs: Option<u32>, downloads: Option<u32>, source: LimitSource) -> Command {
    Command::SetFleetLimits {
        limits: FleetLimits {
            max_concurrent_installs: installs,
            max_concurrent_downloads: downloads,
        },
        source,
    }
}

fn rolling_spec(c: &str, r: &str, install: u32, download: u32) -> DeploymentSpec {
    spec(
        c,
        r,
        2,
        Strategy::Rolling {
            install_window: install,
            download_window: download,
        },
    )
}

/// (deployment, node, resource) installing in any active deployment.
fn installing(k: &Kit) -> Vec<(DeploymentId, String, String)> {
    k.s.active_set()
        .iter()
        .flat_map(|id| {
            let d = k.d(*id);
            d.nodes
                .iter()
                .filter(|n| n.phase == NodePhase::Installing)
                .map(|n| (*id, n.id.clone(), d.resource.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn installs_across_every_deployment_stay_within_the_fleet_limit() {
    let mut k = two_consumers();
    k.ok(limits(Some(2), None, LimitSource::Api));
    let ids = [
        k.start(rolling_spec("web", "a", 3, 3)),
        k.start(rolling_spec("api", "a", 3, 3)),
        k.start(rolling_spec("web", "b", 3, 3)),
    ];
    let mut steps = 0;
    while ids.iter().any(|id| k.status(*id) == Status::RollingForward) {
        let now = installing(&k);
        assert!(now.len() <= 2, "more than the fleet limit install: {now:?}");
        let Some((_, node, r)) = now.first().cloned() else {
            panic!("nothing installs and a deployment still rolls");
        };
        k.node_installed(&node, &r, 1, 2);
        steps += 1;
        assert!(steps <= 9, "too many steps");
    }
    for id in ids {
        assert_eq!(k.status(id), Status::RolledForward);
    }
    assert_eq!(steps, 9, "3 deployments of 3 nodes each");
}

#[test]
fn a_deployment_held_by_the_fleet_limit_waits_unpaused_and_says_so() {
    let mut k = two_consumers();
    k.ok(limits(Some(2), None, LimitSource::Api));
    let first = k.start(rolling_spec("web", "a", 2, 2));
    let second = k.start(rolling_spec("api", "a", 2, 2));
    assert_eq!(installing(&k).len(), 2);
    assert!(k.phases(second).iter().all(|p| *p != NodePhase::Installing));
    let summary = k.s.deployment_summary(second, k.now).unwrap();
    assert_eq!(summary.status, Status::RollingForward);
    assert_eq!(summary.paused_by, None);
    assert_eq!(summary.waiting_for.as_deref(), Some("fleet_limit"));
    assert_eq!(
        k.s.deployment_summary(first, k.now).unwrap().waiting_for,
        None
    );
    let why = k.s.node_history(second, "api-0").unwrap().now;
    assert!(
        why.contains("fleet-wide limit") && why.contains("max_concurrent_installs 2"),
        "{why}"
    );
    let view = k.s.fleet_limits_view();
    assert_eq!(
        (view.installing, view.max_concurrent_installs, view.source),
        (2, Some(2), Some(LimitSource::Api))
    );
    // A slot frees: the older deployment takes it first (it still has a node waiting).
    k.node_installed("web-0", "a", 1, 2);
    assert_eq!(k.phases(first)[2], NodePhase::Installing);
    assert!(k.phases(second).iter().all(|p| *p != NodePhase::Installing));
    // Raising the limit lets the waiting deployment in within the same apply.
    k.ok(limits(Some(4), None, LimitSource::Api));
    assert_eq!(
        k.phases(second)[..2],
        [NodePhase::Installing, NodePhase::Installing]
    );
}

#[test]
fn removing_the_last_limit_lets_the_deployments_windows_decide() {
    let mut k = two_consumers();
    k.ok(limits(Some(1), None, LimitSource::Api));
    let id = k.start(rolling_spec("web", "a", 3, 3));
    assert_eq!(installing(&k).len(), 1);
    k.ok(limits(None, None, LimitSource::Api));
    assert_eq!(
        k.phases(id),
        vec![NodePhase::Installing; 3],
        "no limit: the install window of 3 decides"
    );
}

/// Nodes downloading: told to prefetch, or installing without the version.
fn downloading(k: &Kit) -> BTreeSet<(DeploymentId, String)> {
    k.s.active_set()
        .iter()
        .flat_map(|id| {
            let d = k.d(*id);
            d.nodes
                .iter()
                .filter(|n| {
                    n.phase == NodePhase::Downloading
                        || (n.phase == NodePhase::Installing && !n.seen.has(Fact::Have))
                })
                .map(|n| (*id, n.id.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn downloads_across_every_deployment_stay_within_the_fleet_limit() {
    let mut k = two_consumers();
    k.ok(limits(None, Some(2), LimitSource::Api));
    let ids = [
        k.start(rolling_spec("web", "a", 2, 3)),
        k.start(rolling_spec("api", "b", 2, 3)),
    ];
    let mut steps = 0;
    while ids.iter().any(|id| k.status(*id) == Status::RollingForward) {
        let now = downloading(&k);
        assert!(
            now.len() <= 2,
            "more than the fleet limit download: {now:?}"
        );
        // The first node downloading gets the artifact; else the first installing one finishes.
        if let Some((id, node)) = now.iter().next().cloned() {
            let r = k.d(id).resource.clone();
            k.report_node(
                &node,
                &r,
                Some(1),
                &[(1, vp(true, true, None)), (2, vp(true, false, None))],
            );
        } else {
            let (_, node, r) = installing(&k)
                .first()
                .cloned()
                .expect("nothing downloads or installs and a deployment still rolls");
            k.node_installed(&node, &r, 1, 2);
        }
        steps += 1;
        assert!(steps <= 24, "too many steps");
    }
    for id in ids {
        assert_eq!(k.status(id), Status::RolledForward);
    }
}

#[test]
fn a_server_config_never_overrides_limits_set_through_the_api() {
    let mut k = two_consumers();
    assert_eq!(k.s.fleet_setting(), None);
    k.ok(limits(Some(5), None, LimitSource::Config));
    k.ok(limits(Some(7), None, LimitSource::Config));
    assert_eq!(k.s.fleet_limits().max_concurrent_installs, Some(7));
    k.ok(limits(Some(3), Some(9), LimitSource::Api));
    k.ok(limits(Some(7), None, LimitSource::Config));
    let set = k.s.fleet_setting().unwrap();
    assert_eq!(set.source, LimitSource::Api);
    assert_eq!(
        set.limits,
        FleetLimits {
            max_concurrent_installs: Some(3),
            max_concurrent_downloads: Some(9),
        }
    );
}

#[test]
fn a_limit_over_a_million_is_refused_naming_it() {
    let mut k = two_consumers();
    let e = k.err(limits(Some(MAX_FLEET_LIMIT + 1), None, LimitSource::Api));
    assert!(e.to_string().contains("max_concurrent_installs"), "{e}");
}
