//! The verbs by job key on an in-process server: each acts on the pair's active deployment (the one the
//! id routes would act on), a pair with none is 404 naming it (a pulse: STOP), and names beyond the
//! creation rules are 400 without echoing them whole.

use actix_web::{http::StatusCode, test, web, App};
use serde_json::{json, Value};

use crate::api;
use crate::api::test_server::{request, OneNode};
use convoy_actors::domain::Command;

/// POSTs `body` as JSON; the status and the answer's JSON.
macro_rules! post_json {
    ($app:expr, $path:expr, $body:expr) => {{
        let req = request("POST", $path, $body.to_string().into_bytes()).to_request();
        let resp = test::call_service(&$app, req).await;
        let status = resp.status();
        let body = test::read_body(resp).await;
        (
            status,
            serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null),
        )
    }};
}

const PAIR: &str = "/v1/consumers/web/resources/app";

#[actix_web::test]
async fn verbs_by_pair_act_on_its_active_deployment_and_name_the_pair_when_there_is_none() {
    let node = OneNode::start().await;
    let app = test::init_service(
        App::new()
            .app_data(web::Data::new(node.replica.clone()))
            .configure(|cfg| api::configure(cfg, false)),
    )
    .await;
    for (path, body) in [
        ("/v1/resources", json!({"name": "app"})),
        ("/v1/resources/app/versions", json!({})),
        ("/v1/resources/app/versions", json!({})),
        ("/v1/consumers", json!({"name": "web", "nodes": ["web-0"]})),
    ] {
        let (status, answer) = post_json!(app, path, body);
        assert!(status.is_success(), "{path}: {status} {answer}");
    }
    // A node that never reported would be skipped, and the deployment end at once (no leader here to
    // take the report route's reports: the command itself).
    let report = serde_json::from_value(json!({"node": "web-0",
                                               "resources": {"app": {"current": 1}}}))
    .unwrap();
    node.replica
        .propose(Command::ReportNodes(vec![report]))
        .await
        .unwrap();
    let start = json!({"consumer": "web", "resource": "app", "version": 2,
                       "pulse_interval_ms": 60_000});
    let (_, started) = post_json!(app, "/v1/deployments", start);
    let id = started["id"].clone();

    let (status, pulsed) = post_json!(app, &format!("{PAIR}/pulse"), json!({}));
    assert_eq!(status, StatusCode::OK, "{pulsed}");
    assert_eq!(pulsed["status"], "OK", "{pulsed}");
    let (status, paused) = post_json!(app, &format!("{PAIR}/pause"), json!({"message": "m"}));
    assert_eq!(status, StatusCode::OK, "{paused}");
    assert_eq!(
        (&paused["id"], &paused["status"]),
        (&id, &json!("ROLL_FORWARD_PAUSED"))
    );
    // A malformed body is refused as on the id route.
    let (status, _) = post_json!(app, &format!("{PAIR}/resume"), json!({"mesage": "typo"}));
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, unknown) = post_json!(app, &format!("{PAIR}/reboot"), json!({}));
    assert_eq!(status, StatusCode::NOT_FOUND, "{unknown}");
    let (status, aborted) = post_json!(app, &format!("{PAIR}/abort"), json!({}));
    assert_eq!(status, StatusCode::OK, "{aborted}");
    assert_eq!(
        (&aborted["id"], &aborted["status"]),
        (&id, &json!("ABORTED"))
    );

    let (status, none) = post_json!(app, &format!("{PAIR}/rollback"), json!({}));
    assert_eq!(status, StatusCode::NOT_FOUND, "{none}");
    assert_eq!(
        none["error"]["message"],
        "consumer \"web\" has no active deployment of resource \"app\""
    );
    let (status, stop) = post_json!(app, &format!("{PAIR}/pulse"), json!({}));
    assert_eq!(status, StatusCode::OK, "{stop}");
    assert_eq!(stop, json!({"status": "STOP", "state": null}));
    let (status, none) = post_json!(app, "/v1/consumers/ghost/resources/app/pause", json!({}));
    assert_eq!(status, StatusCode::NOT_FOUND, "{none}");

    let huge = "x".repeat(10_000);
    for path in [
        format!("/v1/consumers/{huge}/resources/app/pause"),
        format!("/v1/consumers/web/resources/{huge}/pulse"),
        "/v1/consumers/web/resources/..%2F/abort".to_string(),
    ] {
        let (status, body) = post_json!(app, &path, json!({}));
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.len() < 300, "{message}");
    }
    node.stop().await;
}
