//! `GET /v1/watch`: the cluster-wide change feed as server-sent events. An `applied` event carries this
//! server's applied log index (with its view of leader and term) at once, then whenever the index changes,
//! coalesced to at most one event per [`MIN_GAP`]; a comment line every [`HEARTBEAT`] of silence keeps
//! proxies and the reader's liveness check content. At most [`MAX_STREAMS`] streams are open per process.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{web, HttpResponse};
use futures::Stream;
use tokio::sync::watch;
use tokio::time::{sleep_until, Instant};

use convoy_actors::domain::Permission::Read;

use super::error::ApiError;
use super::route::Route;
use crate::replica::Replica;

/// The media type of a server-sent event stream.
pub const SSE: &str = "text/event-stream";

/// Events are at least this far apart (at most 4 per second); changes in between are coalesced.
pub const MIN_GAP: Duration = Duration::from_millis(250);
/// A `: heartbeat` comment is sent after this long without an event.
pub const HEARTBEAT: Duration = Duration::from_secs(15);
/// Streams open at once in this process; one more is refused with 503.
pub const MAX_STREAMS: usize = 256;

static OPEN: AtomicUsize = AtomicUsize::new(0);

/// One of the [`MAX_STREAMS`] places, given back when the stream is dropped (the client went away).
#[derive(Debug)]
pub struct Slot(());

impl Slot {
    /// A place, or `None` when [`MAX_STREAMS`] streams are open.
    pub fn claim() -> Option<Slot> {
        OPEN.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < MAX_STREAMS).then_some(n + 1)
        })
        .ok()
        .map(|_| Slot(()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        OPEN.fetch_sub(1, Ordering::AcqRel);
    }
}

/// This module's route.
pub fn routes() -> Vec<Route> {
    vec![Route::get("/v1/watch", Read, "watch the cluster's changes")
        .summary("Change feed of the whole cluster (SSE)")
        .to(watch_cluster)
        .text(
            200,
            "Server-sent events as this server's applied index moves.",
            Some(SSE),
        )]
}

async fn watch_cluster(replica: web::Data<Replica>) -> Result<HttpResponse, ApiError> {
    let slot = Slot::claim().ok_or_else(|| {
        ApiError::Unavailable(format!(
            "{MAX_STREAMS} watch streams are open on this server: retry later or watch another member"
        ))
    })?;
    let rx = replica.node().applied().subscribe();
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
        .streaming(feed(rx, describe, PACE, slot)))
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
struct Feed<F> {
    pace: Pace,
    rx: watch::Receiver<u64>,
    describe: F,
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
/// when the sender is dropped. `describe` makes an event's `data` from the index.
pub fn feed<F>(
    rx: watch::Receiver<u64>,
    describe: F,
    pace: Pace,
    slot: Slot,
) -> impl Stream<Item = Result<Bytes, Infallible>>
where
    F: Fn(u64) -> String + 'static,
{
    let now = Instant::now();
    let start = Feed {
        pace,
        rx,
        describe,
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

/// The next chunk to write, or `None` when the sender is gone.
async fn next_chunk<F: Fn(u64) -> String>(f: &mut Feed<F>) -> Option<Bytes> {
    if f.sent.is_none() {
        let index = *f.rx.borrow_and_update();
        return Some(event(f, index));
    }
    loop {
        tokio::select! {
            changed = f.rx.changed() => {
                changed.ok()?;
                sleep_until(f.last_event + f.pace.min_gap).await;
                let index = *f.rx.borrow_and_update();
                if f.sent != Some(index) {
                    return Some(event(f, index));
                }
            }
            _ = sleep_until(f.last_write + f.pace.heartbeat) => {
                f.last_write = Instant::now();
                return Some(Bytes::from_static(b": heartbeat\n\n"));
            }
        }
    }
}

fn event<F: Fn(u64) -> String>(f: &mut Feed<F>, index: u64) -> Bytes {
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
