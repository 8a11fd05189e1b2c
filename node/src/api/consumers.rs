//! Consumers, their nodes and their subscriptions.

use actix_web::{web, HttpResponse};
use convoy_actors::domain::{Command, Completion, Mode, Strategy};
use serde::Deserialize;

use super::error::ApiError;
use super::read::{found, Consistency};
use crate::engine::Engine;

/// Registers this module's routes.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/consumers", web::post().to(create))
        .route("/v1/consumers", web::get().to(list))
        .route("/v1/consumers/{name}", web::get().to(show))
        .route("/v1/consumers/{name}/nodes", web::put().to(update_nodes))
        .route(
            "/v1/consumers/{name}/subscriptions/{resource}",
            web::put().to(subscribe),
        );
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateConsumer {
    name: String,
    #[serde(default)]
    nodes: Vec<String>,
}

async fn create(
    engine: web::Data<Engine>,
    body: web::Json<CreateConsumer>,
) -> Result<HttpResponse, ApiError> {
    let CreateConsumer { name, nodes } = body.into_inner();
    engine
        .propose(Command::CreateConsumer {
            name: name.clone(),
            nodes,
        })
        .await?;
    let view = engine.read_written(move |s| s.consumer(&name)).await?;
    Ok(HttpResponse::Created().json(view))
}

async fn list(
    engine: web::Data<Engine>,
    q: web::Query<Consistency>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(engine.read(q.consistent, |s| s.consumers()).await?))
}

async fn show(
    engine: web::Data<Engine>,
    name: web::Path<String>,
    q: web::Query<Consistency>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    let key = name.clone();
    let view = engine.read(q.consistent, move |s| s.consumer(&key)).await?;
    Ok(HttpResponse::Ok().json(found(view, "consumer", &name)?))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateNodes {
    #[serde(default)]
    add: Vec<String>,
    #[serde(default)]
    remove: Vec<String>,
}

async fn update_nodes(
    engine: web::Data<Engine>,
    name: web::Path<String>,
    body: web::Json<UpdateNodes>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    let UpdateNodes { add, remove } = body.into_inner();
    engine
        .propose(Command::UpdateConsumerNodes {
            name: name.clone(),
            add,
            remove,
        })
        .await?;
    let view = engine.read_written(move |s| s.consumer(&name)).await?;
    Ok(HttpResponse::Ok().json(view))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Subscribe {
    #[serde(default)]
    mode: Mode,
    #[serde(default)]
    strategy: Option<Strategy>,
    #[serde(default)]
    pin: Option<u64>,
    #[serde(default)]
    completion: Option<Completion>,
}

async fn subscribe(
    engine: web::Data<Engine>,
    path: web::Path<(String, String)>,
    body: web::Json<Subscribe>,
) -> Result<HttpResponse, ApiError> {
    let (consumer, resource) = path.into_inner();
    let body = body.into_inner();
    engine
        .propose(Command::Subscribe {
            consumer: consumer.clone(),
            resource,
            mode: body.mode,
            strategy: body.strategy,
            pin: body.pin,
            completion: body.completion,
        })
        .await?;
    let view = engine.read_written(move |s| s.consumer(&consumer)).await?;
    Ok(HttpResponse::Ok().json(view))
}
