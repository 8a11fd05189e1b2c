//! The encoding of a fixture of commands and of the state they make is pinned to [`STATE_FORMAT`]:
//! a change of either fails here until the format is bumped and the fingerprint recorded.

use super::STATE_FORMAT;
use crate::testing::*;
use crate::*;

/// The fingerprint of the fixture's encoding under each format this build could have written.
const FINGERPRINT: (u32, u64) = (7, 14828477712570574251);

/// FNV-1a: stable across Rust releases (std's hasher is not).
fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

fn encode(cmd: &Command) -> Vec<u8> {
    bincode::serde::encode_to_vec(cmd, bincode::config::standard()).unwrap()
}

/// Commands of every shape that changed in format 2, applied on a small fleet.
fn fixture() -> (Vec<Command>, Kit) {
    let mut k = Kit::new(3);
    let commands = vec![
        Command::Subscribe {
            consumer: "c".into(),
            resource: "r".into(),
            mode: Mode::Weak,
            pin: Some(1),
            policy: Policy {
                strategy: Some(Strategy::AllAtOnce { fail_fast: true }),
                completion: Some(Completion {
                    quorum: Some(0.5),
                    timeout_ms: Some(60_000),
                    on_timeout: OnTimeout::Fail,
                }),
                analysis: Some(
                    serde_json::from_str(
                        r#"{"provider": "prom", "mode": "background", "metrics": [
                            {"name": "errors", "query": "up", "success": "result < 0.01"}]}"#,
                    )
                    .unwrap(),
                ),
                ..Policy::default()
            },
        },
        Command::StartDeployment(DeploymentSpec {
            consumer: "c".into(),
            resource: "r".into(),
            version: Some(2),
            nodes: Some("0-1".into()),
            force: true,
            ..DeploymentSpec::default()
        }),
        Command::CreateTokenWithTtl {
            name: "ci".into(),
            role: Role::Operator,
            nodes: None,
            hash: [7; HASH_LEN],
            by: Actor::User,
            ttl_ms: 86_400_000,
        },
        // A report names its sender, and the node events it causes record it.
        Command::ReportNodes(vec![NodeReport {
            node: "c-0".into(),
            active: None,
            resources: [(
                "r".to_string(),
                ResourceReport {
                    current: Some(2),
                    versions: [(1, vp(true, true, None)), (2, vp(true, true, None))].into(),
                    ..ResourceReport::default()
                },
            )]
            .into(),
            by: Actor::Token("web-agent".into()),
        }]),
        // Issue 23: a measurement of the deployment's analysis (its run is in the state).
        Command::RecordMeasurement {
            id: DeploymentId(1),
            metric: "errors".into(),
            phase: 0,
            seq: 0,
            measured: crate::analysis::run::Measured::Value(0.001),
        },
        // Issue 24: a disruption budget and a maintenance window (and the fields they add to the state and
        // to each deployment).
        Command::SetBudget {
            consumer: "c".into(),
            budget: Budget {
                max_unavailable: Some(FailedNodes::Percent(50)),
                min_available: None,
            },
        },
        Command::CreateWindow(Window {
            name: "nights".into(),
            kind: WindowKind::Allow,
            schedule: "0 22 * * 1-5".into(),
            duration_ms: 7_200_000,
            time_zone: "Europe/Berlin".into(),
            applies_to: AppliesTo {
                consumers: Some(vec!["c".into()]),
                resources: None,
            },
            overrun: Overrun::FinishInFlight,
            allow_rollback: true,
        }),
    ];
    for cmd in &commands {
        k.ok(cmd.clone());
    }
    k.failed(1);
    (commands, k)
}

#[test]
fn the_encoding_is_the_one_its_format_names() {
    let (commands, k) = fixture();
    let mut h = 0xcbf2_9ce4_8422_2325;
    for cmd in &commands {
        h = fnv(&encode(cmd), h);
    }
    h = fnv(&k.s.snapshot_bytes(), h);
    assert_eq!(
        (STATE_FORMAT, h),
        FINGERPRINT,
        "the encoding of commands or state changed: old data dirs would be read wrongly. Bump \
         STATE_FORMAT (state/format.rs) and record the new fingerprint ({h}) with it"
    );
}
