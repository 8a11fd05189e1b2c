//! Who may call the API: the middleware that checks every request against the route table (404 for a route
//! it does not list, 401 without a known token, 403 when the token's role lacks the route's permission, 415
//! for a state change that is not JSON), and the [`Caller`] it leaves for handlers.
//!
//! Tokens are read from this server's applied state on every request, so a revoked token fails on each
//! server from the log index that revokes it; a secret the server does not know makes it catch up with the
//! leader first, and an expired token is 401 `token_expired` (see [`standing`]).

pub mod bootstrap;
mod scope;
pub mod secret;
pub mod standing;
pub mod table;

use std::future::{ready, Ready};

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderValue, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest, ResponseError};
use convoy_actors::domain::{Actor, Permission, Token};

use super::error::ApiError;
use super::route::Routes;
use crate::replica::Replica;
use table::Rule;

/// Whether this server checks tokens. Set once at start from the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthMode {
    /// Every route but `/healthz` and `/readyz` needs a token (a `bootstrap_token_file` is configured).
    On,
    /// No tokens: a loopback `http_addr`, or `insecure_no_auth = true`.
    Off,
}

impl AuthMode {
    /// `"on"` or `"off"`, as `GET /v1/cluster` shows it.
    pub fn name(self) -> &'static str {
        match self {
            AuthMode::On => "on",
            AuthMode::Off => "off",
        }
    }
}

/// Who is calling: a token (with auth on) or anybody (auth off). Handlers take it as an extractor.
#[derive(Clone)]
pub enum Caller {
    /// Auth is off: actions are recorded as `user`.
    Anonymous,
    /// The token the request carried.
    Token(Token),
}

impl Caller {
    /// The actor recorded as `by` on what this caller does.
    pub fn actor(&self) -> Actor {
        match self {
            Caller::Anonymous => Actor::User,
            Caller::Token(t) => Actor::Token(t.name.clone()),
        }
    }

    /// 403 unless this caller may report for `node` (anybody may with auth off).
    pub fn check_report(&self, node: &str) -> Result<(), ApiError> {
        match self {
            Caller::Anonymous => Ok(()),
            Caller::Token(t) if t.may_report_for(node) => Ok(()),
            Caller::Token(t) => Err(ApiError::Forbidden(format!(
                "token {:?} ({}) may not report for node {:?}{}",
                t.name,
                t.role,
                clip(node),
                t.nodes
                    .as_deref()
                    .map(|g| format!(": its nodes are {g:?}"))
                    .unwrap_or_default()
            ))),
        }
    }
}

impl FromRequest for Caller {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(Ok(req
            .extensions()
            .get::<Caller>()
            .cloned()
            .unwrap_or(Caller::Anonymous)))
    }
}

/// The middleware (wrap the App with `actix_web::middleware::from_fn(auth::check)`): route table (404), token
/// (401), role (403), content type (415); then the handler, with the [`Caller`] in the request's extensions.
pub async fn check<B: MessageBody + 'static>(
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, actix_web::Error> {
    match admit(&req).await {
        Ok(caller) => {
            req.extensions_mut().insert(caller);
            Ok(next.call(req).await?.map_into_left_body())
        }
        Err(refused) => {
            let mut response = refused.error_response();
            if let ApiError::MethodNotAllowed(_) = refused {
                let routes = Routes::of(req.request());
                let allowed = table::allowed(routes, req.match_info().as_str()).join(", ");
                if let Ok(value) = actix_web::http::header::HeaderValue::from_str(&allowed) {
                    response
                        .headers_mut()
                        .insert(actix_web::http::header::ALLOW, value);
                }
            }
            Ok(req.into_response(response).map_into_right_body())
        }
    }
}

/// Who the request is from, or why it is refused.
async fn admit(req: &ServiceRequest) -> Result<Caller, ApiError> {
    let path = req.match_info().as_str();
    let routes = Routes::of(req.request());
    let Some(rule) = table::lookup(routes, req.method().as_str(), path) else {
        let allowed = table::allowed(routes, path);
        if !allowed.is_empty() {
            return Err(ApiError::MethodNotAllowed(format!(
                "{} {} is not served; this path takes {}",
                req.method(),
                clip(path),
                allowed.join(", ")
            )));
        }
        return Err(ApiError::NotFound(format!(
            "no route {} {}",
            req.method(),
            clip(path)
        )));
    };
    let mode = req
        .app_data::<web::Data<AuthMode>>()
        .map(|m| *m.get_ref())
        .unwrap_or(AuthMode::On);
    let caller = match (mode, rule.need) {
        (AuthMode::Off, _) | (_, Permission::Public) => Caller::Anonymous,
        (AuthMode::On, _) => {
            let replica = req.app_data::<web::Data<Replica>>().map(|e| e.get_ref());
            let token = authenticate(replica, req.headers().get(AUTHORIZATION)).await?;
            authorize(&token, rule)?;
            // Which nodes an agent token may report for is checked by the report handlers, which
            // see every node a request names (the path's, or each entry of a batch).
            Caller::Token(token)
        }
    };
    check_content_type(req)?;
    if let Caller::Token(t) = &caller {
        if changes_state(req.method()) && rule.need != Permission::Report {
            let deployment = path
                .strip_prefix("/v1/deployments/")
                .and_then(|rest| rest.split('/').next())
                .map(clip);
            tracing::info!(by = %t.name, method = %req.method(), path = %clip(path), deployment, "write");
        }
    }
    Ok(caller)
}

/// The token whose secret the `Authorization: Bearer` header carries; 401 without one, for an unknown or
/// revoked secret, or (`token_expired`) for an expired token.
async fn authenticate(
    replica: Option<&Replica>,
    header: Option<&HeaderValue>,
) -> Result<Token, ApiError> {
    let Some(header) = header else {
        return Err(ApiError::Unauthenticated(
            "this route needs a token: send Authorization: Bearer <secret>".into(),
        ));
    };
    let secret = header
        .to_str()
        .ok()
        .and_then(secret::bearer)
        .ok_or_else(|| {
            ApiError::Unauthenticated("the Authorization header is not \"Bearer <secret>\"".into())
        })?;
    let hash = secret::hash(secret);
    let replica =
        replica.ok_or_else(|| ApiError::Internal("no replica to read tokens from".into()))?;
    standing::authenticate(replica, hash).await
}

/// 403 unless the token's role grants what the rule needs.
fn authorize(token: &Token, rule: &Rule) -> Result<(), ApiError> {
    if token.role.grants(rule.need) {
        return Ok(());
    }
    Err(ApiError::Forbidden(format!(
        "token {:?} has role {}, which may not {} ({} {})",
        token.name, token.role, rule.action, rule.method, rule.pattern
    )))
}

/// A state change must be `Content-Type: application/json` (a browser cannot send that cross-site without
/// a CORS preflight, which convoy grants only to the cluster's own members: see `api::cors`). A DELETE
/// without a body may omit the header: browsers preflight every cross-site DELETE anyway.
fn check_content_type(req: &ServiceRequest) -> Result<(), ApiError> {
    if !changes_state(req.method()) {
        return Ok(());
    }
    let declared = req.headers().get(CONTENT_TYPE);
    if declared.is_none() && req.method() == Method::DELETE && !has_body(req) {
        return Ok(());
    }
    let essence = declared.and_then(|v| v.to_str().ok()).map(|v| {
        v.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    });
    match essence.as_deref() {
        Some("application/json") => Ok(()),
        other => Err(ApiError::UnsupportedMediaType(format!(
            "{} {} needs Content-Type: application/json (got {})",
            req.method(),
            clip(req.path()),
            other.map_or("none".to_string(), |c| format!("{:?}", clip(c)))
        ))),
    }
}

/// Methods that change state: their requests must say `Content-Type: application/json`.
fn changes_state(method: &Method) -> bool {
    matches!(
        *method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    )
}

/// Whether the request announces a body (a non-zero Content-Length or a chunked one).
fn has_body(req: &ServiceRequest) -> bool {
    let length = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match length {
        Some(n) => n > 0,
        None => req.headers().contains_key("transfer-encoding"),
    }
}

/// At most 100 bytes of a caller's value, for messages.
fn clip(s: &str) -> &str {
    let mut end = s.len().min(100);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
#[path = "auth_test.rs"]
mod tests;
