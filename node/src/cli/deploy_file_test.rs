//! deploy.toml parsing: every key, the strategy tables, and the refusals.

use convoy_actors::domain::{Completion, FailedNodes, Strategy};

use super::*;

#[test]
fn the_example_file_parses() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/deploy.toml");
    let req = load(Path::new(path)).unwrap();
    assert_eq!(req.consumer, "web");
    assert_eq!(req.resource, "api");
    assert_eq!(req.version, Some(2));
    assert_eq!(
        req.strategy,
        Some(Strategy::Rolling {
            install_window: 2,
            download_window: 4
        })
    );
    assert_eq!(req.nodes.as_deref(), Some("0-9"));
    assert_eq!(req.min_healthy_ms, Some(5000));
    assert_eq!(req.max_failures_per_node, Some(1));
    assert_eq!(req.max_failed_nodes, Some(FailedNodes::Count(2)));
    assert_eq!(req.rollback_on_failure, Some(true));
    assert_eq!(req.pulse_interval_ms, Some(30000));
    assert_eq!(
        req.completion,
        Some(Completion {
            quorum: Some(0.9),
            timeout_ms: Some(600000),
            ..Default::default()
        })
    );
    assert!(req.message.is_some());
}

#[test]
fn strategies_as_tables_and_the_json_they_send() {
    let req = parse(
        "d.toml",
        "consumer = \"c\"\nresource = \"r\"\n[strategy.batch]\nsizes = [1, 5]\n",
    )
    .unwrap();
    assert_eq!(
        req.strategy,
        Some(Strategy::Batch {
            sizes: vec![1, 5],
            autopause: false
        })
    );
    let req = parse("d.toml", "[strategy.all_at_once]\n").unwrap();
    assert_eq!(
        serde_json::to_value(&req).unwrap(),
        serde_json::json!({"strategy": {"all_at_once": {"fail_fast": false}}})
    );
    let req = parse(
        "d.toml",
        "strategy = { rolling = { install_window = 1, download_window = 2 } }",
    )
    .unwrap();
    assert_eq!(
        req.strategy,
        Some(Strategy::Rolling {
            install_window: 1,
            download_window: 2
        })
    );
}

#[test]
fn an_integer_quorum_is_a_count() {
    let req = parse("d.toml", "[completion]\nquorum = 3\n").unwrap();
    assert_eq!(
        req.completion,
        Some(Completion {
            quorum: Some(3.0),
            timeout_ms: None,
            ..Default::default()
        })
    );
}

#[test]
fn unknown_keys_are_refused_naming_the_key() {
    let cases = [
        ("consumer = \"c\"\nversoin = 2\n", "versoin"),
        (
            "[strategy.rolling]\ninstall_windw = 2\ndownload_window = 2\n",
            "strategy.rolling.install_windw",
        ),
        (
            "[strategy.batch]\nsizes = [1]\nautopaus = true\n",
            "strategy.batch.autopaus",
        ),
        (
            "[strategy.all_at_once]\nwindow = 1\n",
            "strategy.all_at_once.window",
        ),
        ("[strategy.canary]\n", "strategy.canary"),
        ("[completion]\nquorom = 1\n", "completion.quorom"),
    ];
    for (text, key) in cases {
        match parse("d.toml", text) {
            Err(CliError::UnknownKey { key: k, path, .. }) => {
                assert_eq!((k.as_str(), path.as_str()), (key, "d.toml"))
            }
            other => panic!("{text:?}: {other:?}"),
        }
    }
    let e = parse("d.toml", "colour = 1").unwrap_err().to_string();
    assert!(
        e.starts_with(
            "deployment file d.toml: unknown key \"colour\" (known here: consumer, resource"
        ),
        "{e}"
    );
}

#[test]
fn wrong_shapes_and_types_are_refused() {
    let e = parse(
        "d.toml",
        "[strategy.rolling]\n[strategy.batch]\nsizes = [1]\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("exactly one of"), "{e}");
    let e = parse("d.toml", "strategy = \"rolling\"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("strategy must be a table"), "{e}");
    let e = parse("d.toml", "version = \"two\"")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("deployment file d.toml:") && e.contains("version"),
        "{e}"
    );
    let e = parse("d.toml", "[strategy.rolling]\ninstall_window = 2\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("download_window"), "{e}");
    let e = parse("d.toml", "consumer = ").unwrap_err().to_string();
    assert!(e.starts_with("deployment file d.toml:"), "{e}");
}

#[test]
fn a_missing_file_names_the_path() {
    let e = load(Path::new("/nonexistent/deploy.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("cannot read deployment file /nonexistent/deploy.toml:"),
        "{e}"
    );
}

#[test]
fn the_pacing_table_of_the_readme_parses_and_its_keys_are_checked() {
    let req = parse(
        "deploy.toml",
        r#"
consumer = "web"
resource = "app"
strategy = { batch = { sizes = [1, 5] } }
[pacing]
bake_ms = 600000
healthy_deadline_ms = 300000
progress_deadline_ms = 1800000
confirm = ["before_promotion"]
"#,
    )
    .unwrap();
    let pacing = req.pacing.expect("pacing");
    assert_eq!(pacing.bake_ms, Some(600_000));
    assert_eq!(pacing.healthy_deadline_ms, Some(300_000));
    assert_eq!(pacing.progress_deadline_ms, Some(1_800_000));
    assert_eq!(
        pacing.confirm,
        vec![convoy_actors::domain::Gate::BeforePromotion]
    );
    let e = parse(
        "deploy.toml",
        "consumer = \"web\"\nresource = \"app\"\n[pacing]\nbake = 5\n",
    )
    .unwrap_err();
    assert!(e.to_string().contains("pacing.bake"), "{e}");
}
