//! Consumer groups and group deployments.

use std::collections::BTreeMap;

use actix_web::{web, HttpRequest, HttpResponse};
use convoy_actors::domain::Permission::{Operate, Read};
use convoy_actors::domain::{
    Command, GroupDeploymentId, GroupDeploymentView, GroupView, Member, Policy, Response,
};
use serde::Deserialize;

use super::auth::Caller;
use super::deployments::DryRun;
use super::durations::Durations;
use super::error::ApiError;
use super::openapi::answers::{GroupDeploymentStarted, GroupPlan};
use super::page::{answer, ListQuery};
use super::read::{found, Consistency};
use super::route::Route;
use crate::replica::Replica;

/// This module's routes.
pub fn routes() -> Vec<Route> {
    vec![
        Route::post("/v1/groups", Operate, "create groups")
            .summary("Create a group")
            .to(create)
            .body::<CreateGroup>()
            .json::<GroupView>(201, "The group.")
            .errors(&[400, 404, 409]),
        Route::get("/v1/groups", Read, "read groups")
            .summary("List groups")
            .to(list)
            .query::<ListQuery>()
            .list::<GroupView>(200, "Every group (a page object with `offset` or `limit`).")
            .errors(&[400]),
        Route::get("/v1/groups/{name}", Read, "read groups")
            .summary("Show a group")
            .to(show)
            .query::<Consistency>()
            .json::<GroupView>(200, "The group.")
            .errors(&[400, 404]),
        Route::delete("/v1/groups/{name}", Operate, "delete groups")
            .summary("Delete a group")
            .to(delete)
            .json::<GroupView>(200, "The group as it was.")
            .errors(&[404, 409]),
        Route::post("/v1/group-deployments", Operate, "start group deployments")
            .summary("Start a group deployment (or plan it with dry_run)")
            .to(start)
            .query::<DryRun>()
            .body::<StartGroup>()
            .json::<GroupDeploymentStarted>(201, "Started.")
            .json::<GroupPlan>(200, "`?dry_run=true`: the plan; nothing changed.")
            .errors(&[400, 404, 409]),
        Route::get("/v1/group-deployments", Read, "read group deployments")
            .summary("List group deployments")
            .to(list_deployments)
            .query::<ListQuery>()
            .list::<GroupDeploymentView>(
                200,
                "Every group deployment (a page object with `offset` or `limit`).",
            )
            .errors(&[400]),
        Route::get("/v1/group-deployments/{id}", Read, "read group deployments")
            .summary("Show a group deployment")
            .to(show_deployment)
            .query::<Consistency>()
            .json::<GroupDeploymentView>(200, "The group deployment.")
            .errors(&[400, 404]),
        Route::post(
            "/v1/group-deployments/{id}/abort",
            Operate,
            "abort group deployments",
        )
        .summary("Abort a group deployment")
        .to(abort)
        .json::<GroupDeploymentView>(200, "The group deployment.")
        .errors(&[404, 409]),
    ]
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
    req: HttpRequest,
    q: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let w = q.window()?;
    let page = replica
        .read_snapshot(q.consistent, move |s| s.groups_page(w.offset, w.limit))
        .await?;
    answer(&req, "groups", page, w)
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
    body: Durations<StartGroup>,
) -> Result<HttpResponse, ApiError> {
    let StartGroup {
        group,
        versions,
        overrides,
    } = body.into_inner();
    if let Some((r, _)) = overrides.iter().find(|(_, p)| p.brake.is_some()) {
        let r: String = r.chars().take(100).collect();
        return Err(ApiError::BadRequest(format!(
            "overrides.{r}.brake is refused: a brake is a weak subscription's setting, not a deployment's"
        )));
    }
    if q.dry_run {
        let command = Command::StartGroupDeployment {
            group: group.clone(),
            versions,
            overrides,
        };
        replica.check_providers(&command).map_err(ApiError::from)?;
        // On a copy of the state, away from it (issue 37 §2): a plan of many steps holds nothing.
        let steps = replica
            .read_snapshot(false, move |s| {
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
    req: HttpRequest,
    q: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let w = q.window()?;
    let page = replica
        .read_snapshot(q.consistent, move |s| {
            s.group_deployments_page(w.offset, w.limit)
        })
        .await?;
    answer(&req, "group_deployments", page, w)
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
