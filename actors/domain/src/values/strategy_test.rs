use super::*;
use crate::ErrorKind;

#[test]
fn zero_windows_and_batch_sizes_are_refused() {
    let cases = [
        (
            Strategy::Rolling {
                install_window: 0,
                download_window: 1,
            },
            "install_window = 0",
        ),
        (
            Strategy::Rolling {
                install_window: 1,
                download_window: 0,
            },
            "download_window = 0",
        ),
        (
            Strategy::Batch {
                sizes: vec![],
                autopause: false,
            },
            "batch.sizes = []",
        ),
        (
            Strategy::Batch {
                sizes: vec![2, 0],
                autopause: false,
            },
            "batch.sizes = [2, 0]",
        ),
    ];
    for (s, msg) in cases {
        let e = s.validate().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid);
        assert!(e.to_string().starts_with(msg), "{e}");
    }
    assert!(Strategy::Rolling {
        install_window: 1,
        download_window: 1
    }
    .validate()
    .is_ok());
    assert!(Strategy::AllAtOnce { fail_fast: false }.validate().is_ok());
}

#[test]
fn last_batch_size_repeats() {
    let sizes = [1, 3];
    let got: Vec<u32> = (0..4).map(|i| Strategy::batch_size(&sizes, i)).collect();
    assert_eq!(got, vec![1, 3, 3, 3]);
}

#[test]
fn quorum_fraction_count_and_default() {
    let c = |q| Completion {
        quorum: q,
        timeout_ms: None,
        ..Default::default()
    };
    assert_eq!(c(None).needed(10), 10);
    assert_eq!(c(Some(0.75)).needed(4), 3);
    assert_eq!(c(Some(0.5)).needed(3), 2);
    assert_eq!(c(Some(3.0)).needed(10), 3);
    for bad in [0.0, -1.0, 2.5, f64::NAN] {
        assert!(c(Some(bad)).validate().is_err(), "{bad}");
    }
    assert!(Completion {
        quorum: None,
        timeout_ms: Some(0),
        ..Default::default()
    }
    .validate()
    .is_err());
}

#[test]
fn failed_nodes_tolerated_defaults() {
    let rolling = Settings {
        strategy: Strategy::Rolling {
            install_window: 2,
            download_window: 1,
        },
        ..Settings::default()
    };
    assert_eq!(
        rolling.failed_nodes_tolerated(10),
        0,
        "rolling too: a failure is a failure unless tolerated"
    );
    let all = Settings {
        strategy: Strategy::AllAtOnce { fail_fast: false },
        ..Settings::default()
    };
    assert_eq!(all.failed_nodes_tolerated(10), 0);
    assert_eq!(
        Settings {
            max_failed_nodes: Some(FailedNodes::Count(2)),
            ..Settings::default()
        }
        .failed_nodes_tolerated(10),
        2
    );
    let percent = Settings {
        max_failed_nodes: Some(FailedNodes::Percent(25)),
        ..Settings::default()
    };
    assert_eq!(
        (
            percent.failed_nodes_tolerated(10),
            percent.failed_nodes_tolerated(3)
        ),
        (2, 0),
        "25% of 10 nodes is 2, of 3 nodes 0 (rounded down)"
    );
    assert!(Settings {
        max_failed_nodes: Some(FailedNodes::Percent(101)),
        ..Settings::default()
    }
    .validate()
    .is_err());
    assert!(Settings {
        pulse_interval_ms: Some(0),
        ..Settings::default()
    }
    .validate()
    .is_err());
}

#[test]
fn strategies_serialize_as_in_the_api() {
    let j = |s: &Strategy| serde_json::to_string(s).unwrap();
    assert_eq!(
        j(&Strategy::AllAtOnce { fail_fast: false }),
        r#"{"all_at_once":{"fail_fast":false}}"#
    );
    // Bodies written before `fail_fast` existed still read: it defaults to false.
    let old: Strategy = serde_json::from_str(r#"{"all_at_once":{}}"#).unwrap();
    assert_eq!(old, Strategy::AllAtOnce { fail_fast: false });
    assert_eq!(
        j(&Strategy::Rolling {
            install_window: 2,
            download_window: 3
        }),
        r#"{"rolling":{"install_window":2,"download_window":3}}"#
    );
    let b: Strategy = serde_json::from_str(r#"{"batch":{"sizes":[1,2]}}"#).unwrap();
    assert_eq!(
        b,
        Strategy::Batch {
            sizes: vec![1, 2],
            autopause: false
        }
    );
}
