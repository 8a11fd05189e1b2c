//! Tables of sample API answers.

use convoy_actors::domain::{ConsumerView, DeploymentSummary, GroupDeploymentView, ResourceView};
use serde_json::json;

use super::*;
use crate::cli::fixtures::{deployment, group_deployment, T0};

#[test]
fn strategies_and_completion_in_words() {
    assert_eq!(
        strategy(&Strategy::AllAtOnce { fail_fast: false }),
        "all-at-once"
    );
    assert_eq!(
        strategy(&Strategy::Rolling {
            install_window: 2,
            download_window: 4
        }),
        "rolling(install 2, download 4)"
    );
    assert_eq!(
        strategy(&Strategy::Batch {
            sizes: vec![1, 5],
            autopause: true
        }),
        "batch(1,5, autopause)"
    );
    assert_eq!(completion(&Completion::default()), "all nodes");
    assert_eq!(
        completion(&Completion {
            quorum: Some(0.9),
            timeout_ms: Some(60_000),
            ..Default::default()
        }),
        "90% within 1m00s, then finish"
    );
    assert_eq!(
        completion(&Completion {
            quorum: None,
            timeout_ms: Some(60_000),
            on_timeout: OnTimeout::Fail,
        }),
        "all nodes within 1m00s, else fail"
    );
    assert_eq!(
        strategy(&Strategy::AllAtOnce { fail_fast: true }),
        "all-at-once, fail fast"
    );
    assert_eq!(
        completion(&Completion {
            quorum: Some(3.0),
            timeout_ms: None,
            ..Default::default()
        }),
        "3 nodes"
    );
}

#[test]
fn deployment_info_shows_settings_nodes_and_events() {
    let d: DeploymentView = serde_json::from_value(deployment()).unwrap();
    let text = super::deployment(&d);
    let expected_head = "d-3 web/api v7 ROLLING_FORWARD\n\n\
        strategy:      rolling(install 2, download 3)\n\
        min healthy:   5.0s\n\
        retries:       1 per node; failed nodes tolerated: 0\n\
        on failure:    roll back\n\
        pulse every:   10.0s\n\
        completion:    all nodes\n\n\
        ORD  NODE  FROM  STATE        FAILURES\n\
        0    n0    6     succeeded    0\n";
    assert!(text.starts_with(expected_head), "{text}");
    assert!(
        text.contains("\n4    n4    -     downloading  0\n"),
        "{text}"
    );
    assert!(text.contains("AT                       BY      STATUS                       NODE  ACTION   MESSAGE\n"), "{text}");
    assert!(
        text.contains(
            "2023-11-14 22:13:24.000  system  -                            n0    install  -\n"
        ),
        "{text}"
    );
}

#[test]
fn deployment_list_table() {
    let list: Vec<DeploymentSummary> = serde_json::from_value(json!([
        {"id": "d-1", "consumer": "db", "resource": "schema", "version": 2, "status": "ROLLED_FORWARD",
         "nodes": 3, "succeeded": 3, "failed": 0, "skipped": 0},
        {"id": "d-3", "consumer": "web", "resource": "api", "version": 7, "status": "ROLL_FORWARD_PAUSED",
         "paused_by": "user", "nodes": 12, "succeeded": 4, "failed": 1, "skipped": 0}
    ]))
    .unwrap();
    assert_eq!(
        deployment_list(&list),
        "ID   CONSUMER  RESOURCE  VERSION  STATUS               PAUSED_BY  NODES  OK  FAILED  SKIPPED\n\
         d-1  db        schema    2        ROLLED_FORWARD       -          3      3   0       0\n\
         d-3  web       api       7        ROLL_FORWARD_PAUSED  user       12     4   1       0\n"
    );
}

#[test]
fn resources_and_versions() {
    let r: ResourceView = serde_json::from_value(json!({
        "name": "api",
        "versions": [
            {"version": 1, "metadata": {}, "depends_on": [], "published_at": T0},
            {"version": 2, "label": "v2.0", "artifact": {"url": "file:///a.tgz", "sha256": "0123456789abcdef"},
             "metadata": {"team": "core"}, "depends_on": [{"resource": "schema", "version": 2}],
             "health_port": 8080, "published_at": T0 + 1000,
             "retracted": {"at": T0 + 2000, "by": "ci", "message": "leaks"}}
        ]
    }))
    .unwrap();
    assert_eq!(
        resources(std::slice::from_ref(&r), false),
        "NAME  VERSIONS  LATEST  LABEL\napi   2         2       v2.0\n"
    );
    assert_eq!(
        resources(std::slice::from_ref(&r), true),
        "NAME  VERSIONS  LATEST  LABEL  PUBLISHED                ARTIFACT       RETRACTED\n\
         api   2         2       v2.0   2023-11-14 22:13:21.000  file:///a.tgz  2\n"
    );
    let text = resource(&r);
    assert!(
        text.starts_with("resource: api\n\nVERSION  LABEL  PUBLISHED"),
        "{text}"
    );
    assert!(
        text.ends_with("2        v2.0   2023-11-14 22:13:21.000  file:///a.tgz  0123456789ab  8080    schema@2    team=core  by ci\n"),
        "{text}"
    );
}

#[test]
fn consumer_with_subscriptions() {
    let c: ConsumerView = serde_json::from_value(json!({
        "name": "web", "nodes": ["n0", "n1"],
        "subscriptions": {"api": {"mode": "strong", "strategy": {"all_at_once": {}}, "selected": 7, "version": 6, "deployment": "d-3"}}
    }))
    .unwrap();
    assert_eq!(
        consumer(&c),
        "consumer: web (2 nodes)\n\nORD  NODE\n0    n0\n1    n1\n\n\
         RESOURCE  MODE    STRATEGY     PIN  SELECTED  CONVERGED  DEPLOYMENT\n\
         api       strong  all-at-once  -    7         6          d-3\n"
    );
    assert_eq!(
        consumers(std::slice::from_ref(&c), false),
        "NAME  NODES  SUBSCRIPTIONS\nweb   2      api\n"
    );
    assert_eq!(
        consumers(&[c], true),
        "NAME  NODES  SUBSCRIPTIONS  HOLDS\nweb   2      api:strong@7   0\n"
    );
}

#[test]
fn subscription_policy_with_defaults_and_holds() {
    let c: ConsumerView = serde_json::from_value(json!({
        "name": "web", "nodes": ["n0"],
        "subscriptions": {"api": {"mode": "strong", "pin": 6, "selected": 6,
            "strategy": {"rolling": {"install_window": 2, "download_window": 3}},
            "min_healthy_ms": 5000, "pulse_interval_ms": 60000}},
        "holds": [{"resource": "api", "version": 7, "deployment": "d-4", "at": T0,
                   "reason": "version 7 of api held back on web: rolled back by d-4"}]
    }))
    .unwrap();
    assert_eq!(
        subscription(&c, "api"),
        "subscription web/api\n\n\
         mode:          strong\n\
         pin:           6\n\
         selected:      6\n\
         strategy:      rolling(install 2, download 3)\n\
         min healthy:   5.0s\n\
         retries:       0 per node; failed nodes tolerated: 0\n\
         on failure:    roll back\n\
         pulse every:   1m00s\n\
         completion:    all nodes\n\
         defaults for:  max_failures_per_node, max_failed_nodes, rollback_on_failure, completion\n\
         held back:     version 7 of api held back on web: rolled back by d-4\n"
    );
    assert!(consumer(&c)
        .ends_with("RESOURCE  HELD  BY   SINCE\napi       7     d-4  2023-11-14 22:13:20.000\n"));
    assert_eq!(
        subscription(&c, "db"),
        "consumer web has no subscription to db\n"
    );
}

#[test]
fn a_brake_hold_and_the_consumer_events() {
    let why = "version 2 of api held back on web by its brake: 3 of 10 nodes failed it within 10m, over 20%";
    let c: ConsumerView = serde_json::from_value(json!({
        "name": "web", "nodes": ["n0"],
        "subscriptions": {"api": {"mode": "weak", "selected": 1,
            "brake": {"enabled": true, "max_failed": "20%", "window_ms": 600000}}},
        "holds": [{"resource": "api", "version": 2, "by": "brake", "at": T0, "reason": why}],
        "events": [{"at": T0, "kind": "held", "by": "system", "message": why}]
    }))
    .unwrap();
    let text = consumer(&c);
    assert!(
        text.ends_with(&format!(
            "RESOURCE  HELD  BY     SINCE\napi       2     brake  2023-11-14 22:13:20.000\n\n\
             events:\n  2023-11-14 22:13:20.000  {why}\n"
        )),
        "{text}"
    );
    let text = subscription(&c, "api");
    assert!(
        text.contains(
            "brake:         on: more than 20% (at least 3) of the nodes failing a version within 10m \
             hold it back\n"
        ),
        "{text}"
    );
    // A weak subscription with no strategy of its own lists none.
    assert!(
        text.contains("settings:      none: each node moves by itself")
            && !text.contains("strategy:")
            && !text.contains("completion:"),
        "{text}"
    );
}

#[test]
fn group_deployment_steps() {
    let g: GroupDeploymentView = serde_json::from_value(group_deployment()).unwrap();
    assert_eq!(
        super::group_deployment(&g),
        "g-1 group shop RUNNING (step 2 of 2)\n\n\
         STEP  CONSUMER  RESOURCE  VERSION  DEPLOYMENT  STATUS\n\
         1     db        schema    2        d-1         ROLLED_FORWARD\n\
         2*    web       api       7        d-3         ROLLING_FORWARD\n\
         2*    web       cfg       1        -           -\n"
    );
    let started =
        json!({"id": "g-1", "steps": [[{"consumer": "db", "resource": "schema", "version": 2}]]});
    assert_eq!(
        group_started(&started),
        "started group deployment g-1\n\nSTEP  CONSUMER  RESOURCE  VERSION\n1     db        schema    2"
    );
}

#[test]
fn cluster_status_marks_the_leader() {
    let c = json!({"id": 2, "leader_id": 1, "term": 4, "last_applied": 120, "members": [
        {"id": 1, "raft_addr": "127.0.0.1:9081", "http_addr": "127.0.0.1:8081", "role": "voter"},
        {"id": 2, "raft_addr": "127.0.0.1:9082", "http_addr": "127.0.0.1:8082", "role": "voter"}
    ]});
    assert_eq!(
        cluster(&c),
        "answered by server 2; leader 1; term 4; last applied 120\n\n\
         ID  ROLE            RAFT_ADDR       HTTP_ADDR\n\
         1   voter (leader)  127.0.0.1:9081  127.0.0.1:8081\n\
         2   voter           127.0.0.1:9082  127.0.0.1:8082\n"
    );
}

#[test]
fn cluster_status_does_not_repeat_a_leader_role() {
    let c = json!({"id": 1, "leader_id": 1, "term": 2, "last_applied": 7, "members": [
        {"id": 1, "raft_addr": "127.0.0.1:9081", "http_addr": "127.0.0.1:8081", "role": "leader"}
    ]});
    let out = cluster(&c);
    assert!(out.contains("1   leader  "), "{out}");
    assert!(!out.contains("(leader)"), "{out}");
}

#[test]
fn the_settings_line_shows_the_tolerated_number_the_events_use() {
    let mut d: DeploymentView = serde_json::from_value(deployment()).unwrap();
    d.settings.strategy = convoy_actors::domain::Strategy::AllAtOnce { fail_fast: false };
    d.settings.max_failed_nodes = None;
    assert!(settings(&d.settings, Some(10))
        .contains("retries:       1 per node; failed nodes tolerated: 0\n"));
    d.settings.max_failed_nodes = Some(FailedNodes::Count(2));
    assert!(settings(&d.settings, Some(10)).contains("failed nodes tolerated: 2\n"));
    d.settings.max_failed_nodes = Some(FailedNodes::Percent(25));
    assert!(settings(&d.settings, Some(10)).contains("failed nodes tolerated: 2 (25% of 10)\n"));
    assert!(settings(&d.settings, None).contains("failed nodes tolerated: 25% of the nodes\n"));
}
