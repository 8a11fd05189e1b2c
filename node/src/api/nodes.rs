//! Node reports (agents' heartbeat and progress, answered with targets) and node views.

use std::collections::BTreeMap;
use std::time::Duration;

use actix::Addr;
use actix_web::{web, HttpResponse};
use convoy_actors::domain::{NodeReport, ResourceReport};
use convoy_actors::leader::messages::{Report, ReportRejected};
use convoy_actors::leader::Supervisor;
use serde::{Deserialize, Serialize};

use super::error::ApiError;
use super::read::{found, Consistency};
use crate::engine::Engine;

/// Registers this module's routes.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/nodes/{id}/report", web::post().to(report))
        .route("/v1/nodes/{id}", web::get().to(show));
}

/// Where reports go: the leader's supervisor here, or the leader's HTTP API from a follower.
pub struct Reports {
    supervisor: Addr<Supervisor>,
    http: reqwest::Client,
}

impl Reports {
    /// Routes reports to `supervisor` when this server leads.
    pub fn new(supervisor: Addr<Supervisor>) -> Self {
        Self {
            supervisor,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()
                .expect("reqwest client"),
        }
    }

    /// Hands a report to the leader's consumer actor; from a follower, forwards it to the leader.
    async fn ingest(
        &self,
        engine: &Engine,
        report: NodeReport,
        body: &ReportBody,
    ) -> Result<(), ApiError> {
        let answer = self
            .supervisor
            .send(Report(report.clone()))
            .await
            .map_err(|e| ApiError::Internal(format!("supervisor unavailable: {e}")))?;
        match answer {
            Ok(()) => Ok(()),
            Err(busy @ ReportRejected::Busy { .. }) => Err(ApiError::Unavailable(busy.to_string())),
            Err(ReportRejected::NotLeader) => {
                let Some((leader, member)) = engine.node().leader() else {
                    return Err(ApiError::Unavailable("no leader is known yet".into()));
                };
                if leader == engine.node().id() {
                    return Err(ApiError::Unavailable(
                        "leadership is changing; retry".into(),
                    ));
                }
                let url = format!(
                    "http://{}/v1/nodes/{}/report",
                    member.http_addr, report.node
                );
                let response = self.http.post(&url).json(body).send().await.map_err(|e| {
                    ApiError::Unavailable(format!(
                        "cannot forward report to leader {leader} at {url}: {e}"
                    ))
                })?;
                if response.status().is_success() {
                    Ok(())
                } else {
                    Err(ApiError::Unavailable(format!(
                        "leader {leader} refused the report: {}",
                        response.status()
                    )))
                }
            }
        }
    }
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
    id: web::Path<String>,
    body: web::Json<ReportBody>,
) -> Result<HttpResponse, ApiError> {
    let node = id.into_inner();
    let body = body.into_inner();
    let report = NodeReport {
        node: node.clone(),
        active: body.active,
        resources: body.resources.clone(),
    };
    reports.ingest(&engine, report, &body).await?;
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
