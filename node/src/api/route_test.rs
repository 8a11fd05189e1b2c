//! The declarations themselves: each is complete and reachable, and the router derived from them serves
//! every one (what the permission table and the OpenAPI document derive is tested beside them).

use std::collections::BTreeSet;

use actix_web::http::StatusCode;
use actix_web::test as atest;
use actix_web::App;
use serde_json::Value;

use crate::api::auth::table::{lookup, matches};
use crate::api::{configure, routes};

/// The pattern with each `{x}` filled, as a request would name it.
fn concrete(pattern: &str) -> String {
    pattern
        .split('/')
        .map(|s| if s.starts_with('{') { "x-1" } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

#[test]
fn every_route_is_declared_once_with_a_handler_a_summary_and_a_success() {
    let mut seen = BTreeSet::new();
    for route in routes() {
        assert!(
            seen.insert((route.method, route.pattern)),
            "{route:?} is declared twice"
        );
        assert!(
            ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&route.method),
            "{route:?}"
        );
        assert!(route.pattern.starts_with('/'), "{route:?}");
        assert!(route.has_handler(), "{route:?} has no handler");
        assert!(!route.summary.is_empty(), "{route:?} has no summary");
        assert!(!route.action.is_empty(), "{route:?} has no action");
        assert!(
            route.answers.iter().any(|a| (200..400).contains(&a.status)),
            "{route:?} declares no success"
        );
        assert!(
            route.errors.iter().all(|s| (400..600).contains(s)),
            "{route:?}: errors {:?}",
            route.errors
        );
    }
}

#[test]
fn no_route_is_hidden_behind_an_earlier_one() {
    for route in routes() {
        // A pattern read as a path: `{x}` there is a segment like any other.
        let first = lookup(routes(), route.method, route.pattern).expect("a route matches itself");
        assert!(
            std::ptr::eq(first, route),
            "{route:?} is never reached: {first:?} comes first"
        );
        assert!(matches(route.pattern, &concrete(route.pattern)));
    }
}

#[actix_web::test]
async fn the_router_serves_every_declared_route() {
    // No replica and no auth: a served route fails in its handler or extractors (400, 500, ...) or
    // answers; only an unrouted request reaches the "no route" 404.
    let app = atest::init_service(App::new().configure(|cfg| configure(cfg, true))).await;
    for route in routes() {
        let req = atest::TestRequest::default()
            .method(route.method.parse().unwrap())
            .uri(&concrete(route.pattern))
            .insert_header(("content-type", "application/json"))
            .set_payload("{}");
        let resp = atest::call_service(&app, req.to_request()).await;
        let status = resp.status();
        let body: Value =
            serde_json::from_slice(&atest::read_body(resp).await).unwrap_or(Value::Null);
        let unrouted = status == StatusCode::NOT_FOUND
            && body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("no route"));
        assert!(!unrouted, "{route:?} is not routed: {body}");
    }
}

#[actix_web::test]
async fn without_faults_the_fault_endpoint_alone_is_not_routed() {
    let app = atest::init_service(App::new().configure(|cfg| configure(cfg, false))).await;
    let req = atest::TestRequest::post()
        .uri(crate::api::debug::FAULTS)
        .insert_header(("content-type", "application/json"))
        .set_payload("{}");
    let resp = atest::call_service(&app, req.to_request()).await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
}
