//! Resources and versions: create, publish, list, show, retract and unretract.

use std::collections::BTreeMap;

use actix_web::{web, HttpRequest, HttpResponse};
use convoy_actors::domain::Permission::{Operate, ReadResources};
use convoy_actors::domain::{
    Artifact, ClusterState, Command, Dependency, DomainError, Mode, ResourceShow, ResourceView,
    Response,
};
use serde::Deserialize;

use super::auth::Caller;
use super::deployments::DryRun;
use super::error::ApiError;
use super::openapi::answers::{Reach, Taker, VersionPublished, WaitingTaker};
use super::page::{answer, ListQuery, ShowQuery};
use super::read::found;
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
            .query::<ListQuery>()
            .list::<ResourceView>(200, "Every resource (a page object with `offset` or `limit`).")
            .errors(&[400]),
        Route::get("/v1/resources/{name}", ReadResources, "read resources")
            .summary("Show a resource")
            .to(show)
            .query::<ShowQuery>()
            .json::<ResourceShow>(
                200,
                "The resource and one page of its versions (`?offset=&limit=`), with where it sits (`page`).",
            )
            .errors(&[400, 404]),
        Route::post("/v1/resources/{name}/versions", Operate, "publish versions")
            .summary("Publish a version (or see who would take it with dry_run)")
            .to(publish)
            .query::<DryRun>()
            .body::<PublishVersion>()
            .json::<VersionPublished>(201, "The new version and the consumers that take it.")
            .json::<VersionPublished>(
                200,
                "`?dry_run=true`: the version it would be and the consumers that would take it; nothing published.",
            )
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
    req: HttpRequest,
    q: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let w = q.window()?;
    let page = replica
        .read_snapshot(q.consistent, move |s| s.resources_page(w.offset, w.limit))
        .await?;
    answer(&req, "resources", page, w)
}

/// One page of the resource's versions, built from a copy of the state (issue 37 §2).
async fn show(
    replica: web::Data<Replica>,
    name: web::Path<String>,
    q: web::Query<ShowQuery>,
) -> Result<HttpResponse, ApiError> {
    let w = q.window()?;
    let name = name.into_inner();
    let key = name.clone();
    let view = replica
        .read_snapshot(q.consistent, move |s| {
            s.resource_show(&key, w.offset, w.limit)
        })
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

/// Who takes version `version` of `resource` in `s`: every consumer subscribed to it whose selection
/// (`ClusterState::selected_version`, the domain's own rule) is that version; with `deployments`, the
/// deployment of it a strong one runs; a weak one a maintenance window holds is listed as waiting.
fn reach(s: &ClusterState, resource: &str, version: u64, deployments: bool) -> Reach {
    let mut reach = Reach::default();
    for name in s.consumer_names() {
        if s.selected_version(name, resource) != Some(version) {
            continue;
        }
        let Some(c) = s.consumer(name) else { continue };
        let Some(sub) = c.subscriptions.get(resource) else {
            continue;
        };
        let taker = Taker {
            consumer: c.name.clone(),
            nodes: c.nodes.len() as u64,
            // Its active deployment, when it is one of this version (another one makes it wait).
            deployment: sub
                .deployment
                .filter(|d| deployments && s.rollout_of(*d).is_some_and(|(_, _, v)| v == version)),
        };
        // A weak subscription a maintenance window holds waits for it (policy/weak.rs).
        if let Some(wait) = s
            .weak_gate()
            .wait(name, resource)
            .filter(|_| sub.mode == Mode::Weak)
        {
            if reach.waiting.len() < Reach::MAX_LISTED {
                reach.waiting.push(WaitingTaker {
                    consumer: taker.consumer,
                    nodes: taker.nodes,
                    windows: wait.windows.clone(),
                    next_change: wait.next_change,
                });
            } else {
                reach.unlisted += 1;
            }
            continue;
        }
        let list = match sub.mode {
            Mode::Weak => {
                reach.nodes_at_once += taker.nodes;
                &mut reach.at_once
            }
            Mode::Strong => &mut reach.by_deployment,
        };
        if list.len() < Reach::MAX_LISTED {
            list.push(taker);
        } else {
            reach.unlisted += 1;
        }
    }
    reach
}

async fn publish(
    replica: web::Data<Replica>,
    name: web::Path<String>,
    q: web::Query<DryRun>,
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
    let command = Command::PublishVersion {
        resource: name.into_inner(),
        label: body.label,
        artifact: body.artifact,
        metadata,
        depends_on: body.depends_on,
        health_port: body.health_port,
    };
    if q.dry_run {
        // The command applied to a copy of the state (copy-on-write: cheap), read as a publish would leave it,
        // away from the state (issue 37 §2).
        let at = convoy_time::Clock::wall_ms(&convoy_time::SystemClock);
        let answer = replica
            .read_snapshot(
                false,
                move |s| -> Result<Option<VersionPublished>, DomainError> {
                    convoy_actors::domain::precheck(s, &command)?;
                    let mut after = s.clone();
                    match after.apply(command, at)? {
                        Response::VersionPublished { resource, version } => {
                            Ok(Some(VersionPublished {
                                reach: reach(&after, &resource, version, false),
                                resource,
                                version,
                            }))
                        }
                        _ => Ok(None),
                    }
                },
            )
            .await?
            .map_err(ApiError::from)?
            .ok_or_else(|| ApiError::Internal("unexpected answer to a dry-run publish".into()))?;
        return Ok(HttpResponse::Ok().json(answer));
    }
    match replica.propose(command).await? {
        Response::VersionPublished { resource, version } => {
            let answer = replica
                .read_written(move |s| VersionPublished {
                    reach: reach(s, &resource, version, true),
                    resource,
                    version,
                })
                .await?;
            Ok(HttpResponse::Created().json(answer))
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
