//! Deployments: start, list, show, pause (hard or not), resume, confirm, abort, rollback and pulse (by id;
//! by job key in `by_pair`, through the same handlers).

use actix_web::{web, HttpRequest, HttpResponse};
use convoy_actors::domain::summary::{DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT};
use convoy_actors::domain::Permission::{Operate, Pulse, Read};
use convoy_actors::domain::PulseAnswer;
use convoy_actors::domain::{
    clip, Actor, Command, Completion, DeploymentFilter, DeploymentId, DeploymentPlan,
    DeploymentSpec, DeploymentSummary, DeploymentView, FailedNodes, NodePage, NodePhase, Pacing,
    Response, StatusFilter, Strategy,
};
use serde::Deserialize;

use super::auth::Caller;
use super::durations::Durations;
use super::error::ApiError;
use super::openapi::answers::{DeploymentStarted, PulseReply};
use super::read::found;
use super::route::Route;
use super::verbs::{self, action_body, Abort, ActionBody, Pause, Resume, Rollback, Verb};
use crate::replica::Replica;

/// This module's routes.
pub fn routes() -> Vec<Route> {
    vec![
        Route::post("/v1/deployments", Operate, "start deployments")
            .summary("Start a deployment (or plan it with dry_run)")
            .to(start)
            .query::<DryRun>()
            .body::<StartBody>()
            .json::<DeploymentStarted>(201, "Started.")
            .json::<DeploymentPlan>(200, "`?dry_run=true`: the plan; nothing changed.")
            .errors(&[400, 404, 409]),
        Route::get("/v1/deployments", Read, "read deployments")
            .summary("List deployments")
            .to(list)
            .query::<ListQuery>()
            .list::<DeploymentSummary>(200, "One summary line per deployment (a page object with `offset` or `limit`).")
            .errors(&[400]),
        Route::get("/v1/deployments/{id}", Read, "read deployments")
            .summary("Show a deployment (optionally a page of its nodes)")
            .to(show)
            .query::<ShowQuery>()
            .json::<DeploymentView>(
                200,
                "The deployment; with a page asked, `nodes` is that page and `page` says where it is.",
            )
            .errors(&[400, 404]),
        Route::post("/v1/deployments/{id}/pulse", Pulse, "pulse deployments")
            .summary("Pulse a deployment")
            .to(pulse)
            .json::<PulseReply>(200, "OK to keep pulsing, STOP to stop.")
            .errors(&[409]),
        Route::post("/v1/deployments/{id}/confirm", Pulse, "confirm deployments")
            .summary("Let a deployment waiting at a confirmation gate go on")
            .to(confirm)
            .body::<ActionBody>()
            .json::<DeploymentView>(200, "The deployment.")
            .errors(&[400, 404, 409]),
        verbs::route::<Pause, _, _>("/v1/deployments/{id}/pause", act::<Pause>),
        verbs::route::<Resume, _, _>("/v1/deployments/{id}/resume", act::<Resume>),
        verbs::route::<Abort, _, _>("/v1/deployments/{id}/abort", act::<Abort>),
        verbs::route::<Rollback, _, _>("/v1/deployments/{id}/rollback", act::<Rollback>),
    ]
}

/// `POST /v1/deployments` body, as in API.md.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartBody {
    consumer: String,
    resource: String,
    #[serde(default)]
    version: Option<u64>,
    #[serde(default)]
    strategy: Option<Strategy>,
    #[serde(default)]
    nodes: Option<String>,
    #[serde(default)]
    min_healthy_ms: Option<u64>,
    #[serde(default)]
    max_failures_per_node: Option<u32>,
    #[serde(default)]
    max_failed_nodes: Option<FailedNodes>,
    #[serde(default)]
    rollback_on_failure: Option<bool>,
    #[serde(default)]
    pulse_interval_ms: Option<u64>,
    #[serde(default)]
    completion: Option<Completion>,
    /// Bake time, node and progress deadlines, confirmation gates.
    #[serde(default)]
    pacing: Option<Pacing>,
    #[serde(default)]
    message: Option<String>,
    /// Deploy a version held back on the consumer (DEPLOYMENTS.md §10); lifts the hold.
    #[serde(default)]
    force: bool,
    /// Metric analysis against a provider of the servers' config (DEPLOYMENTS.md "Analysis").
    #[serde(default)]
    analysis: Option<convoy_actors::domain::analysis::spec::Analysis>,
    /// Spread the first admissions: each node's first waits a deterministic offset below this duration
    /// (`"30s"`, at most one day; DEPLOYMENTS.md §16).
    #[serde(default)]
    #[schema(example = "30s")]
    start_jitter: Option<String>,
}

/// `start_jitter`'s text as ms, through convoy-time's parser (cut to 100 characters in the error).
pub(super) fn jitter_ms(text: Option<&str>) -> Result<Option<u64>, ApiError> {
    let Some(text) = text else {
        return Ok(None);
    };
    let d = convoy_time::parse_duration(text).map_err(|e| {
        let shown: String = text.chars().take(100).collect();
        ApiError::BadRequest(format!("start_jitter {shown:?}: {e}"))
    })?;
    Ok(Some(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)))
}

impl From<StartBody> for DeploymentSpec {
    fn from(b: StartBody) -> Self {
        DeploymentSpec {
            consumer: b.consumer,
            resource: b.resource,
            version: b.version,
            strategy: b.strategy,
            nodes: b.nodes,
            min_healthy_ms: b.min_healthy_ms,
            max_failures_per_node: b.max_failures_per_node,
            max_failed_nodes: b.max_failed_nodes,
            rollback_on_failure: b.rollback_on_failure,
            pulse_interval_ms: b.pulse_interval_ms,
            completion: b.completion,
            pacing: b.pacing,
            message: b.message,
            by: Actor::User,
            force: b.force,
            analysis: b.analysis,
            start_jitter_ms: None,
        }
    }
}

/// `POST /v1/deployments?dry_run=true` plans instead of starting.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct DryRun {
    /// Answer what would happen; change nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// With `dry_run`: the time each node (each wave) is assumed to take in the finish estimate (`90s`;
    /// default: the deployment's `min_healthy` plus a typical install of 60 s).
    #[serde(default)]
    pub per_node: Option<String>,
}

async fn start(
    replica: web::Data<Replica>,
    caller: Caller,
    q: web::Query<DryRun>,
    body: Durations<StartBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let start_jitter_ms = jitter_ms(body.start_jitter.as_deref())?;
    let mut spec = DeploymentSpec::from(body);
    spec.start_jitter_ms = start_jitter_ms;
    spec.by = caller.actor();
    if q.dry_run {
        let per_node = match q.per_node.as_deref() {
            None => None,
            Some(text) => {
                let d = convoy_time::parse_duration(text).map_err(|e| {
                    let shown: String = text.chars().take(100).collect();
                    ApiError::BadRequest(format!("per_node {shown:?}: {e}"))
                })?;
                Some(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            }
        };
        let command = Command::StartDeployment(spec);
        replica.check_providers(&command).map_err(ApiError::from)?;
        // On a copy of the state, away from it (issue 37 §2): planning every node and window holds nothing.
        let plan = replica
            .read_snapshot(false, move |s| {
                convoy_actors::domain::precheck(s, &command)?;
                let Command::StartDeployment(spec) = command else {
                    unreachable!("built above")
                };
                let mut plan = s.plan_deployment(&spec)?;
                let now = convoy_time::Clock::wall_ms(&convoy_time::SystemClock);
                let mut policies = s.plan_policies(&spec.consumer, &spec.resource, now);
                policies.finish = Some(s.plan_finish(&plan.planned(), now, per_node));
                plan.policies = Some(policies);
                Ok::<_, convoy_actors::domain::DomainError>(plan)
            })
            .await?
            .map_err(ApiError::from)?;
        return Ok(HttpResponse::Ok().json(plan));
    }
    match replica.propose(Command::StartDeployment(spec)).await? {
        Response::DeploymentStarted { id, status } => {
            Ok(HttpResponse::Created().json(DeploymentStarted { id, status }))
        }
        other => Err(ApiError::Internal(format!(
            "unexpected answer to start: {other:?}"
        ))),
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListQuery {
    #[serde(default)]
    consumer: Option<String>,
    #[serde(default)]
    resource: Option<String>,
    #[serde(default)]
    status: Option<StatusFilter>,
    #[serde(default)]
    consistent: bool,
    /// Deployments to skip (0 to 100,000,000); with it, or `limit`, the answer is a page object.
    #[serde(default)]
    #[param(value_type = Option<u64>)]
    offset: Option<String>,
    /// Deployments on the page (1 to 1,000; default 100).
    #[serde(default)]
    #[param(value_type = Option<u64>)]
    limit: Option<String>,
}

async fn list(
    replica: web::Data<Replica>,
    req: HttpRequest,
    q: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let q = q.into_inner();
    let w = super::page::window(q.offset.as_deref(), q.limit.as_deref())?;
    let filter = DeploymentFilter {
        consumer: q.consumer,
        resource: q.resource,
        status: q.status,
    };
    let page = replica
        .read_snapshot(q.consistent, move |s| {
            s.deployments_page(&filter, w.offset, w.limit)
        })
        .await?;
    super::page::answer(&req, "deployments", page, w)
}

pub(crate) fn parse_id(raw: &str) -> Result<DeploymentId, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::NotFound(format!("deployment {raw:?} does not exist")))
}

/// `GET /v1/deployments/{id}` query: consistency and, optionally, a page of the nodes.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShowQuery {
    #[serde(default)]
    consistent: bool,
    #[serde(default)]
    offset: Option<u32>,
    #[serde(default)]
    limit: Option<u32>,
    #[serde(default)]
    state: Option<NodePhase>,
}

impl ShowQuery {
    /// The page asked for, if any of `offset`, `limit`, `state` is given; a limit outside 1..=10,000 is 400.
    fn page(&self) -> Result<Option<NodePage>, ApiError> {
        if self.offset.is_none() && self.limit.is_none() && self.state.is_none() {
            return Ok(None);
        }
        let limit = self.limit.unwrap_or(DEFAULT_PAGE_LIMIT);
        if limit == 0 || limit > MAX_PAGE_LIMIT {
            return Err(ApiError::BadRequest(format!(
                "limit {limit} is out of bounds: give 1 to {MAX_PAGE_LIMIT} nodes per page"
            )));
        }
        Ok(Some(NodePage {
            offset: self.offset.unwrap_or(0),
            limit,
            state: self.state,
        }))
    }
}

async fn show(
    replica: web::Data<Replica>,
    id: web::Path<String>,
    q: web::Query<ShowQuery>,
) -> Result<HttpResponse, ApiError> {
    let raw = id.into_inner();
    let id = parse_id(&raw)?;
    let Some(page) = q.page()? else {
        let view = replica
            .read(q.consistent, move |s| s.deployment(id))
            .await?;
        return Ok(HttpResponse::Ok().json(found(view, "deployment", &raw)?));
    };
    let paged = replica
        .read(q.consistent, move |s| s.deployment_page(id, &page))
        .await?;
    let (view, info) = found(paged, "deployment", &raw)?;
    let mut body = serde_json::to_value(view)
        .map_err(|e| ApiError::Internal(format!("deployment view: {e}")))?;
    body["page"] =
        serde_json::to_value(info).map_err(|e| ApiError::Internal(format!("page info: {e}")))?;
    Ok(HttpResponse::Ok().json(body))
}

async fn act<V: Verb>(
    replica: web::Data<Replica>,
    caller: Caller,
    id: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let id = parse_id(&id.into_inner())?;
    steer(&replica, caller, id, V::NAME, &body).await
}

async fn confirm(
    replica: web::Data<Replica>,
    caller: Caller,
    id: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let id = parse_id(&id.into_inner())?;
    steer(&replica, caller, id, "confirm", &body).await
}

/// Pause (hard or not), resume, confirm, abort or roll back deployment `id` (`action`, with the optional
/// body's message); answers its view. The id routes and the routes by job key (`by_pair`) both end here.
pub(crate) async fn steer(
    replica: &Replica,
    caller: Caller,
    id: DeploymentId,
    action: &str,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let ActionBody { message, hard } = action_body(body)?;
    if hard && action != "pause" {
        return Err(ApiError::BadRequest(format!(
            "\"hard\" is for pause only, not {:?}",
            clip(action)
        )));
    }
    let by = caller.actor();
    let command = match action {
        "pause" if hard => Command::HardPause { id, message, by },
        "pause" => Command::Pause { id, message, by },
        "resume" => Command::Resume { id, message, by },
        "confirm" => Command::Confirm { id, message, by },
        "abort" => Command::Abort { id, message, by },
        "rollback" => Command::Rollback { id, message, by },
        other => {
            return Err(ApiError::NotFound(format!(
                "unknown deployment action {:?}: expected pause, resume, confirm, abort, rollback or pulse",
                clip(other)
            )))
        }
    };
    replica.propose(command).await?;
    let view = replica.read_written(move |s| s.deployment(id)).await?;
    Ok(HttpResponse::Ok().json(found(view, "deployment", &id.to_string())?))
}

async fn pulse(
    replica: web::Data<Replica>,
    caller: Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let raw = id.into_inner();
    // A pulse on an unknown deployment answers STOP, as the contract says, not 404.
    let Ok(id) = raw.parse::<DeploymentId>() else {
        return Ok(stop());
    };
    pulse_id(&replica, caller, id).await
}

/// The answer to a pulse for no deployment (an unknown id, a pair with none active): STOP, no state.
pub(crate) fn stop() -> HttpResponse {
    HttpResponse::Ok().json(PulseReply {
        status: PulseAnswer::Stop,
        state: None,
    })
}

/// Pulses deployment `id`. The id route and the route by job key (`by_pair`) both end here.
pub(crate) async fn pulse_id(
    replica: &Replica,
    caller: Caller,
    id: DeploymentId,
) -> Result<HttpResponse, ApiError> {
    // The pulser's token names who moved the deployment on; without auth, "pulse".
    let by = match caller {
        Caller::Anonymous => Actor::Pulse,
        token => token.actor(),
    };
    match replica.propose(Command::Pulse { id, by }).await? {
        Response::Pulse { answer, status } => Ok(HttpResponse::Ok().json(PulseReply {
            status: answer,
            state: status,
        })),
        other => Err(ApiError::Internal(format!(
            "unexpected answer to pulse: {other:?}"
        ))),
    }
}
