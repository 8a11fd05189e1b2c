//! API tokens: create (the secret is shown once, in the 201 answer), list (no secrets, no hashes), revoke.

use actix_web::{web, HttpResponse};
use convoy_actors::domain::Permission::Admin;
use convoy_actors::domain::{
    check_token_consumers, check_token_name, check_token_nodes, Command, Role, TokenView,
};
use serde::Deserialize;

use super::auth::{secret, Caller};
use super::error::ApiError;
use super::openapi::answers::TokenCreated;
use super::read::found;
use super::route::Route;
use crate::replica::Replica;

/// This module's routes.
pub fn routes() -> Vec<Route> {
    vec![
        Route::get("/v1/tokens", Admin, "list tokens")
            .summary("List tokens (never their secrets)")
            .to(list)
            .list::<TokenView>(200, "Every token."),
        Route::post("/v1/tokens", Admin, "create tokens")
            .summary("Create a token")
            .to(create)
            .body::<CreateBody>()
            .json::<TokenCreated>(201, "The token and its secret, shown once.")
            .errors(&[400, 409]),
        Route::delete("/v1/tokens/{name}", Admin, "revoke tokens")
            .summary("Revoke a token")
            .to(revoke)
            .json::<TokenView>(200, "The revoked token.")
            .errors(&[404]),
    ]
}

/// `POST /v1/tokens` body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateBody {
    name: String,
    role: Role,
    #[serde(default)]
    nodes: Option<String>,
    /// Agent tokens: the consumers whose nodes it may report for, as well as its glob.
    #[serde(default)]
    consumers: Vec<String>,
}

async fn create(
    replica: web::Data<Replica>,
    caller: Caller,
    body: web::Json<CreateBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    check_token_name(&body.name).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    check_token_nodes(body.role, body.nodes.as_deref())
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    check_token_consumers(body.role, &body.consumers)
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let secret = secret::generate();
    let by = caller.actor();
    let command = match (body.nodes, body.consumers.is_empty()) {
        (Some(nodes), false) => Command::CreateBoundToken {
            name: body.name.clone(),
            nodes,
            consumers: body.consumers,
            hash: secret::hash(&secret),
            by: by.clone(),
        },
        (nodes, _) => Command::CreateToken {
            name: body.name.clone(),
            role: body.role,
            nodes,
            hash: secret::hash(&secret),
            by: by.clone(),
        },
    };
    replica.propose(command).await?;
    tracing::info!(token = %body.name, role = %body.role, %by, "token created");
    let name = body.name.clone();
    let view = replica.read_written(move |s| s.token(&name)).await?;
    let mut answer = serde_json::to_value(found(view, "token", &body.name)?)
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    answer["secret"] = serde_json::Value::String(secret);
    Ok(HttpResponse::Created().json(answer))
}

async fn list(replica: web::Data<Replica>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(replica.read(false, |s| s.token_views()).await?))
}

async fn revoke(
    replica: web::Data<Replica>,
    caller: Caller,
    name: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    let key = name.clone();
    let view = found(
        replica.read(false, move |s| s.token(&key)).await?,
        "token",
        &name,
    )?;
    let by = caller.actor();
    replica
        .propose(Command::RevokeToken {
            name: name.clone(),
            by: by.clone(),
        })
        .await?;
    tracing::info!(token = %name, %by, "token revoked");
    Ok(HttpResponse::Ok().json(view))
}
