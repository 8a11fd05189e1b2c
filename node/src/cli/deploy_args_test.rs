//! A deployment is named by id or by job key (`CONSUMER/RESOURCE`), and each posts its verbs to its own
//! route.

use clap::Parser;

use super::{DeployCommand, DeploymentRef, PauseArgs};
use crate::cli::exec::verb_path;

/// `deploy ...` alone, as clap reads it.
#[derive(Debug, Parser)]
struct Deploy {
    #[command(subcommand)]
    command: DeployCommand,
}

fn pair(consumer: &str, resource: &str) -> DeploymentRef {
    DeploymentRef::Pair {
        consumer: consumer.into(),
        resource: resource.into(),
    }
}

#[test]
fn an_id_or_a_consumer_and_resource_name_the_deployment() {
    assert_eq!("d-17".parse(), Ok(DeploymentRef::Id("d-17".into())));
    assert_eq!("web/app".parse(), Ok(pair("web", "app")));
    for bad in ["/app", "web/", "web/app/x", "/"] {
        let refused = bad.parse::<DeploymentRef>().unwrap_err();
        assert!(refused.contains("CONSUMER/RESOURCE"), "{bad}: {refused}");
    }
    assert_eq!(pair("web", "app").to_string(), "web/app");
}

#[test]
fn each_verb_posts_to_the_id_route_or_the_pair_route() {
    assert_eq!(
        verb_path(&DeploymentRef::Id("d-17".into())),
        "/v1/deployments/d-17"
    );
    assert_eq!(
        verb_path(&pair("web", "app.v2")),
        "/v1/consumers/web/resources/app.v2"
    );
    // What the server would refuse is still encoded, never a path of its own.
    assert_eq!(
        verb_path(&pair("a b", "c?d")),
        "/v1/consumers/a%20b/resources/c%3Fd"
    );
}

#[test]
fn the_verbs_take_a_pair_and_undo_an_id() {
    for verb in ["pause", "resume", "confirm", "abort", "rollback"] {
        let parsed = Deploy::try_parse_from(["deploy", verb, "web/app", "-m", "why"]).unwrap();
        let args = match parsed.command {
            DeployCommand::Pause(PauseArgs { action: a, hard }) => {
                assert!(!hard);
                a
            }
            DeployCommand::Resume(a)
            | DeployCommand::Confirm(a)
            | DeployCommand::Abort(a)
            | DeployCommand::Rollback(a) => a,
            other => panic!("{verb}: {other:?}"),
        };
        assert_eq!(args.id, pair("web", "app"), "{verb}");
        assert_eq!(args.message.as_deref(), Some("why"));
    }
    let parsed = Deploy::try_parse_from(["deploy", "pause", "d-4", "--hard"]).unwrap();
    assert!(matches!(
        parsed.command,
        DeployCommand::Pause(PauseArgs { hard: true, .. })
    ));
    let parsed = Deploy::try_parse_from(["deploy", "pulse", "web/app"]).unwrap();
    assert!(matches!(parsed.command, DeployCommand::Pulse { id } if id == pair("web", "app")));
    assert!(Deploy::try_parse_from(["deploy", "pause", "web/"]).is_err());
    let parsed = Deploy::try_parse_from(["deploy", "undo", "d-3"]).unwrap();
    assert!(matches!(parsed.command, DeployCommand::Undo(a) if a.id == "d-3"));
}
