//! Consumers, their nodes, their subscriptions (PUT replaces, PATCH merges field by field, DELETE
//! unsubscribes) and the versions held back on them.

use actix_web::{web, HttpRequest, HttpResponse};
use convoy_actors::domain::Permission::{Operate, Read};
use convoy_actors::domain::{
    Brake, Change, ClusterState, Command, Completion, ConsumerShow, ConsumerView, FailedNodes,
    HoldView, Mode, Pacing, Page, Policy, PolicyPatch, Strategy, SubscriptionEntry,
};
use serde::{Deserialize, Deserializer, Serialize};

use super::auth::Caller;
use super::durations::Durations;
use super::error::ApiError;
use super::page::{answer, ListQuery, ShowQuery, Window};
use super::read::found;
use super::route::Route;
use crate::replica::Replica;

/// A consumer's subscription to one resource.
const SUBSCRIPTION: &str = "/v1/consumers/{name}/subscriptions/{resource}";

/// This module's routes.
pub fn routes() -> Vec<Route> {
    vec![
        Route::post("/v1/consumers", Operate, "create consumers")
            .summary("Create a consumer")
            .to(create)
            .body::<CreateConsumer>()
            .json::<ConsumerView>(201, "The consumer.")
            .errors(&[400, 409]),
        Route::get("/v1/consumers", Read, "read consumers")
            .summary("List consumers")
            .to(list)
            .query::<ListQuery>()
            .list::<ConsumerView>(
                200,
                "Every consumer (a page object with `offset` or `limit`).",
            )
            .errors(&[400]),
        Route::get("/v1/consumers/{name}", Read, "read consumers")
            .summary("Show a consumer")
            .to(show)
            .query::<ShowQuery>()
            .json::<ConsumerShow>(
                200,
                "The consumer with one page of its nodes (`?offset=&limit=`, where it sits in `page`), its first 100 \
                 subscriptions and holds and their counts.",
            )
            .errors(&[400, 404]),
        Route::get("/v1/consumers/{name}/subscriptions", Read, "read consumers")
            .summary("List a consumer's subscriptions")
            .to(subscriptions)
            .query::<ListQuery>()
            .list::<SubscriptionEntry>(
                200,
                "Its subscriptions by resource, each with its `resource` (a page object with `offset` or `limit`).",
            )
            .errors(&[400, 404]),
        Route::get("/v1/consumers/{name}/holds", Read, "read consumers")
            .summary("List a consumer's held-back versions")
            .to(holds)
            .query::<ListQuery>()
            .list::<HoldView>(
                200,
                "Its held-back versions by resource then version (a page object with `offset` or `limit`).",
            )
            .errors(&[400, 404]),
        Route::put(
            "/v1/consumers/{name}/nodes",
            Operate,
            "change consumer nodes",
        )
        .summary("Add and remove nodes")
        .to(update_nodes)
        .body::<UpdateNodes>()
        .json::<ConsumerView>(200, "The consumer.")
        .errors(&[400, 404, 409]),
        Route::put(SUBSCRIPTION, Operate, "change subscriptions")
            .summary("Subscribe (whole policy)")
            .to(subscribe)
            .body::<Subscribe>()
            .json::<ConsumerView>(200, "The consumer.")
            .errors(&[400, 404, 409]),
        Route::patch(SUBSCRIPTION, Operate, "change subscriptions")
            .summary("Change a subscription's policy")
            .to(patch_subscription)
            .body::<PatchSubscription>()
            .json::<ConsumerView>(200, "The consumer.")
            .errors(&[400, 404, 409]),
        Route::delete(
            "/v1/consumers/{name}/holds/{resource}/{version}",
            Operate,
            "clear held-back versions",
        )
        .summary("Clear a held-back version")
        .to(clear_hold)
        .json::<ConsumerView>(200, "The consumer.")
        .errors(&[400, 404, 409]),
        Route::delete(SUBSCRIPTION, Operate, "change subscriptions")
            .summary("Unsubscribe")
            .to(unsubscribe)
            .json::<ConsumerView>(200, "The consumer.")
            .errors(&[400, 404, 409]),
        Route::delete("/v1/consumers/{name}", Operate, "delete consumers")
            .summary("Delete a consumer")
            .to(delete)
            .json::<ConsumerView>(200, "The consumer as it was.")
            .errors(&[400, 404, 409]),
    ]
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateConsumer {
    name: String,
    #[serde(default)]
    nodes: Vec<String>,
}

async fn create(
    replica: web::Data<Replica>,
    body: web::Json<CreateConsumer>,
) -> Result<HttpResponse, ApiError> {
    let CreateConsumer { name, nodes } = body.into_inner();
    replica
        .propose(Command::CreateConsumer {
            name: name.clone(),
            nodes,
        })
        .await?;
    let view = replica.read_written(move |s| s.consumer(&name)).await?;
    Ok(HttpResponse::Created().json(view))
}

async fn list(
    replica: web::Data<Replica>,
    req: HttpRequest,
    q: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let w = q.window()?;
    let page = replica
        .read_snapshot(q.consistent, move |s| s.consumers_page(w.offset, w.limit))
        .await?;
    answer(&req, "consumers", page, w)
}

/// One page of the consumer's nodes, built from a copy of the state (issue 37 §2).
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
            s.consumer_show(&key, w.offset, w.limit)
        })
        .await?;
    Ok(HttpResponse::Ok().json(found(view, "consumer", &name)?))
}

/// A page of the consumer's subscriptions (the show lists the first 100), from a copy of the state.
async fn subscriptions(
    replica: web::Data<Replica>,
    req: HttpRequest,
    name: web::Path<String>,
    q: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    inner_page(
        &replica,
        &req,
        name.into_inner(),
        &q,
        "subscriptions",
        |s, c, w| s.subscriptions_page(c, w.offset, w.limit),
    )
    .await
}

/// A page of the consumer's held-back versions (the show lists the first 100), from a copy of the state.
async fn holds(
    replica: web::Data<Replica>,
    req: HttpRequest,
    name: web::Path<String>,
    q: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    inner_page(&replica, &req, name.into_inner(), &q, "holds", |s, c, w| {
        s.holds_page(c, w.offset, w.limit)
    })
    .await
}

/// A page of one of consumer `name`'s inner lists, answered under `key` as the list routes answer: `page`
/// reads it from a copy of the state, `None` (a 404 naming the consumer) when there is no such consumer.
async fn inner_page<T, F>(
    replica: &Replica,
    req: &HttpRequest,
    name: String,
    q: &ListQuery,
    key: &str,
    page: F,
) -> Result<HttpResponse, ApiError>
where
    T: Serialize + Send + 'static,
    F: FnOnce(&ClusterState, &str, Window) -> Option<Page<T>> + Send + 'static,
{
    let w = q.window()?;
    let consumer = name.clone();
    let found_page = replica
        .read_snapshot(q.consistent, move |s| page(s, &consumer, w))
        .await?;
    answer(req, key, found(found_page, "consumer", &name)?, w)
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateNodes {
    #[serde(default)]
    add: Vec<String>,
    #[serde(default)]
    remove: Vec<String>,
}

async fn update_nodes(
    replica: web::Data<Replica>,
    name: web::Path<String>,
    body: web::Json<UpdateNodes>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    let UpdateNodes { add, remove } = body.into_inner();
    replica
        .propose(Command::UpdateConsumerNodes {
            name: name.clone(),
            add,
            remove,
        })
        .await?;
    let view = replica.read_written(move |s| s.consumer(&name)).await?;
    Ok(HttpResponse::Ok().json(view))
}

/// `PUT` body: the whole subscription; a field left out is unset (takes the default).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Subscribe {
    #[serde(default)]
    mode: Mode,
    #[serde(default)]
    pin: Option<u64>,
    #[serde(default)]
    strategy: Option<Strategy>,
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
    /// Bake time, deadlines and confirmation gates of its deployments (DEPLOYMENTS.md §14).
    #[serde(default)]
    pacing: Option<Pacing>,
    /// Metric analysis of its deployments (DEPLOYMENTS.md "Analysis").
    #[serde(default)]
    analysis: Option<convoy_actors::domain::analysis::spec::Analysis>,
    /// A weak subscription's brake (DEPLOYMENTS.md §4); left out: on at 20% within 10 minutes;
    /// `{"enabled": false}` turns it off.
    #[serde(default)]
    brake: Option<Brake>,
    /// A weak subscription's start jitter (`"30s"`, at most a day): each node's move to a newly selected
    /// version waits its own offset in `[0, start_jitter)` (DEPLOYMENTS.md §4); left out: none.
    #[serde(default)]
    #[schema(example = "30s")]
    start_jitter: Option<String>,
}

async fn subscribe(
    replica: web::Data<Replica>,
    path: web::Path<(String, String)>,
    body: Durations<Subscribe>,
) -> Result<HttpResponse, ApiError> {
    let (consumer, resource) = path.into_inner();
    let b = body.into_inner();
    let policy = Policy {
        strategy: b.strategy,
        min_healthy_ms: b.min_healthy_ms,
        max_failures_per_node: b.max_failures_per_node,
        max_failed_nodes: b.max_failed_nodes,
        rollback_on_failure: b.rollback_on_failure,
        pulse_interval_ms: b.pulse_interval_ms,
        completion: b.completion,
        pacing: b.pacing,
        analysis: b.analysis,
        brake: b.brake,
        start_jitter_ms: super::deployments::jitter_ms(b.start_jitter.as_deref())?,
    };
    replica
        .propose(Command::Subscribe {
            consumer: consumer.clone(),
            resource,
            mode: b.mode,
            pin: b.pin,
            policy,
        })
        .await?;
    let view = replica.read_written(move |s| s.consumer(&consumer)).await?;
    Ok(HttpResponse::Ok().json(view))
}

/// A field that tells "absent" (`None`) from `null` (`Some(None)`); use with `#[serde(default)]`.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// `PATCH` body: only the fields given change; `null` unsets a field (back to its default).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PatchSubscription {
    /// `null` is the same as absent: a subscription always has a mode.
    #[serde(default)]
    mode: Option<Mode>,
    #[serde(default, deserialize_with = "present")]
    pin: Option<Option<u64>>,
    #[serde(default, deserialize_with = "present")]
    strategy: Option<Option<Strategy>>,
    #[serde(default, deserialize_with = "present")]
    min_healthy_ms: Option<Option<u64>>,
    #[serde(default, deserialize_with = "present")]
    max_failures_per_node: Option<Option<u32>>,
    #[serde(default, deserialize_with = "present")]
    max_failed_nodes: Option<Option<FailedNodes>>,
    #[serde(default, deserialize_with = "present")]
    rollback_on_failure: Option<Option<bool>>,
    #[serde(default, deserialize_with = "present")]
    pulse_interval_ms: Option<Option<u64>>,
    #[serde(default, deserialize_with = "present")]
    completion: Option<Option<Completion>>,
    #[serde(default, deserialize_with = "present")]
    pacing: Option<Option<Pacing>>,
    #[serde(default, deserialize_with = "present")]
    analysis: Option<Option<convoy_actors::domain::analysis::spec::Analysis>>,
    /// `null`: back to the default brake (on at 20% within 10 minutes).
    #[serde(default, deserialize_with = "present")]
    brake: Option<Option<Brake>>,
    /// `null`: no start jitter.
    #[serde(default, deserialize_with = "present")]
    start_jitter: Option<Option<String>>,
}

async fn patch_subscription(
    replica: web::Data<Replica>,
    path: web::Path<(String, String)>,
    body: Durations<PatchSubscription>,
) -> Result<HttpResponse, ApiError> {
    let (consumer, resource) = path.into_inner();
    let b = body.into_inner();
    let policy = PolicyPatch {
        strategy: Change::from_json(b.strategy),
        min_healthy_ms: Change::from_json(b.min_healthy_ms),
        max_failures_per_node: Change::from_json(b.max_failures_per_node),
        max_failed_nodes: Change::from_json(b.max_failed_nodes),
        rollback_on_failure: Change::from_json(b.rollback_on_failure),
        pulse_interval_ms: Change::from_json(b.pulse_interval_ms),
        completion: Change::from_json(b.completion),
        pacing: Change::from_json(b.pacing),
        analysis: Change::from_json(b.analysis),
        brake: Change::from_json(b.brake),
        start_jitter_ms: match b.start_jitter {
            None => Change::Keep,
            Some(None) => Change::Clear,
            Some(Some(text)) => match super::deployments::jitter_ms(Some(&text))? {
                Some(ms) => Change::Set(ms),
                None => Change::Clear,
            },
        },
    };
    replica
        .propose(Command::PatchSubscription {
            consumer: consumer.clone(),
            resource,
            mode: b.mode,
            pin: Change::from_json(b.pin),
            policy,
        })
        .await?;
    let view = replica.read_written(move |s| s.consumer(&consumer)).await?;
    Ok(HttpResponse::Ok().json(view))
}

async fn clear_hold(
    replica: web::Data<Replica>,
    caller: Caller,
    path: web::Path<(String, String, u64)>,
) -> Result<HttpResponse, ApiError> {
    let (consumer, resource, version) = path.into_inner();
    replica
        .propose(Command::ClearHold {
            consumer: consumer.clone(),
            resource,
            version,
            by: caller.actor(),
        })
        .await?;
    let view = replica.read_written(move |s| s.consumer(&consumer)).await?;
    Ok(HttpResponse::Ok().json(view))
}

async fn unsubscribe(
    replica: web::Data<Replica>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (consumer, resource) = path.into_inner();
    replica
        .propose(Command::Unsubscribe {
            consumer: consumer.clone(),
            resource,
        })
        .await?;
    let view = replica.read_written(move |s| s.consumer(&consumer)).await?;
    Ok(HttpResponse::Ok().json(view))
}

/// Answers the consumer as it was just before it was deleted.
async fn delete(
    replica: web::Data<Replica>,
    name: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    let key = name.clone();
    let before = replica.read(true, move |s| s.consumer(&key)).await?;
    replica
        .propose(Command::DeleteConsumer { name: name.clone() })
        .await?;
    Ok(HttpResponse::Ok().json(found(before, "consumer", &name)?))
}
