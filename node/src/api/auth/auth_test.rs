//! The route declarations against docs/API.md, and the middleware's 404/401/415 answers on an app whose handlers
//! are stubs (tokens themselves are tested on a real cluster in tests/it/security_tokens.rs).

use actix_web::http::StatusCode;
use actix_web::middleware::from_fn;
use actix_web::test as atest;
use actix_web::{web, App, HttpResponse};
use serde_json::Value;

use super::table::{lookup, matches};
use super::*;
use crate::api::routes;

const API_DOC: &str = include_str!("../../../../docs/API.md");

/// `(method, pattern)` of every route docs/API.md names in backquotes (`GET /v1/x/{id}`).
fn documented() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for piece in API_DOC.split('`') {
        let mut words = piece.split_whitespace();
        let (Some(method), Some(path), None) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        if ["GET", "POST", "PUT", "DELETE", "PATCH"].contains(&method) && path.starts_with('/') {
            let path = path.split('?').next().unwrap_or(path);
            out.push((method.to_string(), path.to_string()));
        }
    }
    out
}

#[test]
fn every_documented_route_is_declared_and_every_declared_route_is_documented() {
    let docs = documented();
    assert!(docs.len() >= 30, "too few routes parsed: {docs:?}");
    for (method, path) in &docs {
        assert!(
            lookup(routes(), method, path).is_some(),
            "{method} {path} is documented but no route declares it (it would answer 404)"
        );
    }
    for rule in routes() {
        assert!(
            docs.iter()
                .any(|(m, p)| m == rule.method && matches(rule.pattern, p)),
            "{} {} is declared but not in docs/API.md",
            rule.method,
            rule.pattern
        );
    }
}

#[test]
fn the_first_matching_rule_decides_and_params_are_one_segment() {
    let pulse = lookup(routes(), "POST", "/v1/deployments/d-1/pulse").unwrap();
    assert_eq!(pulse.need, Permission::Pulse);
    let pause = lookup(routes(), "POST", "/v1/deployments/d-1/pause").unwrap();
    assert_eq!(pause.need, Permission::Operate);
    assert!(lookup(routes(), "GET", "/v1/deployments/d-1/pause").is_none());
    assert!(lookup(routes(), "POST", "/v1/deployments//pause").is_none());
    assert!(lookup(routes(), "DELETE", "/v1/tokens/").is_none());
    assert!(lookup(routes(), "GET", "/v1/tokens/x/y").is_none());
    assert!(lookup(routes(), "GET", "/v1/nope").is_none());
    assert!(lookup(routes(), "get", "/v1/cluster").is_none());
}

#[test]
fn members_and_tokens_need_admin_and_reports_need_report() {
    for rule in routes() {
        let want = if rule.pattern.starts_with("/v1/cluster/members/")
            || rule.pattern == "/v1/cluster/members"
            || rule.pattern.starts_with("/v1/tokens")
            || rule.pattern.starts_with("/v1/debug")
            || (rule.pattern == "/v1/cluster/limits" && rule.method == "PUT")
        {
            // The fleet-wide limits override every server's config: an admin's (DEPLOYMENTS.md §16).
            Some(Permission::Admin)
        } else if rule.pattern.starts_with("/v1/nodes/") && rule.method == "POST" {
            Some(Permission::Report)
        } else if ["/healthz", "/readyz", "/v1/cluster/membership/{id}", "/"]
            .contains(&rule.pattern)
            || rule.pattern.starts_with("/ui/")
            || rule.pattern.starts_with("/docs")
            || rule.pattern == "/openapi.json"
        {
            Some(Permission::Public)
        } else if rule.pattern == "/v1/whoami" {
            Some(Permission::Authenticated)
        } else if rule.method == "GET" {
            None // Read or ReadResources
        } else if rule.pattern.ends_with("/pulse") || rule.pattern == "/v1/deployments/{id}/confirm"
        {
            // A pulser token may also pass a confirmation gate (DEPLOYMENTS.md §14).
            Some(Permission::Pulse)
        } else {
            Some(Permission::Operate)
        };
        match want {
            Some(p) => assert_eq!(rule.need, p, "{} {}", rule.method, rule.pattern),
            None => assert!(
                matches!(rule.need, Permission::Read | Permission::ReadResources),
                "{} {}",
                rule.method,
                rule.pattern
            ),
        }
    }
}

/// Fills `{x}` segments so a pattern becomes a path.
fn concrete(pattern: &str) -> String {
    pattern
        .split('/')
        .map(|s| if s.starts_with('{') { "x-1" } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

macro_rules! stub_app {
    ($mode:expr) => {
        atest::init_service(
            App::new()
                .wrap(from_fn(check))
                .app_data(web::Data::new($mode))
                .app_data(web::Data::new(crate::api::route::Routes(routes())))
                .default_service(web::to(|| async { HttpResponse::Ok().body("handler") })),
        )
        .await
    };
}

/// Sends a request; its status and JSON body (or null).
macro_rules! call {
    ($app:expr, $req:expr $(,)?) => {{
        let resp = atest::call_service($app, $req.to_request()).await;
        let status = resp.status();
        let bytes = atest::read_body(resp).await;
        (
            status,
            serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null),
        )
    }};
}

fn request(rule: &table::Rule) -> atest::TestRequest {
    let req = atest::TestRequest::default()
        .method(rule.method.parse().unwrap())
        .uri(&concrete(rule.pattern));
    if rule.method == "GET" {
        req
    } else {
        req.insert_header(("content-type", "application/json"))
            .set_payload("{}")
    }
}

#[actix_web::test]
async fn with_auth_on_every_route_but_health_needs_a_token() {
    let app = stub_app!(AuthMode::On);
    for rule in routes() {
        let (status, body) = call!(&app, request(rule));
        if rule.need == Permission::Public {
            assert_eq!(status, StatusCode::OK, "{} {}", rule.method, rule.pattern);
        } else {
            assert_eq!(
                (status, body["error"]["code"].as_str()),
                (StatusCode::UNAUTHORIZED, Some("unauthenticated")),
                "{} {}: {body}",
                rule.method,
                rule.pattern
            );
        }
        // A malformed Authorization header is no token either.
        let (status, _) = call!(
            &app,
            request(rule).insert_header(("authorization", "Basic dXNlcjpwdw==")),
        );
        let want = if rule.need == Permission::Public {
            StatusCode::OK
        } else {
            StatusCode::UNAUTHORIZED
        };
        assert_eq!(status, want, "{} {}", rule.method, rule.pattern);
    }
}

#[actix_web::test]
async fn unknown_routes_are_404_in_the_error_shape() {
    let app = stub_app!(AuthMode::On);
    for (method, path) in [
        ("GET", "/v1/nope"),
        ("POST", "/v1/clusters"),
        ("GET", "/v1/tokens/x/y"),
    ] {
        let (status, body) = call!(
            &app,
            atest::TestRequest::default()
                .method(method.parse().unwrap())
                .uri(path),
        );
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}");
        assert_eq!(body["error"]["code"], "not_found", "{body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(path),
            "{body}"
        );
    }
}

#[actix_web::test]
async fn state_changes_must_be_json_even_without_a_body() {
    let app = stub_app!(AuthMode::Off);
    let post = |ct: Option<&str>, body: &'static str| {
        let req = atest::TestRequest::post()
            .uri("/v1/deployments/d-1/rollback")
            .set_payload(body);
        match ct {
            Some(ct) => req.insert_header(("content-type", ct.to_string())),
            None => req,
        }
    };
    for (ct, body) in [
        (Some("application/x-www-form-urlencoded"), "message=x"),
        (Some("text/plain"), "{}"),
        (Some("multipart/form-data; boundary=x"), ""),
        (None, ""),
        (None, "{}"),
    ] {
        let (status, answer) = call!(&app, post(ct, body));
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                Some("unsupported_media_type")
            ),
            "{ct:?} {body:?}: {answer}"
        );
    }
    for ct in [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
    ] {
        let (status, _) = call!(&app, post(Some(ct), ""));
        assert_eq!(status, StatusCode::OK, "{ct}");
    }
    // GETs need no content type; a DELETE may omit it when it has no body, never claim another.
    let (status, _) = call!(&app, atest::TestRequest::get().uri("/v1/cluster"));
    assert_eq!(status, StatusCode::OK);
    let (status, _) = call!(&app, atest::TestRequest::delete().uri("/v1/tokens/ci"));
    assert_eq!(status, StatusCode::OK);
    let (status, _) = call!(
        &app,
        atest::TestRequest::delete()
            .uri("/v1/tokens/ci")
            .insert_header(("content-type", "text/plain"))
            .set_payload("x"),
    );
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[test]
fn anonymous_callers_report_for_anyone_and_tokens_only_for_their_nodes() {
    use convoy_actors::domain::Role;
    let token = |role, nodes: Option<&str>| {
        Caller::Token(Token {
            name: "rack-7".into(),
            role,
            nodes: nodes.map(String::from),
            hash: [0; 32],
            created_at: 0,
            created_by: Actor::System,
            expires_at: None,
            consumers: Vec::new(),
        })
    };
    assert!(Caller::Anonymous.check_report("any").is_ok());
    assert!(token(Role::Agent, Some("web-*"))
        .check_report("web-1")
        .is_ok());
    let refused = token(Role::Agent, Some("web-*"))
        .check_report("db-1")
        .unwrap_err();
    assert_eq!(refused.code(), "forbidden");
    let message = refused.to_string();
    assert!(
        message.contains("\"db-1\"") && message.contains("web-*") && message.contains("rack-7"),
        "{message}"
    );
    assert_eq!(
        token(Role::Reader, None).actor(),
        Actor::Token("rack-7".into())
    );
    assert_eq!(Caller::Anonymous.actor(), Actor::User);
}

#[actix_web::test]
async fn a_served_path_with_another_method_is_405_with_allow() {
    let app = stub_app!(AuthMode::On);
    for (method, path, allow) in [
        ("POST", "/v1/cluster", "GET"),
        ("DELETE", "/v1/deployments/d-1", "GET"),
        ("PUT", "/v1/tokens", "GET, POST"),
    ] {
        let resp = atest::call_service(
            &app,
            atest::TestRequest::default()
                .method(method.parse().unwrap())
                .uri(path)
                .to_request(),
        )
        .await;
        assert_eq!(
            resp.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}"
        );
        assert_eq!(
            resp.headers().get("allow").unwrap(),
            allow,
            "{method} {path}"
        );
        let body: Value = serde_json::from_slice(&atest::read_body(resp).await).unwrap();
        assert_eq!(body["error"]["code"], "method_not_allowed", "{body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(path),
            "{body}"
        );
    }
}
