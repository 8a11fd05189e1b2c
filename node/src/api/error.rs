//! The API's error shape: `{"error": {"code", "message"}}` with a fitting HTTP status.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde::{Deserialize, Serialize};

/// Every way an API request can fail, each mapped to one HTTP status and a stable code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case", tag = "code", content = "message")]
pub enum ApiError {
    /// Malformed or meaningless input (400).
    #[error("{0}")]
    BadRequest(String),
    /// No token, or a token the applied state does not know (401).
    #[error("{0}")]
    Unauthenticated(String),
    /// A token whose `ttl` has run out (401).
    #[error("{0}")]
    TokenExpired(String),
    /// The token's role may not do this, or an agent token reports for another node (403).
    #[error("{0}")]
    Forbidden(String),
    /// A state change whose body is not declared `application/json` (415).
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// An unknown id (404).
    #[error("{0}")]
    NotFound(String),
    /// A conflict with the current state: a second active deployment, a forbidden transition (409).
    #[error("{0}")]
    Conflict(String),
    /// No leader yet, or the cluster cannot commit right now (503).
    #[error("{0}")]
    Unavailable(String),
    /// A bug or an unexpected failure (500).
    #[error("{0}")]
    Internal(String),
    /// This server is not in the cluster (removed, or not yet added): it takes no writes (503).
    #[error("this server is not a member of the cluster; send requests to a member")]
    NotAMember,
    /// The request did not finish within the server's deadline (408).
    #[error("the request did not finish within {0:?}")]
    Timeout(std::time::Duration),
    /// The path is served, but not for this method (405; the answer's `Allow` header lists the methods).
    #[error("{0}")]
    MethodNotAllowed(String),
    /// The request's body is over the limit (413).
    #[error("{0}")]
    PayloadTooLarge(String),
    /// A token over its report budget on this server (429, with `Retry-After`).
    #[error("{message}")]
    RateLimited {
        /// Which token, which limit, when to come back.
        message: String,
        /// The `Retry-After` header, in seconds.
        retry_after_secs: u64,
    },
}

/// The JSON body of every error response.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// `{"code", "message"}`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ErrorDetail {
    /// A stable machine-readable code: `bad_request`, `unauthenticated`, `forbidden`, `not_found`, `conflict`,
    /// `unsupported_media_type`, `rate_limited`, `unavailable`, `internal`.
    pub code: String,
    /// What went wrong, naming the thing and the value.
    pub message: String,
}

impl ApiError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadRequest(_) => "bad_request",
            ApiError::Unauthenticated(_) => "unauthenticated",
            ApiError::TokenExpired(_) => "token_expired",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::UnsupportedMediaType(_) => "unsupported_media_type",
            ApiError::NotFound(_) => "not_found",
            ApiError::Conflict(_) => "conflict",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::Internal(_) => "internal",
            ApiError::NotAMember => "not_a_member",
            ApiError::Timeout(_) => "timeout",
            ApiError::MethodNotAllowed(_) => "method_not_allowed",
            ApiError::PayloadTooLarge(_) => "payload_too_large",
            ApiError::RateLimited { .. } => "rate_limited",
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthenticated(_) | ApiError::TokenExpired(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Unavailable(_) | ApiError::NotAMember => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Timeout(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let mut answer = HttpResponse::build(self.status_code());
        if let ApiError::RateLimited {
            retry_after_secs, ..
        } = self
        {
            answer.insert_header((
                actix_web::http::header::RETRY_AFTER,
                retry_after_secs.to_string(),
            ));
        }
        answer.json(ErrorBody {
            error: ErrorDetail {
                code: self.code().to_string(),
                message: self.to_string(),
            },
        })
    }
}

impl From<convoy_actors::domain::DomainError> for ApiError {
    /// The status follows the refusal's kind: unknown id 404, clash with the state 409, bad input 400.
    fn from(e: convoy_actors::domain::DomainError) -> Self {
        use convoy_actors::domain::ErrorKind;
        match e.kind() {
            ErrorKind::NotFound => ApiError::NotFound(e.to_string()),
            ErrorKind::Conflict => ApiError::Conflict(e.to_string()),
            ErrorKind::Invalid => ApiError::BadRequest(e.to_string()),
        }
    }
}

impl From<crate::replica::ReplicaError> for ApiError {
    fn from(e: crate::replica::ReplicaError) -> Self {
        use crate::replica::ReplicaError;
        match e {
            ReplicaError::NotAMember => ApiError::NotAMember,
            ReplicaError::Refused(refusal) => refusal.into(),
            ReplicaError::Raft(raft) => raft.into(),
            ReplicaError::NotServing(why) => ApiError::Unavailable(why),
            ReplicaError::Task(_) => ApiError::Internal(e.to_string()),
        }
    }
}

impl From<convoy_raft::RaftError> for ApiError {
    fn from(e: convoy_raft::RaftError) -> Self {
        use convoy_raft::network::ClientError;
        use convoy_raft::RaftError;
        match e {
            RaftError::NoLeader(_) | RaftError::Unreachable { .. } => {
                ApiError::Unavailable(e.to_string())
            }
            RaftError::Client(
                ClientError::NoLeader | ClientError::NotLeader { .. } | ClientError::NoQuorum(_),
            ) => ApiError::Unavailable(e.to_string()),
            RaftError::Client(ClientError::Invalid(m)) => ApiError::BadRequest(m),
            other => ApiError::Internal(other.to_string()),
        }
    }
}

/// Turns actix-web's JSON and path extraction failures into the API's error shape.
pub fn json_error(
    err: actix_web::error::JsonPayloadError,
    _req: &actix_web::HttpRequest,
) -> actix_web::Error {
    use actix_web::error::JsonPayloadError;
    match err {
        JsonPayloadError::OverflowKnownLength { .. } | JsonPayloadError::Overflow { .. } => {
            ApiError::PayloadTooLarge(format!("request body: {err}")).into()
        }
        _ => ApiError::BadRequest(format!("invalid JSON body: {err}")).into(),
    }
}

/// Turns query-string extraction failures into the API's error shape.
pub fn query_error(
    err: actix_web::error::QueryPayloadError,
    _req: &actix_web::HttpRequest,
) -> actix_web::Error {
    ApiError::BadRequest(format!("invalid query string: {err}")).into()
}

/// Turns path extraction failures into the API's error shape.
pub fn path_error(
    err: actix_web::error::PathError,
    _req: &actix_web::HttpRequest,
) -> actix_web::Error {
    ApiError::BadRequest(format!("invalid path: {err}")).into()
}

/// The middleware that keeps every error in the API's shape (wrap the App with
/// `actix_web::middleware::from_fn(error::json_errors)`): an error answer that is not JSON — actix-web's own,
/// from an extractor such as an oversized body, or a bare status — is replaced by
/// `{"error": {"code", "message"}}` with the same status, the message naming the cause (at most 100 bytes of
/// it). Answers the dispatcher makes before routing (a malformed request head) never reach it.
pub async fn json_errors<B: actix_web::body::MessageBody + 'static>(
    req: actix_web::dev::ServiceRequest,
    next: actix_web::middleware::Next<B>,
) -> Result<actix_web::dev::ServiceResponse<actix_web::body::EitherBody<B>>, actix_web::Error> {
    // (The request must not be cloned before routing: the router needs it unshared. Errors returned
    // rather than answered come from the deadline wrapper and are `ApiError`s already.)
    let response = next.call(req).await?;
    let status = response.status();
    let is_json = response
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if status.as_u16() < 400 || is_json {
        return Ok(response.map_into_left_body());
    }
    let cause = response.response().error().map(|e| e.to_string());
    Ok(reshape(response.map_into_left_body(), cause))
}

/// The API error for a bare error answer of `status`.
pub fn for_status(status: StatusCode, cause: &str) -> ApiError {
    let cause = convoy_actors::domain::clip(cause);
    match status.as_u16() {
        400 => ApiError::BadRequest(cause),
        404 => ApiError::NotFound(cause),
        405 => ApiError::MethodNotAllowed(cause),
        408 => ApiError::Timeout(std::time::Duration::from_secs(30)),
        413 => ApiError::PayloadTooLarge(cause),
        415 => ApiError::UnsupportedMediaType(cause),
        503 => ApiError::Unavailable(cause),
        _ => ApiError::Internal(cause),
    }
}

fn reshape<B>(
    response: actix_web::dev::ServiceResponse<actix_web::body::EitherBody<B>>,
    cause: Option<String>,
) -> actix_web::dev::ServiceResponse<actix_web::body::EitherBody<B>> {
    let status = response.status();
    if status.as_u16() < 400 {
        return response;
    }
    let already_json = response
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if already_json {
        return response;
    }
    let path = response.request().path().to_string();
    let method = response.request().method().to_string();
    let cause = cause.filter(|c| !c.is_empty()).unwrap_or_else(|| {
        status
            .canonical_reason()
            .unwrap_or("error")
            .to_ascii_lowercase()
    });
    let error = for_status(status, &format!("{method} {path}: {cause}"));
    let mut answer = error.error_response();
    // Keep the status (and an `Allow` header) of the original answer.
    *answer.status_mut() = status;
    if let Some(allow) = response
        .headers()
        .get(actix_web::http::header::ALLOW)
        .cloned()
    {
        answer
            .headers_mut()
            .insert(actix_web::http::header::ALLOW, allow);
    }
    response.into_response(answer.map_into_right_body())
}
