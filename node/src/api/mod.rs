//! The HTTP API of API.md on actix-web: each resource's file declares its routes ([`route::Route`]), this
//! module collects them ([`routes`]), and the router ([`configure`]) registers them and hands them, as app
//! data ([`route::Routes`]), to the permission table (`auth::table`), the metrics, `whoami` and
//! `/openapi.json`, none of which imports this module back.

pub mod auth;
pub mod budgets;
pub mod by_pair;
pub mod cluster;
pub mod consumers;
pub mod cors;
pub mod debug;
pub mod deployment_feed;
pub mod deployments;
pub mod durations;
pub mod error;
pub mod groups;
pub mod host;
pub mod limits;
pub mod metrics;
pub mod nodes;
pub mod openapi;
pub mod page;
pub mod read;
pub mod report_rate;
pub mod reports;
pub mod resources;
pub mod route;
pub mod stream_slots;
pub mod tokens;
pub mod ui;
pub mod verbs;
pub mod watch;
pub mod whoami;
pub mod why;
pub mod windows;

use std::sync::LazyLock;

use actix_web::web;

use route::Route;

/// Each resource's declarations, in the order the first match decides (a literal segment before a `{param}` one that would take it)
/// and `GET /v1/whoami` lists them.
const RESOURCES: &[fn() -> Vec<Route>] = &[
    cluster::routes,
    limits::routes,
    ui::routes,
    openapi::routes,
    whoami::routes,
    watch::routes,
    metrics::routes,
    tokens::routes,
    debug::routes,
    resources::routes,
    consumers::routes,
    budgets::routes,
    windows::routes,
    nodes::routes,
    deployments::routes,
    by_pair::routes,
    deployment_feed::routes,
    why::routes,
    groups::routes,
];

/// Every route the API serves (the fault-injection endpoint whether or not this server has it on).
pub fn routes() -> &'static [Route] {
    static ALL: LazyLock<Vec<Route>> =
        LazyLock::new(|| RESOURCES.iter().flat_map(|routes| routes()).collect());
    &ALL
}

/// Registers every route (the fault-injection endpoint only when `faults`), the JSON error handlers and
/// the route table as app data.
pub fn configure(cfg: &mut web::ServiceConfig, faults: bool) {
    cfg.app_data(
        web::JsonConfig::default()
            .limit(report_rate::BODY_LIMIT as usize)
            .error_handler(error::json_error),
    )
    .app_data(web::QueryConfig::default().error_handler(error::query_error))
    .app_data(web::PathConfig::default().error_handler(error::path_error))
    // The table, the metrics, whoami and the OpenAPI document read the routes from here.
    .app_data(web::Data::new(route::Routes(routes())));
    for route in routes() {
        if faults || route.pattern != debug::FAULTS {
            route.register(cfg);
        }
    }
    cfg.default_service(web::to(no_route));
}

/// Any route the API does not serve: 404 in the API's error shape.
async fn no_route(req: actix_web::HttpRequest) -> Result<actix_web::HttpResponse, error::ApiError> {
    let path: String = req.path().chars().take(100).collect();
    Err(error::ApiError::NotFound(format!(
        "no route {} {path}",
        req.method()
    )))
}

#[cfg(test)]
mod test_server;

#[cfg(test)]
#[path = "fuzz_test.rs"]
mod fuzz_test;

#[cfg(test)]
#[path = "requests_test.rs"]
mod requests_test;
