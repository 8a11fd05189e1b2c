use super::*;
use crate::command::DeploymentSpec;
use crate::entities::policy::{Policy, PolicyPatch};

fn analysis(provider: &str) -> Analysis {
    serde_json::from_value(serde_json::json!({"provider": provider,
        "metrics": [{"name": "errors", "query": "q", "success": "result < 1"}]}))
    .unwrap()
}

fn start(provider: &str) -> Command {
    Command::StartDeployment(DeploymentSpec {
        consumer: "c".into(),
        resource: "r".into(),
        analysis: Some(analysis(provider)),
        ..DeploymentSpec::default()
    })
}

#[test]
fn an_unknown_provider_is_refused_naming_it_and_the_known_ones() {
    let known = vec!["prom".to_string(), "thanos".to_string()];
    assert!(check_providers(&start("prom"), &known).is_ok());
    let e = check_providers(&start("promm"), &known)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "analysis.provider = \"promm\" is invalid: no [[analysis_provider]] of that name in this \
         server's config (it has: prom, thanos)"
    );
    let e = check_providers(&start("prom"), &[])
        .unwrap_err()
        .to_string();
    assert!(e.ends_with("(it has: none)"), "{e}");
}

#[test]
fn subscriptions_and_group_overrides_are_checked_too() {
    let known = vec!["prom".to_string()];
    let subscribe = Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Default::default(),
        pin: None,
        policy: Policy {
            analysis: Some(analysis("nope")),
            ..Policy::default()
        },
    };
    assert!(check_providers(&subscribe, &known).is_err());
    let patch = Command::PatchSubscription {
        consumer: "c".into(),
        resource: "r".into(),
        mode: None,
        pin: Change::Keep,
        policy: PolicyPatch {
            analysis: Change::Set(analysis("nope")),
            ..PolicyPatch::default()
        },
    };
    assert!(check_providers(&patch, &known).is_err());
    let group = Command::StartGroupDeployment {
        group: "g".into(),
        versions: None,
        overrides: [(
            "r".to_string(),
            Policy {
                analysis: Some(analysis("nope")),
                ..Policy::default()
            },
        )]
        .into_iter()
        .collect(),
    };
    assert!(check_providers(&group, &known).is_err());
}
