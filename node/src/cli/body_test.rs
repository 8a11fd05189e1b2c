//! Arguments as typed on the command line → the JSON bodies sent to the API.

use clap::Parser;
use serde_json::{json, Value};

use super::*;
use crate::cli::args::{ConsumerCommand, DeployCommand, GroupCommand, Output, ResourceCommand};
use crate::cli::ClientCommand;

#[derive(Debug, Parser)]
#[command(name = "convoy")]
struct Cli {
    #[command(subcommand)]
    command: ClientCommand,
}

fn parse(line: &str) -> ClientCommand {
    let args = std::iter::once("convoy").chain(line.split_whitespace());
    Cli::try_parse_from(args)
        .unwrap_or_else(|e| panic!("{line}: {e}"))
        .command
}

fn parse_err(line: &str) -> String {
    let args = std::iter::once("convoy").chain(line.split_whitespace());
    Cli::try_parse_from(args).expect_err(line).to_string()
}

fn start_body(line: &str) -> Result<Value, CliError> {
    match parse(line) {
        ClientCommand::Deploy {
            command: DeployCommand::Start(args),
            ..
        } => start(&args, None).map(|r| serde_json::to_value(r).unwrap()),
        other => panic!("not deploy start: {other:?}"),
    }
}

#[test]
fn deploy_start_maps_every_flag() {
    let body = start_body(
        "deploy start web api --version 7 --strategy rolling --install-window 2 --download-window 4 \
         --nodes 0-1,5 --min-healthy-ms 5000 --max-failures-per-node 1 --max-failed-nodes 2 --no-rollback \
         --pulse-interval-ms 10000 --quorum 0.9 --timeout-ms 60000 --message canary",
    )
    .unwrap();
    assert_eq!(
        body,
        json!({
            "consumer": "web", "resource": "api", "version": 7,
            "strategy": {"rolling": {"install_window": 2, "download_window": 4}},
            "nodes": "0-1,5", "min_healthy_ms": 5000, "max_failures_per_node": 1, "max_failed_nodes": 2,
            "rollback_on_failure": false, "pulse_interval_ms": 10000,
            "completion": {"quorum": 0.9, "timeout_ms": 60000, "on_timeout": "finish"}, "message": "canary"
        })
    );
}

#[test]
fn deploy_start_force_asks_for_a_held_version() {
    let body = start_body("deploy start web api --version 4 --force").unwrap();
    assert_eq!(
        body,
        json!({"consumer": "web", "resource": "api", "version": 4, "force": true})
    );
}

#[test]
fn deploy_start_sends_only_what_is_given() {
    assert_eq!(
        start_body("deploy start web api").unwrap(),
        json!({"consumer": "web", "resource": "api"})
    );
}

#[test]
fn strategy_is_implied_by_its_flags() {
    let body = start_body("deploy start web api --install-window 3").unwrap();
    assert_eq!(
        body["strategy"],
        json!({"rolling": {"install_window": 3, "download_window": 3}})
    );
    let body = start_body("deploy start web api --batch-sizes 2,5,10 --autopause").unwrap();
    assert_eq!(
        body["strategy"],
        json!({"batch": {"sizes": [2, 5, 10], "autopause": true}})
    );
    let body = start_body("deploy start web api --strategy all-at-once").unwrap();
    assert_eq!(
        body["strategy"],
        json!({"all_at_once": {"fail_fast": false}})
    );
}

#[test]
fn contradictory_strategy_flags_are_refused_naming_the_flag() {
    let e = start_body("deploy start web api --strategy batch --install-window 2").unwrap_err();
    assert!(e.to_string().contains("--install-window"), "{e}");
    let e = start_body("deploy start web api --strategy rolling").unwrap_err();
    assert!(e.to_string().contains("--install-window"), "{e}");
    let e = start_body("deploy start web api --strategy batch").unwrap_err();
    assert!(e.to_string().contains("--batch-sizes"), "{e}");
    let e = start_body("deploy start web api --install-window 2 --batch-sizes 1").unwrap_err();
    assert!(e.to_string().contains("different strategies"), "{e}");
    let e = start_body("deploy start web api --strategy all-at-once --autopause").unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid --strategy \"all-at-once\": --batch-sizes and --autopause need --strategy batch"
    );
}

#[test]
fn flags_override_the_file() {
    let file = StartRequest {
        consumer: "web".into(),
        resource: "api".into(),
        version: Some(3),
        completion: Some(Completion {
            quorum: Some(0.5),
            timeout_ms: Some(1000),
            ..Default::default()
        }),
        message: Some("from file".into()),
        ..Default::default()
    };
    let ClientCommand::Deploy {
        command: DeployCommand::Start(args),
        ..
    } = parse("deploy start -f x.toml --version 4 --timeout-ms 2000")
    else {
        panic!()
    };
    let req = start(&args, Some(file)).unwrap();
    assert_eq!(req.version, Some(4));
    assert_eq!(
        req.completion,
        Some(Completion {
            quorum: Some(0.5),
            timeout_ms: Some(2000),
            ..Default::default()
        })
    );
    assert_eq!(req.message.as_deref(), Some("from file"));
    assert_eq!(
        (req.consumer.as_str(), req.resource.as_str()),
        ("web", "api")
    );
}

#[test]
fn consumer_and_resource_are_needed_without_a_file() {
    assert!(parse_err("deploy start web").contains("RESOURCE"));
    let ClientCommand::Deploy {
        command: DeployCommand::Start(args),
        ..
    } = parse("deploy start -f x.toml")
    else {
        panic!()
    };
    let e = start(&args, Some(StartRequest::default())).unwrap_err();
    assert_eq!(
        e.to_string(),
        "missing consumer: give it as an argument or in the deployment file"
    );
}

#[test]
fn publish_maps_artifact_metadata_and_dependencies() {
    let ClientCommand::Resource { command: ResourceCommand::Publish(args), .. } = parse(
        "resource publish api --label v1.2 --url file:///a.tgz --sha256 abc --size 10 --health-port 8080 \
         --depends-on db@3 --depends-on cfg@1 --metadata team=core --metadata note=a=b",
    ) else {
        panic!()
    };
    assert_eq!(
        publish(&args),
        json!({
            "label": "v1.2", "artifact": {"url": "file:///a.tgz", "sha256": "abc", "size": 10},
            "metadata": {"team": "core", "note": "a=b"},
            "depends_on": [{"resource": "db", "version": 3}, {"resource": "cfg", "version": 1}],
            "health_port": 8080
        })
    );
}

#[test]
fn bad_values_are_usage_errors_naming_flag_and_value() {
    let e = parse_err("resource publish api --depends-on db");
    assert!(
        e.contains("invalid --depends-on \"db\": expected RESOURCE@VERSION"),
        "{e}"
    );
    assert!(parse_err("resource publish api --depends-on db@x").contains("whole number"));
    assert!(parse_err("resource publish api --metadata novalue").contains("KEY=VALUE"));
    assert!(parse_err("resource publish api --sha256 abc").contains("--url"));
    assert!(parse_err("group create g --member web").contains("CONSUMER:RESOURCE"));
    assert!(parse_err("group create g").contains("--member"));
    assert!(parse_err("deploy list --status done").contains("done"));
}

#[test]
fn subscribe_maps_mode_strategy_pin_and_completion() {
    let ClientCommand::Consumer {
        command: ConsumerCommand::Subscribe(args),
        ..
    } = parse("consumer subscribe web api --mode strong --batch-sizes 1,2 --pin 4 --quorum 3")
    else {
        panic!()
    };
    assert_eq!(
        subscribe(&args, None).unwrap(),
        json!({"mode": "strong", "strategy": {"batch": {"sizes": [1, 2], "autopause": false}}, "pin": 4,
               "completion": {"quorum": 3.0, "timeout_ms": null, "on_timeout": "finish"}})
    );
}

#[test]
fn subscribe_sends_only_the_flags_given_and_nulls_for_cleared_fields() {
    let args = |line: &str| {
        let ClientCommand::Consumer {
            command: ConsumerCommand::Subscribe(args),
            ..
        } = parse(line)
        else {
            panic!()
        };
        args
    };
    // Issue 5: `--pin 1` alone must not send a mode or a strategy (the PATCH keeps them).
    assert_eq!(
        subscribe(&args("consumer subscribe web api --pin 1"), None).unwrap(),
        json!({"pin": 1})
    );
    let a = args(
        "consumer subscribe web api --min-healthy-ms 500 --max-failures-per-node 2 \
         --max-failed-nodes 1 --no-rollback --pulse-interval-ms 9000 --clear pin,strategy",
    );
    assert_eq!(
        subscribe(&a, None).unwrap(),
        json!({"min_healthy_ms": 500, "max_failures_per_node": 2, "max_failed_nodes": 1,
               "rollback_on_failure": false, "pulse_interval_ms": 9000, "pin": null, "strategy": null})
    );
    assert_eq!(
        subscribe(&args("consumer subscribe web api --no-brake"), None).unwrap(),
        json!({"brake": {"enabled": false}})
    );
    assert_eq!(
        subscribe(
            &args("consumer subscribe web api --brake-max-failed 5"),
            None
        )
        .unwrap(),
        json!({"brake": {"enabled": true, "max_failed": 5, "min_failed": 3, "window_ms": 600000}})
    );
    let weak: SubscriptionView = serde_json::from_value(
        json!({"mode": "weak", "brake": {"enabled": true, "max_failed": 5, "min_failed": 3, "window_ms": 600000}}),
    )
    .unwrap();
    assert_eq!(
        subscribe(
            &args("consumer subscribe web api --brake-window 30m"),
            Some(&weak)
        )
        .unwrap(),
        json!({"brake": {"enabled": true, "max_failed": 5, "min_failed": 3, "window_ms": 1800000}}),
        "the window alone keeps the existing tolerance"
    );
    assert_eq!(
        subscribe(&args("consumer subscribe web api --clear brake"), None).unwrap(),
        json!({"brake": null})
    );
    let clash = subscribe(
        &args("consumer subscribe web api --pin 2 --clear pin"),
        None,
    );
    assert!(clash.unwrap_err().to_string().contains("--clear"));
    // On an existing subscription, --quorum keeps its completion timeout.
    let existing: SubscriptionView = serde_json::from_value(
        json!({"mode": "strong", "completion": {"quorum": 0.5, "timeout_ms": 60000}}),
    )
    .unwrap();
    assert_eq!(
        subscribe(
            &args("consumer subscribe web api --quorum 3"),
            Some(&existing)
        )
        .unwrap(),
        json!({"completion": {"quorum": 3.0, "timeout_ms": 60000, "on_timeout": "finish"}})
    );
    // --on-timeout alone keeps the quorum and timeout; without it, the existing on_timeout stays.
    let existing: SubscriptionView = serde_json::from_value(
        json!({"mode": "strong", "completion": {"quorum": 0.5, "timeout_ms": 60000, "on_timeout": "fail"}}),
    )
    .unwrap();
    let patch = |line: &str| subscribe(&args(line), Some(&existing)).unwrap();
    assert_eq!(
        patch("consumer subscribe web api --quorum 3"),
        json!({"completion": {"quorum": 3.0, "timeout_ms": 60000, "on_timeout": "fail"}})
    );
    assert_eq!(
        patch("consumer subscribe web api --on-timeout finish"),
        json!({"completion": {"quorum": 0.5, "timeout_ms": 60000, "on_timeout": "finish"}})
    );
}

#[test]
fn fail_fast_needs_all_at_once() {
    let body = start_body("deploy start web api --strategy all-at-once --fail-fast").unwrap();
    assert_eq!(
        body["strategy"],
        json!({"all_at_once": {"fail_fast": true}})
    );
    let e = start_body("deploy start web api --install-window 2 --fail-fast").unwrap_err();
    assert!(e.to_string().contains("--fail-fast"), "{e}");
}

#[test]
fn node_lists_and_groups() {
    let ClientCommand::Consumer {
        command: ConsumerCommand::Create { nodes, .. },
        ..
    } = parse("consumer create web --nodes a,b,c")
    else {
        panic!()
    };
    assert_eq!(nodes, ["a", "b", "c"]);
    let ClientCommand::Consumer {
        command: ConsumerCommand::AddNodes { nodes, remove, .. },
        ..
    } = parse("consumer add-nodes web d e --remove a,b")
    else {
        panic!()
    };
    assert_eq!(
        update_nodes(&nodes, &remove).unwrap(),
        json!({"add": ["d", "e"], "remove": ["a", "b"]})
    );
    assert!(update_nodes(&[], &[]).is_err());
    let ClientCommand::Group {
        command: GroupCommand::Create { name, members },
        ..
    } = parse("group create g --member web:api --member db:schema")
    else {
        panic!()
    };
    assert_eq!(
        create_group(&name, &members),
        json!({"name": "g", "members": [{"consumer": "web", "resource": "api"}, {"consumer": "db", "resource": "schema"}]})
    );
    let ClientCommand::Group {
        command: GroupCommand::Deploy { name, versions },
        ..
    } = parse("group deploy g --version api=3 --version schema=2")
    else {
        panic!()
    };
    assert_eq!(
        group_deploy(&name, &versions).unwrap(),
        json!({"group": "g", "versions": {"api": 3, "schema": 2}})
    );
    assert_eq!(group_deploy("g", &[]).unwrap(), json!({"group": "g"}));
    assert!(group_deploy("g", &[("a".into(), 1), ("a".into(), 2)]).is_err());
}

#[test]
fn global_flags_go_anywhere_and_default() {
    let cmd = parse("deploy list --consumer web -o json --server a:1,b:2");
    let ClientCommand::Deploy { global, .. } = cmd else {
        panic!()
    };
    assert_eq!(
        (global.server.as_deref(), global.output),
        (Some("a:1,b:2"), Output::Json)
    );
    // Without the flag or CONVOY_SERVER the context decides (context.rs), else 127.0.0.1:8081.
    if std::env::var_os("CONVOY_SERVER").is_none() {
        let ClientCommand::Cluster { global, .. } = parse("cluster status -o yaml") else {
            panic!()
        };
        assert_eq!(
            (global.server.as_deref(), global.output),
            (None, Output::Yaml)
        );
    }
}

#[test]
fn queries_and_paths_are_encoded() {
    assert_eq!(
        query(&[
            ("consumer", Some("web a")),
            ("resource", None),
            ("status", Some("active"))
        ]),
        "?consumer=web%20a&status=active"
    );
    assert_eq!(query(&[("consumer", None)]), "");
    assert_eq!(encode("a/b?c"), "a%2Fb%3Fc");
    assert_eq!(encode("d-1"), "d-1");
}

#[test]
fn durations_need_a_unit_unless_the_flag_name_gives_it() {
    let watch_timeout = |line: &str| match parse(line) {
        ClientCommand::Deploy {
            command: DeployCommand::Watch { timeout, .. },
            ..
        } => timeout,
        other => panic!("not deploy watch: {other:?}"),
    };
    assert_eq!(
        watch_timeout("deploy watch d-1 --timeout 1h30m"),
        Some(std::time::Duration::from_secs(5_400))
    );
    let err = parse_err("deploy watch d-1 --timeout 12");
    assert!(
        err.contains("--timeout") && err.contains("12s") && err.contains("12ms"),
        "{err}"
    );
    let ms = |line: &str| start_body(line).unwrap()["completion"]["timeout_ms"].clone();
    assert_eq!(ms("deploy start web api --timeout-ms 1500"), json!(1500));
    assert_eq!(ms("deploy start web api --timeout-ms 2m"), json!(120_000));
    let err = parse_err("deploy start web api --timeout-ms soon");
    assert!(
        err.contains("--timeout-ms") && err.contains("soon"),
        "{err}"
    );
}

#[test]
fn deploy_start_maps_the_pacing_flags() {
    let body = start_body(
        "deploy start web api --strategy batch --batch-sizes 1,5 --bake-ms 10m \
         --healthy-deadline-ms 5m --progress-deadline-ms 30m --confirm before-promotion,before-start",
    )
    .unwrap();
    assert_eq!(
        body["pacing"],
        json!({"bake_ms": 600_000, "healthy_deadline_ms": 300_000, "download_deadline_ms": null,
               "progress_deadline_ms": 1_800_000, "confirm": ["before_promotion", "before_start"]})
    );
    let plain = start_body("deploy start web api").unwrap();
    assert!(plain.get("pacing").is_none(), "{plain}");
}

#[test]
fn deploy_start_sends_the_start_jitter_as_given_and_refuses_a_bare_number() {
    let body = start_body("deploy start web api --start-jitter 30s").unwrap();
    assert_eq!(body["start_jitter"], "30s");
    assert!(start_body("deploy start web api").unwrap()["start_jitter"].is_null());
    let refused = parse_err("deploy start web api --start-jitter 30");
    assert!(refused.contains("--start-jitter"), "{refused}");
}
