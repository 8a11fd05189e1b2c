//! The four steering verbs of a deployment (pause, resume, abort, rollback), each its own route under
//! `/v1/deployments/{id}/` and under `/v1/consumers/{consumer}/resources/{resource}/`: a path names exactly
//! one operation, so `Allow` and the OpenAPI document list only what a path serves (a catch-all
//! `{action}` route made every `POST .../summary` or `.../watch` look served).

use actix_web::{FromRequest, Handler, Responder};
use convoy_actors::domain::DeploymentView;
use convoy_actors::domain::Permission::Operate;
use serde::Deserialize;

use super::error::ApiError;
use super::route::Route;

/// A steering verb: its path segment (what `deployments::steer` is told) and its summary.
pub(crate) trait Verb {
    /// The path segment and the action `steer` runs.
    const NAME: &'static str;
    /// The operation's one-line summary.
    const SUMMARY: &'static str;
}

/// `.../pause` (with `"hard": true`, a hard pause).
pub(crate) struct Pause;
/// `.../resume`.
pub(crate) struct Resume;
/// `.../abort`.
pub(crate) struct Abort;
/// `.../rollback`.
pub(crate) struct Rollback;

impl Verb for Pause {
    const NAME: &'static str = "pause";
    const SUMMARY: &'static str = "Pause (hard with `hard: true`)";
}
impl Verb for Resume {
    const NAME: &'static str = "resume";
    const SUMMARY: &'static str = "Resume (lifts a person's pause and the autopause)";
}
impl Verb for Abort {
    const NAME: &'static str = "abort";
    const SUMMARY: &'static str = "Abort (nodes keep what they run)";
}
impl Verb for Rollback {
    const NAME: &'static str = "rollback";
    const SUMMARY: &'static str = "Roll back (in reverse install order)";
}

/// The route of steering verb `V` at `pattern` (which ends in `V::NAME`), served by `handler`: the same
/// role, body, answer and errors whether the deployment is named by its id or by its job key.
pub(crate) fn route<V: Verb, F, Args>(pattern: &'static str, handler: F) -> Route
where
    F: Handler<Args> + Send + Sync,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    debug_assert!(pattern.ends_with(V::NAME));
    Route::post(pattern, Operate, "steer deployments")
        .summary(V::SUMMARY)
        .to(handler)
        .body::<ActionBody>()
        .json::<DeploymentView>(200, "The deployment.")
        .errors(&[400, 404, 409])
}

/// Optional body of pause/resume/confirm/abort/rollback.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ActionBody {
    #[serde(default)]
    pub(crate) message: Option<String>,
    /// Pause only: also take back install permission from the nodes admitted but not yet installing.
    #[serde(default)]
    pub(crate) hard: bool,
}

/// The optional body of pause/resume/confirm/abort/rollback: none at all, or `{"message"?, "hard"?}`
/// exactly — a malformed body is refused rather than read as "no body" (the action would run regardless).
pub(crate) fn action_body(body: &[u8]) -> Result<ActionBody, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(ActionBody::default());
    }
    serde_json::from_slice(body).map_err(|e| ApiError::BadRequest(format!("action body: {e}")))
}
