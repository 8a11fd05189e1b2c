//! Maintenance windows (issue 24 §2): create, list (with their next openings at this server's clock), show
//! and delete.

use actix_web::{web, HttpRequest, HttpResponse};
use convoy_actors::domain::windows::WindowView;
use convoy_actors::domain::Permission::{Operate, Read};
use convoy_actors::domain::{AppliesTo, Command, Overrun, Timestamp, Window, WindowKind};
use serde::Deserialize;

use super::error::ApiError;
use super::page::{answer, ListQuery};
use super::read::{found, Consistency};
use super::route::Route;
use crate::replica::Replica;

/// This module's routes.
pub fn routes() -> Vec<Route> {
    vec![
        Route::post("/v1/windows", Operate, "change maintenance windows")
            .summary("Create a maintenance window")
            .to(create)
            .body::<CreateWindow>()
            .json::<WindowView>(201, "The window and its next openings.")
            .errors(&[400, 409]),
        Route::get("/v1/windows", Read, "read maintenance windows")
            .summary("List maintenance windows")
            .to(list)
            .query::<ListQuery>()
            .list::<WindowView>(
                200,
                "Every window, by name (a page object with `offset` or `limit`).",
            )
            .errors(&[400]),
        Route::get("/v1/windows/{name}", Read, "read maintenance windows")
            .summary("Show a maintenance window")
            .to(show)
            .query::<Consistency>()
            .json::<WindowView>(200, "The window and its next openings.")
            .errors(&[400, 404]),
        Route::delete("/v1/windows/{name}", Operate, "change maintenance windows")
            .summary("Delete a maintenance window")
            .to(delete)
            .json::<WindowView>(200, "The window as it was.")
            .errors(&[400, 404]),
    ]
}

/// The wall time the next openings are listed from.
fn now_ms() -> Timestamp {
    convoy_time::Clock::wall_ms(&convoy_time::SystemClock)
}

/// `POST /v1/windows`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateWindow {
    name: String,
    kind: WindowKind,
    /// A cron pattern (5 fields, or 6 with seconds) in `time_zone`'s wall time.
    schedule: String,
    /// How long each opening lasts (`2h`, `30m`).
    duration: String,
    /// An IANA time zone; default UTC.
    #[serde(default)]
    time_zone: Option<String>,
    #[serde(default)]
    applies_to: AppliesTo,
    #[serde(default)]
    overrun: Overrun,
    /// Whether rollbacks go on while it holds; default true.
    #[serde(default)]
    allow_rollback: Option<bool>,
}

async fn create(
    replica: web::Data<Replica>,
    body: web::Json<CreateWindow>,
) -> Result<HttpResponse, ApiError> {
    let b = body.into_inner();
    let duration = convoy_time::parse_duration(&b.duration)
        .map_err(|e| ApiError::BadRequest(format!("duration: {e}")))?;
    let name = b.name.clone();
    replica
        .propose(Command::CreateWindow(Window {
            name: b.name,
            kind: b.kind,
            schedule: b.schedule,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            time_zone: b.time_zone.unwrap_or_else(|| "UTC".into()),
            applies_to: b.applies_to,
            overrun: b.overrun,
            allow_rollback: b.allow_rollback.unwrap_or(true),
        }))
        .await?;
    let key = name.clone();
    let view = replica
        .read_written(move |s| s.window(&key, now_ms()))
        .await?;
    Ok(HttpResponse::Created().json(found(view, "window", &name)?))
}

async fn list(
    replica: web::Data<Replica>,
    req: HttpRequest,
    q: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let w = q.window()?;
    let page = replica
        .read_snapshot(q.consistent, move |s| {
            s.windows_page(now_ms(), w.offset, w.limit)
        })
        .await?;
    answer(&req, "windows", page, w)
}

async fn show(
    replica: web::Data<Replica>,
    name: web::Path<String>,
    q: web::Query<Consistency>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    let key = name.clone();
    let view = replica
        .read(q.consistent, move |s| s.window(&key, now_ms()))
        .await?;
    Ok(HttpResponse::Ok().json(found(view, "window", &name)?))
}

async fn delete(
    replica: web::Data<Replica>,
    name: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    let key = name.clone();
    let before = replica
        .read(true, move |s| s.window(&key, now_ms()))
        .await?;
    replica
        .propose(Command::DeleteWindow { name: name.clone() })
        .await?;
    Ok(HttpResponse::Ok().json(found(before, "window", &name)?))
}
