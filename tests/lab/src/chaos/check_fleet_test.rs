use super::*;

fn target(node: &str, version: u64, moving: bool, at: u64) -> NodeTarget {
    NodeTarget {
        node: node.into(),
        consumers: vec!["multi".into(), "multi-b".into()],
        resource: "mr".into(),
        version,
        moving,
        start_ms: at,
    }
}

fn ban(version: u64, consumer: Option<&str>, from: u64, until: Option<u64>) -> Ban {
    Ban {
        resource: "mr".into(),
        version,
        consumer: consumer.map(String::from),
        from_ms: from,
        until_ms: until,
    }
}

#[test]
fn a_retracted_version_sent_after_the_retraction_is_caught() {
    let bans = [ban(3, None, 1_000, Some(2_000))];
    let bad = no_banned_targets(&[target("m-0", 3, true, 1_500)], &bans);
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].rule, "banned-target");
    assert!(bad[0].detail.contains("m-0 was sent mr@3"), "{bad:?}");
    // Before the retraction, after the unretract, another version, or staying on it: fine.
    let fine = [
        target("m-0", 3, true, 900),
        target("m-0", 3, true, 2_100),
        target("m-0", 2, true, 1_500),
        target("m-0", 3, false, 1_500),
    ];
    assert!(no_banned_targets(&fine, &bans).is_empty());
}

#[test]
fn a_held_version_is_banned_only_on_its_consumer() {
    let bans = [ban(4, Some("multi"), 1_000, None)];
    let bad = no_banned_targets(&[target("m-1", 4, true, 5_000)], &bans);
    assert_eq!(bad.len(), 1);
    assert!(bad[0].detail.contains("held back on multi"), "{bad:?}");
    let elsewhere = NodeTarget {
        consumers: vec!["other".into()],
        ..target("o-1", 4, true, 5_000)
    };
    assert!(no_banned_targets(&[elsewhere], &bans).is_empty());
}

fn read(node: &str, at: u64, active: bool) -> LivenessRead {
    LivenessRead {
        node: node.into(),
        start_ms: at,
        active,
    }
}

fn acks(node: &str, every: u64, from: u64, to: u64) -> Vec<ReportAck> {
    (from..to)
        .step_by(every as usize)
        .map(|t| ReportAck {
            node: node.into(),
            sent_ms: t,
            acked_ms: t + 5,
        })
        .collect()
}

#[test]
fn a_reporting_node_read_inactive_is_caught() {
    let reports = acks("m-0", 300, 0, 10_000);
    let bad = reporting_nodes_stay_active(&[read("m-0", 9_000, false)], &reports, 5_000, 1_000);
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].rule, "reporting-inactive");
    // Active reads, other nodes, and a node silent for the timeout before the read are fine.
    let fine = [
        read("m-0", 9_000, true),
        read("m-9", 9_000, false),
        read("m-0", 16_000, false),
    ];
    assert!(reporting_nodes_stay_active(&fine, &reports, 5_000, 1_000).is_empty());
    // Reports that only just resumed (fewer than the threshold before the grace) are not yet "reporting".
    let resumed = acks("m-1", 300, 8_000, 9_000);
    assert!(
        reporting_nodes_stay_active(&[read("m-1", 8_700, false)], &resumed, 5_000, 1_000)
            .is_empty()
    );
}
