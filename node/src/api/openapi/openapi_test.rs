//! The spec against the route declarations and docs/API.md, and its references.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::api::auth::table::matches;
use crate::api::routes;

const API_DOC: &str = include_str!("../../../../docs/API.md");

fn spec() -> Value {
    serde_json::from_str(super::json(routes())).expect("the spec is JSON")
}

/// `(METHOD, path)` of every operation in the spec.
fn operations(spec: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (path, item) in spec["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("path item").keys() {
            out.insert((method.to_uppercase(), path.clone()));
        }
    }
    out
}

/// `(METHOD, path)` of every route docs/API.md names in backquotes (`GET /v1/x/{id}`).
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
fn the_spec_is_openapi_3_1_with_one_operation_per_declared_route() {
    let spec = spec();
    assert!(
        spec["openapi"].as_str().unwrap().starts_with("3.1."),
        "{}",
        spec["openapi"]
    );
    let ops = operations(&spec);
    assert_eq!(ops.len(), routes().len(), "a route declared twice?");
    for route in routes() {
        let op = &spec["paths"][route.pattern][route.method.to_lowercase()];
        assert_eq!(op["summary"], route.summary, "{route:?}");
        assert_eq!(
            op["x-permission"],
            serde_json::to_value(route.need).unwrap(),
            "{route:?}"
        );
        let statuses: BTreeSet<u16> = op["responses"]
            .as_object()
            .unwrap()
            .keys()
            .map(|s| s.parse().unwrap())
            .collect();
        let declared: BTreeSet<u16> = route
            .answers
            .iter()
            .map(|a| a.status)
            .chain(super::error_statuses(route))
            .collect();
        assert_eq!(statuses, declared, "{route:?}");
    }
}

#[test]
fn api_md_documents_every_route_of_the_spec_and_no_other() {
    let spec = spec();
    let ops = operations(&spec);
    let docs = documented();
    for (method, path) in &ops {
        assert!(
            docs.iter().any(|(m, p)| m == method && matches(path, p)),
            "{method} {path} is in the spec but docs/API.md does not document it"
        );
    }
    for (method, path) in &docs {
        assert!(
            ops.iter().any(|(m, p)| m == method && matches(p, path)),
            "docs/API.md documents {method} {path}, which the spec lacks"
        );
    }
}

#[test]
fn every_operation_says_who_may_call_it_and_declares_the_error_shape() {
    let spec = spec();
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let permission = op["x-permission"].as_str().unwrap_or_default();
            assert!(!permission.is_empty(), "{method} {path}: no x-permission");
            let roles = op["x-roles"].as_array().unwrap();
            assert!(
                roles.iter().any(|r| r == "admin"),
                "{method} {path}: admin may do everything"
            );
            let responses = op["responses"].as_object().unwrap();
            assert!(responses
                .keys()
                .any(|s| s.starts_with('2') || s.starts_with('3')));
            for (status, answer) in responses {
                if status.starts_with('4') || status.starts_with('5') {
                    assert_eq!(
                        answer["$ref"], "#/components/responses/Error",
                        "{method} {path} {status}"
                    );
                }
            }
            if permission != "public" {
                assert!(responses.contains_key("401") && responses.contains_key("403"));
            }
        }
    }
}

#[test]
fn every_reference_resolves() {
    let spec = spec();
    fn walk(v: &Value, spec: &Value) {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    let pointer = r.strip_prefix('#').expect("local reference");
                    assert!(spec.pointer(pointer).is_some(), "{r} does not resolve");
                }
                map.values().for_each(|v| walk(v, spec));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, spec)),
            _ => {}
        }
    }
    walk(&spec, &spec);
}

#[actix_web::test]
async fn the_spec_is_served_as_json() {
    use actix_web::test as atest;
    let app = atest::init_service(
        actix_web::App::new()
            .app_data(actix_web::web::Data::new(crate::api::route::Routes(
                routes(),
            )))
            .configure(|cfg| super::routes().iter().for_each(|r| r.register(cfg))),
    )
    .await;
    let resp = atest::call_service(
        &app,
        atest::TestRequest::get().uri("/openapi.json").to_request(),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers().get("content-type").unwrap(),
        "application/json"
    );
    let body: Value = serde_json::from_slice(&atest::read_body(resp).await).unwrap();
    assert_eq!(body["info"]["title"], "convoy");
}

#[test]
fn the_document_is_the_same_bytes_whenever_it_is_built() {
    let first = super::canonical(&super::spec(routes()));
    for _ in 0..3 {
        assert_eq!(super::canonical(&super::spec(routes())), first);
    }
    assert_eq!(super::json(routes()), first);
}

#[test]
fn every_stream_describes_its_events() {
    let spec = spec();
    let mut streams = 0;
    for route in routes() {
        let op = &spec["paths"][route.pattern][route.method.to_lowercase()];
        let Some(content) = op["responses"]["200"]["content"]["text/event-stream"].as_object()
        else {
            continue;
        };
        streams += 1;
        let events = content["x-itemSchema"]["oneOf"]
            .as_array()
            .unwrap_or_else(|| panic!("{route:?}: no x-itemSchema"));
        let names: Vec<&str> = events
            .iter()
            .map(|e| e["properties"]["event"]["const"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"closed"), "{route:?}: {names:?}");
        for e in events {
            let data = &e["properties"]["data"];
            assert_eq!(data["contentMediaType"], "application/json", "{route:?}");
            let target = data["contentSchema"]["$ref"].as_str().unwrap();
            let name = target.trim_start_matches("#/components/schemas/");
            assert!(
                spec["components"]["schemas"][name].is_object(),
                "{route:?}: {target} is not in the document"
            );
        }
    }
    assert_eq!(streams, 2, "GET /v1/watch and the deployment feed");
}

#[test]
fn durations_are_described_in_both_spellings() {
    let spec = spec();
    let schemas = &spec["components"]["schemas"];
    for (schema, field) in [
        ("Pacing", "bake"),
        ("Completion", "timeout"),
        ("Brake", "window"),
        ("MetricSpec", "interval"),
        ("MetricSpec", "initial_delay"),
    ] {
        let props = &schemas[schema]["properties"];
        assert!(
            props[format!("{field}_ms")].is_object(),
            "{schema}.{field}_ms"
        );
        let text = props[field]["description"].as_str().unwrap_or_default();
        assert!(
            text.contains("with its unit"),
            "{schema}.{field}: {}",
            props[field]
        );
    }
}

#[test]
fn server_ids_in_paths_are_whole_numbers_and_every_steering_verb_is_its_own_operation() {
    let spec = spec();
    for (method, path) in [
        ("get", "/v1/cluster/membership/{id}"),
        ("delete", "/v1/cluster/members/{id}"),
        ("post", "/v1/cluster/members/{id}/replace"),
    ] {
        let schema = &spec["paths"][path][method]["parameters"][0]["schema"];
        assert_eq!(schema["type"], "integer", "{method} {path}: {schema}");
    }
    let deployment_id = &spec["paths"]["/v1/deployments/{id}"]["get"]["parameters"][0]["schema"];
    assert_eq!(deployment_id["type"], "string", "{deployment_id}");
    let paths = spec["paths"].as_object().expect("paths");
    assert!(
        paths.keys().all(|p| !p.contains("{action}")),
        "no catch-all action route"
    );
    for verb in ["pause", "resume", "abort", "rollback"] {
        for prefix in [
            "/v1/deployments/{id}",
            "/v1/consumers/{consumer}/resources/{resource}",
        ] {
            let path = format!("{prefix}/{verb}");
            assert!(paths[&path]["post"].is_object(), "{path}");
        }
    }
}
