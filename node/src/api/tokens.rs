//! API tokens: create (the secret is shown once, in the 201 answer; with a `ttl`, it expires), list (no
//! secrets, no hashes), revoke. With auth off no token is created: one made by any local page then would
//! still work once auth is turned on.

use actix_web::{web, HttpRequest, HttpResponse};
use convoy_actors::domain::Permission::Admin;
use convoy_actors::domain::{
    check_token_consumers, check_token_name, check_token_nodes, check_token_ttl, Command, Role,
    TokenView,
};
use serde::Deserialize;

use super::auth::{secret, AuthMode, Caller};
use super::error::ApiError;
use super::openapi::answers::TokenCreated;
use super::page::{answer, ListQuery};
use super::read::found;
use super::route::Route;
use crate::replica::Replica;

/// This module's routes.
pub fn routes() -> Vec<Route> {
    vec![
        Route::get("/v1/tokens", Admin, "list tokens")
            .summary("List tokens (never their secrets)")
            .to(list)
            .query::<ListQuery>()
            .list::<TokenView>(200, "Every token (a page object with `offset` or `limit`).")
            .errors(&[400]),
        Route::post("/v1/tokens", Admin, "create tokens")
            .summary("Create a token")
            .to(create)
            .body::<CreateBody>()
            .json::<TokenCreated>(201, "The token and its secret, shown once.")
            .errors(&[400, 403, 409]),
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
    /// How long the token works, from its creation: a duration with its unit (`30d`, `12h`, `90s`), 1s
    /// to 3650d. Absent: until revoked.
    #[serde(default)]
    ttl: Option<String>,
}

/// The `ttl` of a create body in ms, checked.
fn ttl_ms(ttl: Option<&str>) -> Result<Option<u64>, ApiError> {
    let Some(raw) = ttl else {
        return Ok(None);
    };
    let ms = convoy_time::parse_duration(raw)
        .map_err(|e| ApiError::BadRequest(format!("ttl: {e}")))?
        .as_millis();
    let ms = u64::try_from(ms).unwrap_or(u64::MAX);
    check_token_ttl(ms).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    Ok(Some(ms))
}

async fn create(
    replica: web::Data<Replica>,
    mode: Option<web::Data<AuthMode>>,
    caller: Caller,
    body: web::Json<CreateBody>,
) -> Result<HttpResponse, ApiError> {
    if mode.is_some_and(|m| *m.get_ref() == AuthMode::Off) {
        return Err(ApiError::Forbidden(
            "auth is off on this server: tokens are made with auth on (set bootstrap_token_file), since \
             one made now by any local caller would still work once auth is turned on"
                .into(),
        ));
    }
    let body = body.into_inner();
    check_token_name(&body.name).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    check_token_nodes(body.role, body.nodes.as_deref())
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let ttl_ms = ttl_ms(body.ttl.as_deref())?;
    check_token_consumers(body.role, &body.consumers)
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let secret = secret::generate();
    let by = caller.actor();
    let hash = secret::hash(&secret);
    let name = body.name.clone();
    let command = match (body.nodes, body.consumers.is_empty(), ttl_ms) {
        (Some(nodes), false, ttl_ms) => Command::CreateBoundToken {
            name,
            nodes,
            consumers: body.consumers,
            hash,
            by: by.clone(),
            ttl_ms,
        },
        (nodes, _, None) => Command::CreateToken {
            name,
            role: body.role,
            nodes,
            hash,
            by: by.clone(),
        },
        (nodes, _, Some(ttl_ms)) => Command::CreateTokenWithTtl {
            name,
            role: body.role,
            nodes,
            hash,
            by: by.clone(),
            ttl_ms,
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

async fn list(
    replica: web::Data<Replica>,
    req: HttpRequest,
    q: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let w = q.window()?;
    let page = replica
        .read_snapshot(q.consistent, move |s| s.tokens_page(w.offset, w.limit))
        .await?;
    answer(&req, "tokens", page, w)
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
