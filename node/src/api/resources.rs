//! Resources and versions: create, publish, list, show, retract and unretract.

use std::collections::BTreeMap;

use actix_web::{web, HttpResponse};
use convoy_actors::domain::Permission::{Operate, ReadResources};
use convoy_actors::domain::{Artifact, Command, Dependency, ResourceView, Response};
use serde::Deserialize;

use super::auth::Caller;
use super::error::ApiError;
use super::openapi::answers::VersionPublished;
use super::read::{found, Consistency};
use super::route::Route;
use crate::replica::Replica;

/// This module's routes.
pub fn routes() -> Vec<Route> {
    vec![
        Route::post("/v1/resources", Operate, "create resources")
            .summary("Create a resource")
            .to(create)
            .body::<CreateResource>()
            .json::<ResourceView>(201, "The resource.")
            .errors(&[400, 409]),
        Route::get("/v1/resources", ReadResources, "read resources")
            .summary("List resources")
            .to(list)
            .query::<Consistency>()
            .list::<ResourceView>(200, "Every resource.")
            .errors(&[400]),
        Route::get("/v1/resources/{name}", ReadResources, "read resources")
            .summary("Show a resource")
            .to(show)
            .query::<Consistency>()
            .json::<ResourceView>(200, "The resource and its versions.")
            .errors(&[400, 404]),
        Route::post("/v1/resources/{name}/versions", Operate, "publish versions")
            .summary("Publish a version")
            .to(publish)
            .body::<PublishVersion>()
            .json::<VersionPublished>(201, "The new version.")
            .errors(&[400, 404, 409]),
        Route::post(
            "/v1/resources/{name}/versions/{version}/retract",
            Operate,
            "retract versions",
        )
        .summary("Retract a version")
        .to(retract)
        .body::<RetractBody>()
        .json::<ResourceView>(200, "The resource.")
        .errors(&[400, 404, 409]),
        Route::post(
            "/v1/resources/{name}/versions/{version}/unretract",
            Operate,
            "retract versions",
        )
        .summary("Unretract a version")
        .to(unretract)
        .json::<ResourceView>(200, "The resource.")
        .errors(&[400, 404, 409]),
    ]
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateResource {
    name: String,
}

async fn create(
    replica: web::Data<Replica>,
    body: web::Json<CreateResource>,
) -> Result<HttpResponse, ApiError> {
    let name = body.into_inner().name;
    replica
        .propose(Command::CreateResource { name: name.clone() })
        .await?;
    let view = replica.read_written(move |s| s.resource(&name)).await?;
    Ok(HttpResponse::Created().json(view))
}

async fn list(
    replica: web::Data<Replica>,
    q: web::Query<Consistency>,
) -> Result<HttpResponse, ApiError> {
    let views = replica.read(q.consistent, |s| s.resources()).await?;
    Ok(HttpResponse::Ok().json(views))
}

async fn show(
    replica: web::Data<Replica>,
    name: web::Path<String>,
    q: web::Query<Consistency>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    let key = name.clone();
    let view = replica
        .read(q.consistent, move |s| s.resource(&key))
        .await?;
    Ok(HttpResponse::Ok().json(found(view, "resource", &name)?))
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PublishVersion {
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    artifact: Option<Artifact>,
    #[serde(default)]
    metadata: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    depends_on: Vec<Dependency>,
    #[serde(default)]
    health_port: Option<u16>,
    /// Publish an artifact without a sha256: the agent installs whatever the URL serves.
    #[serde(default)]
    unchecked: bool,
}

async fn publish(
    replica: web::Data<Replica>,
    name: web::Path<String>,
    body: web::Json<PublishVersion>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    if let Some(a) = &body.artifact {
        if a.sha256.is_none() && !body.unchecked {
            return Err(ApiError::BadRequest(
                "artifact.sha256 is required (64 hex digits) unless the version says \"unchecked\": true"
                    .into(),
            ));
        }
    }
    // Metadata is free-form JSON; the replicated state keeps each value as its JSON text.
    let metadata = body
        .metadata
        .into_iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => (k, s),
            other => (k, other.to_string()),
        })
        .collect();
    let response = replica
        .propose(Command::PublishVersion {
            resource: name.into_inner(),
            label: body.label,
            artifact: body.artifact,
            metadata,
            depends_on: body.depends_on,
            health_port: body.health_port,
        })
        .await?;
    match response {
        Response::VersionPublished { resource, version } => {
            Ok(HttpResponse::Created().json(VersionPublished { resource, version }))
        }
        other => Err(ApiError::Internal(format!(
            "unexpected answer to publish: {other:?}"
        ))),
    }
}

/// The optional body of retract: none at all, or `{"message"?}` exactly.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RetractBody {
    #[serde(default)]
    message: Option<String>,
}

/// The body of unretract, if any: `{}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NoFields {}

fn parse_version(raw: &str, resource: &str) -> Result<u64, ApiError> {
    raw.parse().map_err(|_| {
        ApiError::NotFound(format!(
            "resource {resource:?} has no version {:?}",
            convoy_actors::domain::clip(raw)
        ))
    })
}

async fn retract(
    replica: web::Data<Replica>,
    caller: Caller,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let (name, raw) = path.into_inner();
    let version = parse_version(&raw, &name)?;
    let message = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        serde_json::from_slice::<RetractBody>(&body)
            .map_err(|e| ApiError::BadRequest(format!("retract body: {e}")))?
            .message
    };
    replica
        .propose(Command::RetractVersion {
            resource: name.clone(),
            version,
            message,
            by: caller.actor(),
        })
        .await?;
    let view = replica.read_written(move |s| s.resource(&name)).await?;
    Ok(HttpResponse::Ok().json(view))
}

async fn unretract(
    replica: web::Data<Replica>,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let (name, raw) = path.into_inner();
    let version = parse_version(&raw, &name)?;
    if !body.iter().all(u8::is_ascii_whitespace) {
        serde_json::from_slice::<NoFields>(&body)
            .map_err(|e| ApiError::BadRequest(format!("unretract body: {e}")))?;
    }
    replica
        .propose(Command::UnretractVersion {
            resource: name.clone(),
            version,
        })
        .await?;
    let view = replica.read_written(move |s| s.resource(&name)).await?;
    Ok(HttpResponse::Ok().json(view))
}
