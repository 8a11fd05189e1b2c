//! `GET /v1/deployments/{id}/nodes/{node}`: every decision the replicated events record about one node
//! of a deployment, with its reason, served by any server from its applied state.

use actix_web::{web, HttpResponse};
use convoy_actors::domain::NodeHistory;
use convoy_actors::domain::Permission::Read;

use super::deployments::parse_id;
use super::error::ApiError;
use super::read::{found, Consistency};
use super::route::Route;
use crate::replica::Replica;

/// This module's route.
pub fn routes() -> Vec<Route> {
    vec![Route::get(
        "/v1/deployments/{id}/nodes/{node}",
        Read,
        "read deployments",
    )
    .summary("Why: every decision about one node")
    .to(history)
    .query::<Consistency>()
    .json::<NodeHistory>(200, "The node's decisions with their reasons.")
    .errors(&[400, 404])]
}

async fn history(
    replica: web::Data<Replica>,
    path: web::Path<(String, String)>,
    q: web::Query<Consistency>,
) -> Result<HttpResponse, ApiError> {
    let (raw, node) = path.into_inner();
    let id = parse_id(&raw)?;
    let key = node.clone();
    let view = replica
        .read(q.consistent, move |s| {
            s.deployment_fingerprint(id)
                .map(|_| s.node_history(id, &key))
        })
        .await?;
    let history = found(view, "deployment", &raw)?;
    Ok(HttpResponse::Ok().json(found(history, &format!("node of deployment {raw}"), &node)?))
}
