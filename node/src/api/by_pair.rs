//! Verbs by job key: pause, resume, abort, roll back or pulse the active deployment of a consumer and a
//! resource, for a monitoring service that knows the pair and not the deployment's id. Each finds the
//! pair's active deployment and hands it to the id routes' handler (`deployments::steer`, `pulse_id`).

use actix_web::{web, HttpResponse};
use convoy_actors::domain::Permission::Pulse;
use convoy_actors::domain::{check_name, DeploymentId};

use super::auth::Caller;
use super::deployments::{pulse_id, steer, stop};
use super::error::ApiError;
use super::openapi::answers::PulseReply;
use super::route::Route;
use super::verbs::{self, Abort, Pause, Resume, Rollback, Verb};
use crate::replica::Replica;

/// This module's routes.
pub fn routes() -> Vec<Route> {
    vec![
        Route::post(
            "/v1/consumers/{consumer}/resources/{resource}/pulse",
            Pulse,
            "pulse deployments",
        )
        .summary("Pulse the active deployment of a consumer and a resource")
        .to(pulse)
        .json::<PulseReply>(
            200,
            "OK to keep pulsing, STOP to stop (also when none is active).",
        )
        .errors(&[400, 409]),
        verbs::route::<Pause, _, _>(
            "/v1/consumers/{consumer}/resources/{resource}/pause",
            act::<Pause>,
        ),
        verbs::route::<Resume, _, _>(
            "/v1/consumers/{consumer}/resources/{resource}/resume",
            act::<Resume>,
        ),
        verbs::route::<Abort, _, _>(
            "/v1/consumers/{consumer}/resources/{resource}/abort",
            act::<Abort>,
        ),
        verbs::route::<Rollback, _, _>(
            "/v1/consumers/{consumer}/resources/{resource}/rollback",
            act::<Rollback>,
        ),
    ]
}

/// The active deployment of `resource` on `consumer`, read after a read barrier through the leader (a
/// follower sees the deployment a write through another server just started); 400 for a name the
/// creation rules refuse, `None` when the pair has no active deployment.
async fn active(
    replica: &Replica,
    consumer: &str,
    resource: &str,
) -> Result<Option<DeploymentId>, ApiError> {
    check_name("consumer", consumer)?;
    check_name("resource", resource)?;
    let (c, r) = (consumer.to_string(), resource.to_string());
    Ok(replica
        .read(true, move |s| s.active_deployment_of(&c, &r))
        .await?)
}

/// The 404 of a pair without an active deployment, naming it (both names passed `check_name`: short).
fn none_active(consumer: &str, resource: &str) -> ApiError {
    ApiError::NotFound(format!(
        "consumer {consumer:?} has no active deployment of resource {resource:?}"
    ))
}

async fn act<V: Verb>(
    replica: web::Data<Replica>,
    caller: Caller,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let (consumer, resource) = path.into_inner();
    let id = active(&replica, &consumer, &resource)
        .await?
        .ok_or_else(|| none_active(&consumer, &resource))?;
    steer(&replica, caller, id, V::NAME, &body).await
}

async fn pulse(
    replica: web::Data<Replica>,
    caller: Caller,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (consumer, resource) = path.into_inner();
    // No active deployment answers STOP, as a pulse on an unknown id does.
    match active(&replica, &consumer, &resource).await? {
        Some(id) => pulse_id(&replica, caller, id).await,
        None => Ok(stop()),
    }
}

#[cfg(test)]
#[path = "by_pair_test.rs"]
mod tests;
