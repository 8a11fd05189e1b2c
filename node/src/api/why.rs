//! `GET /v1/deployments/{id}/nodes/{node}`: every decision the replicated events record about one node
//! of a deployment, with its reason, served by any server from its applied state.

use actix_web::{web, HttpResponse};

use super::deployments::parse_id;
use super::error::ApiError;
use super::read::{found, Consistency};
use crate::replica::Replica;

/// Registers this module's routes.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/deployments/{id}/nodes/{node}", web::get().to(history));
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
