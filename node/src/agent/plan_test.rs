//! Table tests of the pure planning core: which actions the targets call for.

use std::collections::BTreeMap;

use convoy_actors::domain::{Target, VersionProgress};

use super::plan::{needs_views, plan, valid_name, Action};
use super::state::{AgentState, VersionState};

fn t(version: u64, download: bool, install: bool) -> BTreeMap<String, Target> {
    BTreeMap::from([(
        "web".to_string(),
        Target {
            version,
            download,
            install,
            uninstall: false,
        },
    )])
}

fn dl(v: u64) -> Action {
    Action::Download {
        resource: "web".into(),
        version: v,
    }
}

fn inst(v: u64) -> Action {
    Action::Install {
        resource: "web".into(),
        version: v,
    }
}

/// v1 installed and current, v2 downloaded only, v3 failed at t=1000.
fn held() -> AgentState {
    let mut s = AgentState::default();
    s.resources.entry("web".into()).or_default().current = Some(1);
    *s.version_mut("web", 1) = VersionState {
        progress: VersionProgress {
            downloaded: true,
            installed: true,
            done: true,
            error: None,
            healthy: Some(true),
        },
        ..Default::default()
    };
    s.version_mut("web", 2).progress.downloaded = true;
    s.version_mut("web", 3).fail("sha256 mismatch".into(), 1000);
    s
}

#[test]
fn actions_follow_the_permissions() {
    let empty = AgentState::default();
    let h = held();
    type Case<'a> = (
        &'a str,
        &'a AgentState,
        BTreeMap<String, Target>,
        Vec<Action>,
    );
    let cases: Vec<Case> = vec![
        ("hold still", &empty, t(1, false, false), vec![]),
        ("download only", &empty, t(1, true, false), vec![dl(1)]),
        (
            "install implies download",
            &empty,
            t(1, false, true),
            vec![dl(1), inst(1)],
        ),
        ("both", &empty, t(1, true, true), vec![dl(1), inst(1)]),
        ("already current", &h, t(1, true, true), vec![]),
        ("downloaded, download only", &h, t(2, true, false), vec![]),
        ("downloaded, install", &h, t(2, false, true), vec![inst(2)]),
        ("new version", &h, t(4, true, true), vec![dl(4), inst(4)]),
        ("failed, too early to retry", &h, t(3, true, true), vec![]),
    ];
    for (name, state, targets, want) in cases {
        assert_eq!(plan(state, &targets, 2000, 5000), want, "{name}");
    }
}

#[test]
fn a_failed_version_still_targeted_is_retried_after_the_wait() {
    let got = plan(&held(), &t(3, false, true), 6000, 5000);
    assert_eq!(
        got,
        vec![Action::Retry {
            resource: "web".into(),
            version: 3
        }]
    );
    assert!(
        needs_views(&got).is_empty(),
        "a retry needs no version info"
    );
}

#[test]
fn a_rollback_to_a_held_version_reinstalls_without_downloading() {
    let mut s = held();
    // Now on 2; the deployment rolls back to 1, which is still held.
    s.resources.get_mut("web").unwrap().current = Some(2);
    s.version_mut("web", 1).progress.installed = false;
    s.version_mut("web", 2).progress.installed = true;
    assert_eq!(plan(&s, &t(1, false, true), 0, 0), vec![inst(1)]);
}

#[test]
fn views_are_fetched_once_per_resource() {
    let actions = vec![dl(1), inst(1)];
    assert_eq!(needs_views(&actions), vec!["web".to_string()]);
}

#[test]
fn resource_names_must_be_safe_directory_names() {
    for ok in ["web", "web-api_2", "model.v1"] {
        assert!(valid_name(ok), "{ok}");
    }
    for bad in ["", ".", "..", "a/b", "../etc", "x y"] {
        assert!(!valid_name(bad), "{bad}");
    }
}
