//! `GET /metrics`: this server's Prometheus metrics (see [`crate::metrics`]).

use actix_web::{web, HttpResponse};

use crate::replica::Replica;

/// Registers this module's route.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/metrics", web::get().to(metrics));
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
