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
}

/// The JSON body of every error response.
#[derive(Debug, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// `{"code", "message"}`.
#[derive(Debug, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// A stable machine-readable code: `bad_request`, `unauthenticated`, `forbidden`, `not_found`, `conflict`,
    /// `unsupported_media_type`, `unavailable`, `internal`.
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
            ApiError::Forbidden(_) => "forbidden",
            ApiError::UnsupportedMediaType(_) => "unsupported_media_type",
            ApiError::NotFound(_) => "not_found",
            ApiError::Conflict(_) => "conflict",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::Internal(_) => "internal",
            ApiError::NotAMember => "not_a_member",
            ApiError::Timeout(_) => "timeout",
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Unavailable(_) | ApiError::NotAMember => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Timeout(_) => StatusCode::REQUEST_TIMEOUT,
        }
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::build(self.status_code()).json(ErrorBody {
            error: ErrorDetail {
                code: self.code().to_string(),
                message: self.to_string(),
            },
        })
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
    ApiError::BadRequest(format!("invalid JSON body: {err}")).into()
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
