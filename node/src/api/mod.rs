//! The HTTP API of API.md on actix-web.

pub mod auth;
pub mod cluster;
pub mod consumers;
pub mod cors;
pub mod debug;
pub mod deployment_feed;
pub mod deployments;
pub mod error;
pub mod groups;
pub mod metrics;
pub mod nodes;
pub mod openapi;
pub mod read;
pub mod reports;
pub mod resources;
pub mod tokens;
pub mod ui;
pub mod watch;
pub mod whoami;
pub mod why;

use actix_web::web;

/// Registers every route (the fault-injection endpoint only when `faults`) and the JSON error handlers.
pub fn configure(cfg: &mut web::ServiceConfig, faults: bool) {
    if faults {
        cfg.configure(debug::routes);
    }
    cfg.configure(metrics::routes);
    cfg.app_data(
        web::JsonConfig::default()
            .limit(4 * 1024 * 1024)
            .error_handler(error::json_error),
    )
    .app_data(web::QueryConfig::default().error_handler(error::query_error))
    .app_data(web::PathConfig::default().error_handler(error::path_error))
    .configure(cluster::routes)
    .configure(resources::routes)
    .configure(consumers::routes)
    .configure(nodes::routes)
    .configure(deployments::routes)
    .configure(deployment_feed::routes)
    .configure(why::routes)
    .configure(groups::routes)
    .configure(tokens::routes)
    .configure(ui::routes)
    .configure(whoami::routes)
    .configure(watch::routes)
    .configure(openapi::routes)
    .default_service(web::to(no_route));
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
#[path = "fuzz_test.rs"]
mod fuzz_test;
