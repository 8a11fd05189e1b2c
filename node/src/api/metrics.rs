//! `GET /metrics`: this server's Prometheus metrics (see [`crate::metrics`]).

use actix_web::{web, HttpResponse};
use convoy_actors::domain::Permission::Read;

use super::route::Route;
use crate::engine::Engine;

/// This module's route.
pub fn routes() -> Vec<Route> {
    vec![Route::get("/metrics", Read, "read metrics")
        .summary("Prometheus metrics")
        .to(metrics)
        .text(
            200,
            "Prometheus text format.",
            Some("text/plain; version=0.0.4"),
        )]
}

async fn metrics(engine: web::Data<Engine>) -> HttpResponse {
    let text = crate::metrics::scrape::render(&engine, crate::leader::wall_ms());
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(text)
}
