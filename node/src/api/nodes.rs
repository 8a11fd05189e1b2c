//! Node reports (agents' heartbeat and progress, answered with targets) and node views.
//! ReportGateway are routed by [`ReportGateway`] (`reports.rs`, also the batch endpoint).

use std::collections::BTreeMap;

use actix_web::http::header::AUTHORIZATION;
use actix_web::{web, HttpRequest, HttpResponse};
use convoy_actors::domain::Permission::{Read, Report};
use convoy_actors::domain::{node_consumers, NodeReport, ResourceReport};
use serde::{Deserialize, Serialize};

use super::auth::Caller;
use super::error::ApiError;
use super::openapi::answers::{NodeAnswer, NodeListAnswer, TargetsAnswer};
use super::read::{found, Consistency};
use super::reports::{admit, check_node_id, report_batch, BatchAnswer, BatchBody, ReportGateway};
use super::route::Route;
use crate::replica::Replica;

/// This module's routes.
pub fn routes() -> Vec<Route> {
    vec![
        Route::post("/v1/nodes/reports", Report, "report for nodes")
            .summary("Many nodes' reports in one request")
            .to(report_batch)
            .body::<BatchBody>()
            .json::<BatchAnswer>(200, "Each node's targets; the reports not taken, with why.")
            .errors(&[400, 429]),
        Route::post("/v1/nodes/{id}/report", Report, "report for nodes")
            .summary("A node's report; answers its targets")
            .to(report)
            .body::<ReportBody>()
            .json::<TargetsAnswer>(200, "What the node should do per resource.")
            .errors(&[400, 429]),
        Route::get("/v1/nodes", Read, "read nodes")
            .summary("A page of nodes")
            .to(list)
            .query::<ListQuery>()
            .json::<NodeListAnswer>(200, "Versions, phases and last report age per node.")
            .errors(&[400]),
        Route::get("/v1/nodes/{id}", Read, "read nodes")
            .summary("Show a node")
            .to(show)
            .query::<Consistency>()
            .json::<NodeAnswer>(200, "The node.")
            .errors(&[400, 404]),
    ]
}

/// The most nodes one `GET /v1/nodes` answers.
pub const MAX_NODE_PAGE: usize = 5_000;

/// `GET /v1/nodes` query.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListQuery {
    #[serde(default)]
    consumer: Option<String>,
    #[serde(default)]
    offset: usize,
    #[serde(default)]
    limit: Option<usize>,
}

/// Fills `last_report_ms` of each node object in `nodes` from the leader's liveness table; on a
/// follower, answers with the leader's own answer instead (`Some(bytes)`), or leaves `null`s when
/// the leader cannot be asked.
async fn with_report_ages(
    replica: &Replica,
    reports: &ReportGateway,
    req: &HttpRequest,
    nodes: &mut [serde_json::Value],
) -> Option<web::Bytes> {
    let ids: Vec<String> = nodes
        .iter()
        .map(|n| n["id"].as_str().unwrap_or_default().to_string())
        .collect();
    match reports.last_reports(ids).await {
        Some(ages) => {
            for (node, age) in nodes.iter_mut().zip(ages) {
                node["last_report_ms"] = age.map_or(serde_json::Value::Null, Into::into);
            }
            None
        }
        None => {
            let path = req
                .uri()
                .path_and_query()
                .map_or(req.path(), |p| p.as_str());
            let auth = req.headers().get(AUTHORIZATION);
            if let Some(bytes) = reports.leader_get(replica, path, auth).await {
                return Some(bytes);
            }
            for node in nodes.iter_mut() {
                node["last_report_ms"] = serde_json::Value::Null;
            }
            None
        }
    }
}

/// `GET /v1/nodes?consumer=&offset=&limit=`: a page of nodes with their versions, phases and last
/// report age (known by the leader: a follower answers with the leader's page).
async fn list(
    replica: web::Data<Replica>,
    reports: web::Data<ReportGateway>,
    req: HttpRequest,
    q: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let q = q.into_inner();
    let limit = q.limit.unwrap_or(1_000);
    if limit == 0 || limit > MAX_NODE_PAGE {
        return Err(ApiError::BadRequest(format!(
            "limit {limit}: between 1 and {MAX_NODE_PAGE}"
        )));
    }
    let page = replica
        .read(false, move |s| {
            s.node_page(q.consumer.as_deref(), q.offset, limit)
        })
        .await?;
    let mut value = serde_json::to_value(&page).unwrap_or_default();
    let mut nodes = value["nodes"].as_array().cloned().unwrap_or_default();
    if let Some(bytes) = with_report_ages(&replica, &reports, &req, &mut nodes).await {
        return Ok(HttpResponse::Ok()
            .content_type("application/json")
            .body(bytes));
    }
    value["nodes"] = nodes.into();
    Ok(HttpResponse::Ok().json(value))
}

/// `POST /v1/nodes/{id}/report` body.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportBody {
    #[serde(default)]
    active: Option<bool>,
    #[serde(default)]
    resources: BTreeMap<String, ResourceReport>,
}

async fn report(
    replica: web::Data<Replica>,
    reports: web::Data<ReportGateway>,
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    body: web::Json<ReportBody>,
) -> Result<HttpResponse, ApiError> {
    let node = id.into_inner();
    check_node_id(&node)?;
    caller.check_report(&node)?;
    let key = node.clone();
    let consumers = replica.node().read(|m| node_consumers(m.state(), &key));
    caller.check_report_scope(&node, &consumers)?;
    let body = body.into_inner();
    let report = admit(
        &replica,
        NodeReport {
            node: node.clone(),
            active: body.active,
            resources: body.resources,
            by: caller.actor(),
        },
    )?;
    // What is forwarded from a follower is the report as admitted (its errors cut).
    let body = ReportBody {
        active: report.active,
        resources: report.resources.clone(),
    };
    reports
        .ingest(&replica, report, &body, req.headers().get(AUTHORIZATION))
        .await?;
    let targets = replica.node().read(|m| m.state().targets(&node));
    Ok(HttpResponse::Ok().json(TargetsAnswer { targets }))
}

async fn show(
    replica: web::Data<Replica>,
    reports: web::Data<ReportGateway>,
    req: HttpRequest,
    id: web::Path<String>,
    q: web::Query<Consistency>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let key = id.clone();
    let (view, line) = replica
        .read(q.consistent, move |s| (s.node(&key), s.node_line(&key)))
        .await?;
    let mut value = serde_json::to_value(found(view, "node", &id)?).unwrap_or_default();
    if let Some(line) = line {
        value["phases"] = serde_json::to_value(line.phases).unwrap_or_default();
    }
    let mut one = [value];
    if let Some(bytes) = with_report_ages(&replica, &reports, &req, &mut one).await {
        return Ok(HttpResponse::Ok()
            .content_type("application/json")
            .body(bytes));
    }
    let [value] = one;
    Ok(HttpResponse::Ok().json(value))
}
