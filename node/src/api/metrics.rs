//! `GET /metrics`: this server's Prometheus metrics (see [`crate::metrics`]).

use actix_web::{web, HttpResponse};
use convoy_actors::domain::Permission::Read;

use super::route::Route;
use crate::replica::Replica;

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

async fn metrics(replica: web::Data<Replica>) -> HttpResponse {
    let text = crate::metrics::scrape::render(
        &replica,
        convoy_time::Clock::wall_ms(&convoy_time::SystemClock),
    );
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(text)
}
