//! Consumer groups and group deployments.

use std::collections::BTreeMap;

use actix_web::{web, HttpResponse};
use convoy_actors::domain::{Command, GroupDeploymentId, Member, Policy, Response};
use serde::Deserialize;

use super::auth::Caller;
use super::error::ApiError;
use super::openapi::answers::{GroupDeploymentStarted, GroupPlan};
use super::read::{found, Consistency};
use crate::replica::Replica;

/// Registers this module's routes.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/groups", web::post().to(create))
        .route("/v1/groups", web::get().to(list))
        .route("/v1/groups/{name}", web::get().to(show))
        .route("/v1/groups/{name}", web::delete().to(delete))
        .route("/v1/group-deployments", web::post().to(start))
        .route("/v1/group-deployments", web::get().to(list_deployments))
        .route("/v1/group-deployments/{id}", web::get().to(show_deployment))
        .route("/v1/group-deployments/{id}/abort", web::post().to(abort));
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateGroup {
    name: String,
    members: Vec<Member>,
}

async fn create(
    replica: web::Data<Replica>,
    body: web::Json<CreateGroup>,
) -> Result<HttpResponse, ApiError> {
    let CreateGroup { name, members } = body.into_inner();
    replica
        .propose(Command::CreateGroup {
            name: name.clone(),
            members,
        })
        .await?;
    let view = replica.read_written(move |s| s.group(&name)).await?;
    Ok(HttpResponse::Created().json(view))
}

async fn list(
    replica: web::Data<Replica>,
    q: web::Query<Consistency>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(replica.read(q.consistent, |s| s.groups()).await?))
}

async fn show(
    replica: web::Data<Replica>,
    name: web::Path<String>,
    q: web::Query<Consistency>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    let key = name.clone();
    let view = replica.read(q.consistent, move |s| s.group(&key)).await?;
    Ok(HttpResponse::Ok().json(found(view, "group", &name)?))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StartGroup {
    group: String,
    #[serde(default)]
    versions: Option<BTreeMap<String, u64>>,
    /// Per member resource, deployment settings over the member subscription's policy.
    #[serde(default)]
    overrides: BTreeMap<String, Policy>,
}

async fn start(
    replica: web::Data<Replica>,
    q: web::Query<super::deployments::DryRun>,
    body: web::Json<StartGroup>,
) -> Result<HttpResponse, ApiError> {
    let StartGroup {
        group,
        versions,
        overrides,
    } = body.into_inner();
    if q.dry_run {
        let command = Command::StartGroupDeployment {
            group: group.clone(),
            versions,
            overrides,
        };
        let steps = replica
            .read(false, move |s| {
                convoy_actors::domain::precheck(s, &command)?;
                let Command::StartGroupDeployment {
                    versions,
                    overrides,
                    ..
                } = &command
                else {
                    unreachable!("built above")
                };
                s.plan_group_deployment(&group, versions.as_ref(), overrides)
            })
            .await?
            .map_err(ApiError::from)?;
        return Ok(HttpResponse::Ok().json(GroupPlan { steps }));
    }
    match replica
        .propose(Command::StartGroupDeployment {
            group,
            versions,
            overrides,
        })
        .await?
    {
        Response::GroupDeploymentStarted { id, steps } => {
            Ok(HttpResponse::Created().json(GroupDeploymentStarted { id, steps }))
        }
        other => Err(ApiError::Internal(format!(
            "unexpected answer to group deploy: {other:?}"
        ))),
    }
}

fn parse_id(raw: &str) -> Result<GroupDeploymentId, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::NotFound(format!("group deployment {raw:?} does not exist")))
}

async fn list_deployments(
    replica: web::Data<Replica>,
    q: web::Query<Consistency>,
) -> Result<HttpResponse, ApiError> {
    let views = replica
        .read(q.consistent, |s| s.group_deployments())
        .await?;
    Ok(HttpResponse::Ok().json(views))
}

async fn show_deployment(
    replica: web::Data<Replica>,
    id: web::Path<String>,
    q: web::Query<Consistency>,
) -> Result<HttpResponse, ApiError> {
    let raw = id.into_inner();
    let id = parse_id(&raw)?;
    let view = replica
        .read(q.consistent, move |s| s.group_deployment(id))
        .await?;
    Ok(HttpResponse::Ok().json(found(view, "group deployment", &raw)?))
}

async fn abort(
    replica: web::Data<Replica>,
    caller: Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let raw = id.into_inner();
    let id = parse_id(&raw)?;
    let by = caller.actor();
    replica
        .propose(Command::AbortGroupDeployment { id, by })
        .await?;
    let view = replica
        .read_written(move |s| s.group_deployment(id))
        .await?;
    Ok(HttpResponse::Ok().json(found(view, "group deployment", &raw)?))
}

/// Answers the group as it was just before it was deleted.
async fn delete(
    replica: web::Data<Replica>,
    name: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    let key = name.clone();
    let before = replica.read(true, move |s| s.group(&key)).await?;
    replica
        .propose(Command::DeleteGroup { name: name.clone() })
        .await?;
    Ok(HttpResponse::Ok().json(found(before, "group", &name)?))
}
