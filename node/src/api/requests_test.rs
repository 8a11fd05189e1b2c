//! The API's requests on an in-process server, beyond fuzzing: the JSON body limit, and regressions
//! (a member that cannot be reached, an action with a malformed body).

use actix_web::{http::StatusCode, test, web, App};
use serde_json::{json, Value};

use super::fuzz_test::seeds;
use super::test_server::{request, OneNode};
use crate::api;

#[actix_web::test]
async fn json_body_over_the_limit_is_refused_without_reading_it() {
    // The limit comes from `api::configure`; a probe route shows it applies to every JSON body.
    let app = test::init_service(
        App::new()
            .configure(|cfg| api::configure(cfg, false))
            .route(
                "/probe",
                web::post().to(|body: web::Json<Value>| async move {
                    actix_web::HttpResponse::Ok().json(body.into_inner())
                }),
            ),
    )
    .await;
    let limit = 4 * 1024 * 1024;
    let fits = format!("\"{}\"", "x".repeat(limit - 2));
    let resp = test::call_service(
        &app,
        request("POST", "/probe", fits.into_bytes()).to_request(),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);

    let over = format!("\"{}\"", "x".repeat(limit));
    let resp = test::call_service(
        &app,
        request("POST", "/probe", over.into_bytes()).to_request(),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let err: Value = serde_json::from_slice(&test::read_body(resp).await).unwrap();
    assert_eq!(err["error"]["code"], "payload_too_large");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than allowed"),
        "{err}"
    );

    // A client announcing 1 GiB is refused on its Content-Length, before any byte is read.
    let req = request("POST", "/probe", b"{}".to_vec())
        .insert_header(("content-length", (1u64 << 30).to_string()))
        .to_request();
    let resp = test::call_service(&app, req).await;
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

/// A fresh one-node app without the leader's actors, for the regression tests below.
macro_rules! plain_app {
    ($node:expr) => {
        test::init_service(
            App::new()
                .app_data(web::Data::new($node.replica.clone()))
                .configure(|cfg| api::configure(cfg, true)),
        )
        .await
    };
}

/// POSTs `body` as JSON; the status and the answer's JSON (null when it is none).
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

#[actix_web::test]
async fn adding_an_unreachable_member_does_not_wedge_writes() {
    let node = OneNode::start().await;
    let app = plain_app!(node);
    let member = json!({"id": 2, "raft_addr": "x", "http_addr": "y"});
    let (status, _) = post_json!(app, "/v1/cluster/members", member);
    assert!(
        status.is_client_error() || status.is_server_error(),
        "{status}"
    );
    let (status, body) = post_json!(app, "/v1/resources", json!({"name": "still-writable"}));
    assert_eq!(status, StatusCode::CREATED, "{body}");
    node.stop().await;
}

#[actix_web::test]
async fn action_with_a_malformed_body_changes_nothing() {
    let node = OneNode::start().await;
    let app = plain_app!(node);
    for seed in seeds()
        .iter()
        .take(8)
        .filter(|s| !s.path.ends_with("/report"))
    {
        let req = request(seed.method, seed.path, seed.body.to_string().into_bytes()).to_request();
        let status = test::call_service(&app, req).await.status();
        assert!(
            status.is_success(),
            "{} {}: {status}",
            seed.method,
            seed.path
        );
    }
    for bad in [
        json!({"mesage": "typo"}),
        json!(4294967296u64),
        json!({"message": 7}),
    ] {
        let (status, body) = post_json!(app, "/v1/deployments/d-1/pause", bad);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad} paused: {body}");
    }
    node.stop().await;
}
