//! `GET /v1/watch`: the cluster-wide change feed as server-sent events. An `applied` event carries this
//! server's applied log index (with its view of leader and term) at once, then whenever the index changes,
//! coalesced to at most one event per [`MIN_GAP`]; a comment line every [`HEARTBEAT`] of silence keeps
//! proxies and the reader's liveness check content. Before every event and heartbeat the stream asks whether
//! its token still authenticates; a revoked or expired one gets a final `closed` event saying why, and the
//! stream ends. At most [`MAX_STREAMS`] streams are open per process, [`PER_TOKEN`] for one token, and the
//! last [`RESERVED`] only for admin and operator tokens ([`SLOTS`]).

use std::convert::Infallible;
use std::time::Duration;

use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{web, HttpResponse};
use futures::Stream;
use tokio::sync::watch;
use tokio::time::{sleep_until, Instant};

use convoy_actors::domain::Permission::Read;

use super::auth::standing::still_valid;
use super::auth::Caller;
use super::error::ApiError;
use super::route::Route;
use super::stream_slots::{Limits, Slot, Slots};
use crate::replica::Replica;

/// The media type of a server-sent event stream.
pub const SSE: &str = "text/event-stream";

/// Events are at least this far apart (at most 4 per second); changes in between are coalesced.
pub const MIN_GAP: Duration = Duration::from_millis(250);
/// A `: heartbeat` comment is sent after this long without an event.
pub const HEARTBEAT: Duration = Duration::from_secs(15);
/// Streams open at once in this process; one more is refused with 503.
pub const MAX_STREAMS: usize = 256;
/// Streams one token may hold open at once on one server.
pub const PER_TOKEN: usize = 32;
/// Of [`MAX_STREAMS`], the last ones only admin and operator tokens may take.
pub const RESERVED: usize = 32;

/// This process's `/v1/watch` slots.
pub static SLOTS: Slots = Slots::new(
    "/v1/watch streams",
    Limits {
        total: MAX_STREAMS,
        per_token: PER_TOKEN,
        reserved: RESERVED,
    },
);

/// What a stream asks before each event and heartbeat: `None` to go on, or the final event to send (with
/// the applied index of the last event as its id) before it ends.
pub fn token_guard(replica: Replica, caller: Caller) -> impl Fn(u64) -> Option<String> {
    move |index| match &caller {
        Caller::Anonymous => None,
        Caller::Token(token) => replica
            .node()
            .read(|m| still_valid(m, token))
            .err()
            .map(|ended| ended.event(&token.name, index)),
    }
}

/// This module's route.
pub fn routes() -> Vec<Route> {
    vec![Route::get("/v1/watch", Read, "watch the cluster's changes")
        .summary("Change feed of the whole cluster (SSE)")
        .to(watch_cluster)
        .events(
            200,
            "Server-sent events as this server's applied index moves.",
            super::openapi::events::cluster_feed,
        )]
}

async fn watch_cluster(
    replica: web::Data<Replica>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let slot = SLOTS.claim(&caller)?;
    let rx = replica.node().applied().subscribe();
    let guard = token_guard(replica.get_ref().clone(), caller);
    let replica = replica.into_inner();
    let describe = move |index: u64| {
        let info = replica.cluster_info();
        serde_json::json!({
            "applied": index, "server": info.id, "leader": info.leader_id, "term": info.term,
        })
        .to_string()
    };
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/event-stream"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(feed(rx, describe, guard, PACE, slot)))
}

/// How often a feed may speak: events at least `min_gap` apart, a heartbeat after `heartbeat` of silence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pace {
    /// Least time between two events.
    pub min_gap: Duration,
    /// Silence after which a heartbeat comment is sent.
    pub heartbeat: Duration,
}

/// The pace of `GET /v1/watch`.
pub const PACE: Pace = Pace {
    min_gap: MIN_GAP,
    heartbeat: HEARTBEAT,
};

/// Where a feed is between two chunks.
struct Feed<F, G> {
    pace: Pace,
    rx: watch::Receiver<u64>,
    describe: F,
    /// Asked before every event and heartbeat (see [`token_guard`]).
    guard: G,
    /// The final event was sent: the stream ends.
    closed: bool,
    /// The index of the last event, `None` before the first.
    sent: Option<u64>,
    /// When the last event was sent (for [`MIN_GAP`]).
    last_event: Instant,
    /// When anything was last written (for [`HEARTBEAT`]).
    last_write: Instant,
    _slot: Slot,
}

/// The SSE stream of `rx`'s values: one `applied` event now, then one per change at most every
/// `pace.min_gap` (the latest value wins), a heartbeat comment after `pace.heartbeat` of silence; it ends
/// when the sender is dropped, or after the final event `guard` gives instead of an event or heartbeat.
/// `describe` makes an event's `data` from the index.
pub fn feed<F, G>(
    rx: watch::Receiver<u64>,
    describe: F,
    guard: G,
    pace: Pace,
    slot: Slot,
) -> impl Stream<Item = Result<Bytes, Infallible>>
where
    F: Fn(u64) -> String + 'static,
    G: Fn(u64) -> Option<String> + 'static,
{
    let now = Instant::now();
    let start = Feed {
        pace,
        rx,
        describe,
        guard,
        closed: false,
        sent: None,
        last_event: now,
        last_write: now,
        _slot: slot,
    };
    futures::stream::unfold(start, |mut f| async move {
        let chunk = next_chunk(&mut f).await?;
        Some((Ok(chunk), f))
    })
}

/// The next chunk to write, or `None` when the sender is gone or the final event was sent.
async fn next_chunk<F, G>(f: &mut Feed<F, G>) -> Option<Bytes>
where
    F: Fn(u64) -> String,
    G: Fn(u64) -> Option<String>,
{
    if f.closed {
        return None;
    }
    if f.sent.is_none() {
        let index = *f.rx.borrow_and_update();
        return Some(closing(f, index).unwrap_or_else(|| event(f, index)));
    }
    loop {
        tokio::select! {
            changed = f.rx.changed() => {
                changed.ok()?;
                sleep_until(f.last_event + f.pace.min_gap).await;
                let index = *f.rx.borrow_and_update();
                if let Some(last) = closing(f, index) {
                    return Some(last);
                }
                if f.sent != Some(index) {
                    return Some(event(f, index));
                }
            }
            _ = sleep_until(f.last_write + f.pace.heartbeat) => {
                if let Some(last) = closing(f, f.sent.unwrap_or_default()) {
                    return Some(last);
                }
                f.last_write = Instant::now();
                return Some(Bytes::from_static(b": heartbeat\n\n"));
            }
        }
    }
}

/// The final event, when the guard says the stream must end (the feed is then closed).
fn closing<F, G: Fn(u64) -> Option<String>>(f: &mut Feed<F, G>, index: u64) -> Option<Bytes> {
    let last = (f.guard)(index)?;
    f.closed = true;
    Some(Bytes::from(last))
}

fn event<F: Fn(u64) -> String, G>(f: &mut Feed<F, G>, index: u64) -> Bytes {
    let now = Instant::now();
    f.sent = Some(index);
    f.last_event = now;
    f.last_write = now;
    Bytes::from(format!(
        "event: applied\nid: {index}\ndata: {}\n\n",
        (f.describe)(index)
    ))
}

#[cfg(test)]
#[path = "watch_test.rs"]
mod tests;
