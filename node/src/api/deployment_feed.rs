//! What watchers of one deployment read: `GET /v1/deployments/{id}/summary` and the Server-Sent Events
//! feed `GET /v1/deployments/{id}/watch`, both served by any server from its applied state.
//!
//! The feed wakes on this server's applied index, compares the deployment's O(1) fingerprint, and sends a
//! summary only when it changed, at most [`MIN_GAP`] apart (changes in between coalesce into one); a
//! comment every [`HEARTBEAT`] keeps proxies and the client's idle timer quiet. It ends after the summary
//! that shows a terminal status, with an `end` event. On every wake and heartbeat it asks whether its token
//! still authenticates; a revoked or expired one gets a final `closed` event saying why, and the feed ends.
//! At most [`MAX_WATCHERS`] feeds run per server, [`PER_TOKEN`] for one token, the last [`RESERVED`] only
//! for admin and operator tokens ([`SLOTS`]).

use std::time::Duration;

use super::auth::Caller;
use super::deployments::parse_id;
use super::error::ApiError;
use super::read::{found, Consistency};
use super::route::Route;
use super::stream_slots::{Limits, Slot, Slots};
use super::watch::token_guard;
use crate::replica::Replica;
use actix_web::web::{self, Bytes};
use actix_web::HttpResponse;
use convoy_actors::domain::Permission::Read;
use convoy_actors::domain::{DeploymentId, SummaryView, Timestamp};

/// Feeds served at once by one server; one more is refused with 503.
pub const MAX_WATCHERS: usize = 64;
/// Feeds one token may hold open at once on one server.
pub const PER_TOKEN: usize = 8;
/// Of [`MAX_WATCHERS`], the last ones only admin and operator tokens may take.
pub const RESERVED: usize = 16;

/// This server's deployment-watch slots.
pub static SLOTS: Slots = Slots::new(
    "deployment watches",
    Limits {
        total: MAX_WATCHERS,
        per_token: PER_TOKEN,
        reserved: RESERVED,
    },
);
/// Shortest time between two summaries of one feed.
pub const MIN_GAP: Duration = Duration::from_millis(250);
/// A comment line is sent after this long without a summary.
pub const HEARTBEAT: Duration = Duration::from_secs(15);

/// This module's routes.
pub fn routes() -> Vec<Route> {
    vec![
        Route::get("/v1/deployments/{id}/summary", Read, "read deployments")
            .summary("A deployment's summary")
            .to(summary)
            .query::<Consistency>()
            .json::<SummaryView>(
                200,
                "Counts per state, windows, pulse countdown, failing nodes, last events.",
            )
            .errors(&[400, 404]),
        Route::get("/v1/deployments/{id}/watch", Read, "watch deployments")
            .summary("A deployment's changes (SSE)")
            .to(watch)
            .events(
                200,
                "Server-sent events as the deployment changes.",
                super::openapi::events::deployment_feed,
            )
            .errors(&[404]),
    ]
}

/// The wall time a summary's ages and countdowns are computed at.
fn now_ms() -> Timestamp {
    convoy_time::Clock::wall_ms(&convoy_time::SystemClock)
}

async fn summary(
    replica: web::Data<Replica>,
    id: web::Path<String>,
    q: web::Query<Consistency>,
) -> Result<HttpResponse, ApiError> {
    let raw = id.into_inner();
    let id = parse_id(&raw)?;
    let view = replica
        .read(q.consistent, move |s| s.deployment_summary(id, now_ms()))
        .await?;
    Ok(HttpResponse::Ok().json(found(view, "deployment", &raw)?))
}

/// One SSE message: `event: <name>`, `id: <applied index>` and the JSON on one `data:` line.
pub fn sse_event(name: &str, index: u64, json: &str) -> Bytes {
    Bytes::from(format!("event: {name}\nid: {index}\ndata: {json}\n\n"))
}

/// Where a feed is between two messages.
struct Feed {
    replica: Replica,
    id: DeploymentId,
    applied: tokio::sync::watch::Receiver<u64>,
    last: Option<u64>,
    sent_at: Option<tokio::time::Instant>,
    ended: bool,
    /// Asked on every wake and heartbeat: the final event when the token no longer authenticates.
    guard: Box<dyn Fn(u64) -> Option<String>>,
    _slot: Slot,
}

/// What a feed sends next.
enum Next {
    Message(Bytes),
    Done,
}

impl Feed {
    /// The next message: a summary once the deployment changed, a heartbeat, or the end.
    async fn next(&mut self) -> Next {
        if self.ended {
            return Next::Done;
        }
        loop {
            let index = self.replica.node().applied().last_applied();
            if let Some(last) = (self.guard)(index) {
                self.ended = true;
                return Next::Message(Bytes::from(last));
            }
            let id = self.id;
            let fingerprint = self
                .replica
                .node()
                .read(|m| m.state().deployment_fingerprint(id));
            let Some(fingerprint) = fingerprint else {
                return Next::Done;
            };
            if self.last != Some(fingerprint) {
                if let Some(at) = self.sent_at {
                    // Coalesce: whatever changes during the gap goes out as one summary.
                    tokio::time::sleep_until(at + MIN_GAP).await;
                }
                return self.send_summary();
            }
            let changed = tokio::time::timeout(HEARTBEAT, self.applied.changed()).await;
            match changed {
                Ok(Ok(())) => continue,
                // The state machine is gone: the server is stopping.
                Ok(Err(_)) => return Next::Done,
                Err(_) => {
                    let index = self.replica.node().applied().last_applied();
                    if let Some(last) = (self.guard)(index) {
                        self.ended = true;
                        return Next::Message(Bytes::from(last));
                    }
                    return Next::Message(Bytes::from_static(b": heartbeat\n\n"));
                }
            }
        }
    }

    fn send_summary(&mut self) -> Next {
        let id = self.id;
        let (index, summary) = self
            .replica
            .node()
            .applied()
            .read_at(|m| m.state().deployment_summary(id, now_ms()));
        let Some(summary) = summary else {
            return Next::Done;
        };
        self.last = Some(summary.fingerprint);
        self.sent_at = Some(tokio::time::Instant::now());
        let json = serde_json::to_string(&summary).unwrap_or_else(|_| "null".into());
        let mut message = sse_event("summary", index, &json).to_vec();
        if summary.status.is_terminal() {
            self.ended = true;
            let end = serde_json::json!({"id": id, "status": summary.status}).to_string();
            message.extend_from_slice(&sse_event("end", index, &end));
        }
        Next::Message(Bytes::from(message))
    }
}

async fn watch(
    replica: web::Data<Replica>,
    caller: Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let raw = id.into_inner();
    let id = parse_id(&raw)?;
    let exists = replica
        .read(false, move |s| s.deployment_fingerprint(id))
        .await?;
    found(exists, "deployment", &raw)?;
    let slot = SLOTS.claim(&caller)?;
    let feed = Feed {
        replica: replica.get_ref().clone(),
        id,
        applied: replica.node().applied().subscribe(),
        last: None,
        sent_at: None,
        ended: false,
        guard: Box::new(token_guard(replica.get_ref().clone(), caller)),
        _slot: slot,
    };
    let stream = futures::stream::unfold(feed, |mut feed| async move {
        match feed.next().await {
            Next::Message(bytes) => Some((Ok::<_, actix_web::Error>(bytes), feed)),
            Next::Done => None,
        }
    });
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("cache-control", "no-cache"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(stream))
}
