//! `GET /openapi.json`: the OpenAPI 3.1 description of the API, built with utoipa from the route
//! declarations (handed in: the app's `Routes`, each route's permission, summary, query, body and
//! answers) and the handlers' types (`ToSchema`/`IntoParams` derives), once per process.

pub mod answers;
pub mod events;
pub mod spec;

use std::sync::OnceLock;

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use convoy_actors::domain::Permission::{self, Public};
use convoy_actors::domain::{NodePhase, Role, StatusFilter};
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::path::{
    HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn, PathItem,
};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, Required, ResponseBuilder};

use super::route::{Content, Route, Routes};
use super::watch::SSE;
use spec::Spec;

/// This module's route.
pub fn routes() -> Vec<Route> {
    vec![
        Route::get("/openapi.json", Public, "read the API description")
            .summary("This document")
            .to(serve)
            .answer(200, "The OpenAPI 3.1 document.", Content::AnyObject),
    ]
}

async fn serve(routes: web::Data<Routes>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "application/json"))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(json(routes.0))
}

/// The spec of `routes` as JSON text, built on first use (a process serves one route table).
pub fn json(routes: &[Route]) -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| canonical(&spec(routes)))
}

/// The document as pretty JSON with every object's keys in sorted order, so that the same routes give
/// the same bytes in every process (utoipa keeps extensions in a `HashMap`, whose order is random).
pub fn canonical(spec: &OpenApi) -> String {
    // serde_json's own maps are sorted (it is built without `preserve_order`).
    let mut value = serde_json::to_value(spec).expect("an OpenAPI document always serializes");
    describe_durations(&mut value);
    serde_json::to_string_pretty(&value).expect("a JSON value always serializes")
}

/// Beside every `X_ms` property of a duration that bodies may also write with its unit
/// (`api::durations::NAMES`), describes `X`: a string such as `"10m"` (API.md, "Durations").
fn describe_durations(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::Object(props)) = map.get_mut("properties") {
                for name in super::durations::NAMES {
                    let twin = format!("{name}_ms");
                    if props.contains_key(&twin) && !props.contains_key(*name) {
                        let text = format!(
                            "`{twin}` written with its unit (\"30s\", \"10m\", \"1h30m\"), in request bodies \
                             only; give one of the two. Answers give `{twin}`."
                        );
                        props.insert(
                            name.to_string(),
                            serde_json::json!({"type": ["string", "null"], "description": text}),
                        );
                    }
                }
            }
            for (_, inner) in map.iter_mut() {
                describe_durations(inner);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(describe_durations),
        _ => {}
    }
}

/// The OpenAPI document of `routes` (every declared route: `api::routes()`).
pub fn spec(routes: &[Route]) -> OpenApi {
    let mut spec = Spec::default();
    for route in routes {
        operation(&mut spec, route);
    }
    // Query parameters refer to these by name (their `IntoParams` derives do not register them).
    spec.schema::<StatusFilter>();
    spec.schema::<NodePhase>();
    spec.finish()
}

/// Adds `route`'s operation, with the error answers every route can give: its own errors plus
/// 401/403 unless it is public, 413/415 when it takes a body or changes state, 500 and 503.
fn operation(spec: &mut Spec, route: &Route) {
    let Route {
        method,
        pattern: path,
        need,
        ..
    } = *route;
    let roles: Vec<&str> = Role::ALL
        .iter()
        .filter(|r| r.grants(need))
        .map(|r| r.name())
        .collect();
    let permission = serde_json::to_value(need).unwrap_or_default();
    let mut op = OperationBuilder::new()
        .operation_id(Some(format!("{method} {path}")))
        .summary(Some(route.summary))
        .description(Some(format!("Needs: {}.", route.action)))
        .tag(
            path.split('/')
                .nth(if path.starts_with("/v1/") { 2 } else { 1 })
                .unwrap_or("")
                .to_string(),
        )
        .extensions(Some(
            ExtensionsBuilder::new()
                .add("x-permission", permission)
                .add("x-roles", serde_json::json!(roles))
                .build(),
        ));
    let mut params: Vec<_> = path
        .split('/')
        .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .map(|name| {
            let schema = if route.numbers.contains(&name) {
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
                    .minimum(Some(0))
            } else {
                ObjectBuilder::new().schema_type(Type::String)
            };
            ParameterBuilder::new()
                .name(name)
                .parameter_in(ParameterIn::Path)
                .required(Required::True)
                .schema(Some(schema))
                .build()
        })
        .collect();
    params.extend(route.query.map(|query| query()).unwrap_or_default());
    op = op.parameters(Some(params));
    if let Some(body) = route.body {
        op = op.request_body(Some(
            RequestBodyBuilder::new()
                .content(
                    "application/json",
                    ContentBuilder::new().schema(Some(body(spec))).build(),
                )
                .required(Some(Required::True))
                .build(),
        ));
    }
    for answer in &route.answers {
        let mut r = ResponseBuilder::new().description(answer.what);
        let string = || -> RefOr<Schema> { ObjectBuilder::new().schema_type(Type::String).into() };
        let content: Option<(&str, ContentBuilder)> = match answer.content {
            Content::Json(schema) => Some((
                "application/json",
                ContentBuilder::new().schema(Some(schema(spec))),
            )),
            Content::AnyObject => Some((
                "application/json",
                ContentBuilder::new().schema(Some(ObjectBuilder::new().schema_type(Type::Object))),
            )),
            Content::Text(media) => {
                media.map(|m| (m, ContentBuilder::new().schema(Some(string()))))
            }
            Content::Events(events_of) => {
                let item = events::item_schema(&events_of(spec));
                Some((
                    SSE,
                    ContentBuilder::new()
                        .schema(Some(string()))
                        .extensions(Some(
                            ExtensionsBuilder::new().add("x-itemSchema", item).build(),
                        )),
                ))
            }
        };
        if let Some((media, content)) = content {
            r = r.content(media, content.build());
        }
        op = op.response(answer.status.to_string(), r.build());
    }
    for status in error_statuses(route) {
        op = op.response(status.to_string(), Ref::from_response_name("Error"));
    }
    let method = match method {
        "GET" => HttpMethod::Get,
        "POST" => HttpMethod::Post,
        "PUT" => HttpMethod::Put,
        "PATCH" => HttpMethod::Patch,
        "DELETE" => HttpMethod::Delete,
        other => panic!("no HTTP method {other}"),
    };
    spec.add_path(path, PathItem::new(method, op.build()));
}

/// Every error status `route` can answer, in order: its own, 401/403 unless it is public, 413/415 when it
/// takes a body or changes state, 500 and 503.
pub fn error_statuses(route: &Route) -> Vec<u16> {
    let mut all: Vec<u16> = route.errors.to_vec();
    if route.need != Permission::Public {
        all.extend([401, 403]);
    }
    if route.body.is_some() || route.method != "GET" {
        all.extend([413, 415]);
    }
    all.extend([500, 503]);
    all.sort_unstable();
    all.dedup();
    all
}

#[cfg(test)]
#[path = "openapi_test.rs"]
mod tests;
