//! Node reports (agents' heartbeat and progress, answered with targets) and node views.
//! Reports are routed by [`Reports`] (`reports.rs`, also the batch endpoint).

use std::collections::BTreeMap;

use actix_web::http::header::AUTHORIZATION;
use actix_web::{web, HttpRequest, HttpResponse};
use convoy_actors::domain::{NodeReport, ResourceReport};
use serde::{Deserialize, Serialize};

use super::auth::Caller;
use super::error::ApiError;
use super::read::{found, Consistency};
use super::reports::{report_batch, Reports};
use crate::engine::Engine;

/// Registers this module's routes.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/nodes/reports", web::post().to(report_batch))
        .route("/v1/nodes/{id}/report", web::post().to(report))
        .route("/v1/nodes/{id}", web::get().to(show));
}

/// `POST /v1/nodes/{id}/report` body.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReportBody {
    #[serde(default)]
    active: Option<bool>,
    #[serde(default)]
    resources: BTreeMap<String, ResourceReport>,
}

async fn report(
    engine: web::Data<Engine>,
    reports: web::Data<Reports>,
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    body: web::Json<ReportBody>,
) -> Result<HttpResponse, ApiError> {
    let node = id.into_inner();
    caller.check_report(&node)?;
    let body = body.into_inner();
    let report = NodeReport {
        node: node.clone(),
        active: body.active,
        resources: body.resources.clone(),
    };
    reports
        .ingest(&engine, report, &body, req.headers().get(AUTHORIZATION))
        .await?;
    let targets = engine.node().read(|m| m.state().targets(&node));
    Ok(HttpResponse::Ok().json(serde_json::json!({ "targets": targets })))
}

async fn show(
    engine: web::Data<Engine>,
    id: web::Path<String>,
    q: web::Query<Consistency>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let key = id.clone();
    let view = engine.read(q.consistent, move |s| s.node(&key)).await?;
    Ok(HttpResponse::Ok().json(found(view, "node", &id)?))
}
