//! A per-token budget for node reports at the HTTP edge, before the body is read or parsed: each token has
//! a bucket of report bytes per second and one of requests per second, on each server, in memory. A report
//! route's request is charged its `Content-Length` (a request without one is let in while the bucket is not
//! in debt and charged afterwards by what was read, bounded by the body limit); over budget it is 429
//! `rate_limited` naming the token and the limit, with `Retry-After`. A token also has at most
//! [`MAX_IN_FLIGHT`] report requests in flight on a server at once (a slow server then refuses more at
//! once, rather than queueing their bodies). A refused request's body is never read, and its connection is
//! closed after the answer (`Connection: close`), so a client that ignores the refusal pays a new
//! connection for each try rather than the server reading what it refused. Refusals count in
//! `convoy_reports_rate_limited_total` and are logged as one summary line per interval at most. With auth
//! off there is no token to charge: no budget applies.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::CONTENT_LENGTH;
use actix_web::http::ConnectionType;
use actix_web::middleware::Next;
use actix_web::web::Bytes;
use actix_web::{web, HttpMessage, ResponseError};
use convoy_actors::domain::Permission;
use futures::Stream;

use super::auth::{table, Caller};
use super::error::ApiError;
use super::route::Routes;

/// The largest body the API reads (`api::configure`'s JSON limit): the byte bucket always holds at least
/// this much when full, so the largest batch the API takes can pass.
pub const BODY_LIMIT: u64 = 4 * 1024 * 1024;
/// Default report bytes per second per token: 1 MiB/s. A report that changes nothing is ~150 bytes
/// (a batch entry with its node id ~200): 2,000 agents sharing one token at the agent's default 1 s
/// interval send ~300 KB/s, a relay sending 10,000 nodes every 3 s ~670 KB/s; one agent's worst report
/// is 64 KiB.
pub const DEFAULT_BYTES_PER_SEC: u64 = 1024 * 1024;
/// Default report requests per second per token: 2,000, a fleet of 2,000 agents sharing one token at
/// the agent's default 1 s interval (a relay needs one request per batch).
pub const DEFAULT_REQUESTS_PER_SEC: u64 = 2_000;
/// Bounds of `agent_report_bytes_per_sec`.
pub const BYTES_PER_SEC_RANGE: (u64, u64) = (1024, 1024 * 1024 * 1024);
/// Bounds of `agent_reports_per_sec`.
pub const REQUESTS_PER_SEC_RANGE: (u64, u64) = (1, 1_000_000);
/// How many seconds of the rate a full bucket holds (its burst).
const BURST_SECS: u64 = 4;
/// The most tokens with an entry at once; entries whose buckets are full again are dropped first, then
/// the longest untouched.
pub const MAX_ENTRIES: usize = 10_000;
/// The most report requests one token may have in flight on one server at once: a `convoy agent` sends
/// one at a time, a relay one batch at a time; 16 agents of a fleet sharing a token may be answered at the
/// same moment, more wait out `Retry-After` (1 s).
pub const MAX_IN_FLIGHT: u32 = 16;
/// How often a summary of refusals may be logged.
const LOG_INTERVAL: Duration = Duration::from_secs(10);

/// The rates, from the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rates {
    /// Report bytes per second per token (`agent_report_bytes_per_sec`).
    pub bytes_per_sec: u64,
    /// Report requests per second per token (`agent_reports_per_sec`).
    pub requests_per_sec: u64,
}

impl Default for Rates {
    fn default() -> Self {
        Self {
            bytes_per_sec: DEFAULT_BYTES_PER_SEC,
            requests_per_sec: DEFAULT_REQUESTS_PER_SEC,
        }
    }
}

impl Rates {
    /// Bytes a full byte bucket holds: [`BURST_SECS`] of the rate, at least [`BODY_LIMIT`].
    pub fn byte_burst(&self) -> u64 {
        (self.bytes_per_sec.saturating_mul(BURST_SECS)).max(BODY_LIMIT)
    }

    /// Requests a full request bucket holds: [`BURST_SECS`] of the rate.
    pub fn request_burst(&self) -> u64 {
        self.requests_per_sec.saturating_mul(BURST_SECS)
    }
}

/// A token bucket: `level` units, refilled at `rate` per second up to `capacity`; it may go into debt
/// (below zero) when a request is charged after it was read. Time is passed in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bucket {
    level: f64,
    capacity: f64,
    rate: f64,
    at: Instant,
}

impl Bucket {
    /// A full bucket at `now`.
    pub fn full(capacity: u64, rate: u64, now: Instant) -> Self {
        Self {
            level: capacity as f64,
            capacity: capacity as f64,
            rate: rate as f64,
            at: now,
        }
    }

    /// Refills up to `now` (a `now` before the last one changes nothing).
    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.level = (self.level + elapsed * self.rate).min(self.capacity);
        self.at = self.at.max(now);
    }

    /// Takes `cost` at `now`, or answers how long until it could (nothing taken then). A cost above the
    /// capacity is taken from a full bucket (it could never fit otherwise).
    pub fn take(&mut self, cost: u64, now: Instant) -> Result<(), Duration> {
        self.refill(now);
        let need = (cost as f64).min(self.capacity);
        if self.level >= need {
            self.level -= cost as f64;
            return Ok(());
        }
        Err(Duration::from_secs_f64((need - self.level) / self.rate))
    }

    /// Takes `cost` at `now` whatever the level (it may go into debt).
    pub fn charge(&mut self, cost: u64, now: Instant) {
        self.refill(now);
        self.level -= cost as f64;
    }

    /// Whether it is full at `now` (then it is the same as no entry at all).
    pub fn is_full(&self, now: Instant) -> bool {
        let mut b = *self;
        b.refill(now);
        b.level >= b.capacity
    }

    /// Units in the bucket (for tests).
    pub fn level(&self) -> f64 {
        self.level
    }
}

/// Why a report is refused: the token, the limit it ran into, and when to come back.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "token {token:?} is over its report budget on this server ({limit}): retry after {retry_after_secs} s"
)]
pub struct RateLimited {
    /// The token's name.
    pub token: String,
    /// The limit, in words (`1048576 report bytes/s (burst 4194304)`).
    pub limit: String,
    /// Seconds until the budget would take this request (at least 1).
    pub retry_after_secs: u64,
}

impl From<RateLimited> for ApiError {
    /// 429 `rate_limited`, with `Retry-After`.
    fn from(r: RateLimited) -> Self {
        ApiError::RateLimited {
            message: r.to_string(),
            retry_after_secs: r.retry_after_secs,
        }
    }
}

/// One token's two buckets.
#[derive(Clone, Copy, Debug)]
struct Entry {
    bytes: Bucket,
    requests: Bucket,
}

/// Every token's buckets on this server, and the summary of refusals.
#[derive(Debug)]
pub struct ReportRate {
    rates: Rates,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<String, Entry>,
    /// Report requests in flight by token; a token leaves the map when its last one ends, so the map
    /// holds at most one entry per open request.
    in_flight: HashMap<String, u32>,
    refused: u64,
    first: Option<String>,
    last_line: Option<Instant>,
}

impl ReportRate {
    /// Budgets of `rates` for every token.
    pub fn new(rates: Rates) -> Self {
        Self {
            rates,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The rates.
    pub fn rates(&self) -> Rates {
        self.rates
    }

    /// Charges `token` one request and `bytes` (`None`: not known yet, then the bytes are charged later
    /// with [`ReportRate::charge`] and the request is let in while the byte bucket is not in debt) at
    /// `now`, or why not (nothing is charged then).
    pub fn admit(&self, token: &str, bytes: Option<u64>, now: Instant) -> Result<(), RateLimited> {
        let rates = self.rates;
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = inner.entry(token, rates, now);
        let mut bytes_bucket = entry.bytes;
        let byte_wait = bytes_bucket.take(bytes.unwrap_or(0), now).err();
        let mut requests_bucket = entry.requests;
        let request_wait = requests_bucket.take(1, now).err();
        let refusal = match (byte_wait, request_wait) {
            (None, None) => {
                entry.bytes = bytes_bucket;
                entry.requests = requests_bucket;
                return Ok(());
            }
            (Some(wait), _) => (
                format!(
                    "{} report bytes/s, burst {}",
                    rates.bytes_per_sec,
                    rates.byte_burst()
                ),
                wait.max(request_wait.unwrap_or_default()),
            ),
            (None, Some(wait)) => (
                format!(
                    "{} reports/s, burst {}",
                    rates.requests_per_sec,
                    rates.request_burst()
                ),
                wait,
            ),
        };
        let refused = RateLimited {
            token: clip(token).to_string(),
            limit: refusal.0,
            retry_after_secs: refusal.1.as_secs_f64().ceil().max(1.0) as u64,
        };
        if let Some(line) = inner.record_refusal(&refused, now) {
            tracing::warn!("{line}");
        }
        crate::metrics::metrics().reports_rate_limited.inc();
        Err(refused)
    }

    /// Counts one more report request of `token` in flight until the answer is dropped, or refuses it
    /// when the token already has [`MAX_IN_FLIGHT`] (nothing is counted or charged then).
    pub fn enter(self: &Arc<Self>, token: &str, now: Instant) -> Result<InFlight, RateLimited> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let count = inner.in_flight.get(token).copied().unwrap_or(0);
        if count >= MAX_IN_FLIGHT {
            let refused = RateLimited {
                token: clip(token).to_string(),
                limit: format!("{MAX_IN_FLIGHT} report requests in flight"),
                retry_after_secs: 1,
            };
            if let Some(line) = inner.record_refusal(&refused, now) {
                tracing::warn!("{line}");
            }
            crate::metrics::metrics().reports_rate_limited.inc();
            return Err(refused);
        }
        inner.in_flight.insert(token.to_string(), count + 1);
        Ok(InFlight {
            rate: self.clone(),
            token: token.to_string(),
        })
    }

    /// Report requests of `token` in flight now (for tests).
    pub fn in_flight(&self, token: &str) -> u32 {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.in_flight.get(token).copied().unwrap_or(0)
    }

    /// Charges `token` `bytes` read after the request was let in (its bucket may go into debt).
    pub fn charge(&self, token: &str, bytes: u64, now: Instant) {
        let rates = self.rates;
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.entry(token, rates, now).bytes.charge(bytes, now);
    }

    /// Tokens with an entry now (for tests and the bound).
    pub fn entries(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entries
            .len()
    }
}

/// One report request in flight, counted until it is dropped.
#[derive(Debug)]
pub struct InFlight {
    rate: Arc<ReportRate>,
    token: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut inner = self
            .rate
            .inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match inner.in_flight.get_mut(&self.token) {
            Some(n) if *n > 1 => *n -= 1,
            _ => {
                inner.in_flight.remove(&self.token);
            }
        }
    }
}

impl Inner {
    /// `token`'s entry, made full when absent; at [`MAX_ENTRIES`] full entries are dropped first, then
    /// the longest untouched.
    fn entry(&mut self, token: &str, rates: Rates, now: Instant) -> &mut Entry {
        if !self.entries.contains_key(token) && self.entries.len() >= MAX_ENTRIES {
            self.entries
                .retain(|_, e| !(e.bytes.is_full(now) && e.requests.is_full(now)));
            if self.entries.len() >= MAX_ENTRIES {
                let oldest = self
                    .entries
                    .iter()
                    .min_by_key(|(_, e)| e.bytes.at.max(e.requests.at))
                    .map(|(k, _)| k.clone());
                if let Some(oldest) = oldest {
                    self.entries.remove(&oldest);
                }
            }
        }
        self.entries
            .entry(token.to_string())
            .or_insert_with(|| Entry {
                bytes: Bucket::full(rates.byte_burst(), rates.bytes_per_sec, now),
                requests: Bucket::full(rates.request_burst(), rates.requests_per_sec, now),
            })
    }

    /// Counts one refusal; the summary line when one is due (the first at once, then one per interval).
    fn record_refusal(&mut self, refused: &RateLimited, now: Instant) -> Option<String> {
        self.refused += 1;
        if self.first.is_none() {
            self.first = Some(refused.to_string());
        }
        let due = self
            .last_line
            .is_none_or(|last| now.saturating_duration_since(last) >= LOG_INTERVAL);
        if !due {
            return None;
        }
        let line = format!(
            "refused {} node reports over a token's report budget since the last summary (first: {})",
            self.refused,
            self.first.take().unwrap_or_default()
        );
        self.last_line = Some(now);
        self.refused = 0;
        Some(line)
    }
}

/// The middleware (wrap the App with `actix_web::middleware::from_fn(report_rate::check)` inside
/// `auth::check`, which leaves the [`Caller`]): on a route needing the `Report` permission, counts the
/// request in flight and charges the caller's token before the handler reads the body; a refusal is
/// answered at once and closes the connection.
pub async fn check<B: MessageBody + 'static>(
    mut req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, actix_web::Error> {
    let Some(rate) = req.app_data::<web::Data<ReportRate>>().cloned() else {
        return pass(next, req).await;
    };
    let reports = table::lookup(
        Routes::of(req.request()),
        req.method().as_str(),
        req.match_info().as_str(),
    )
    .is_some_and(|rule| rule.need == Permission::Report);
    let token = match req.extensions().get::<Caller>() {
        Some(Caller::Token(t)) if reports => Some(t.name.clone()),
        _ => None,
    };
    let Some(token) = token else {
        return pass(next, req).await;
    };
    let length = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let now = Instant::now();
    let _in_flight = match rate.clone().into_inner().enter(&token, now) {
        Ok(counted) => counted,
        Err(refused) => return Ok(refuse(req, refused)),
    };
    if let Err(refused) = rate.admit(&token, length, now) {
        return Ok(refuse(req, refused));
    }
    if length.is_some() {
        return pass(next, req).await;
    }
    // No length: count what the handler reads, and charge it afterwards.
    let read = Arc::new(AtomicU64::new(0));
    let payload = req.take_payload();
    req.set_payload(Payload::from(Box::pin(Counted {
        inner: payload,
        read: read.clone(),
    }) as Body));
    let answer = pass(next, req).await;
    rate.charge(&token, read.load(Ordering::Relaxed), Instant::now());
    answer
}

async fn pass<B: MessageBody + 'static>(
    next: Next<B>,
    req: ServiceRequest,
) -> Result<ServiceResponse<EitherBody<B>>, actix_web::Error> {
    next.call(req)
        .await
        .map(ServiceResponse::map_into_left_body)
}

/// 429 `rate_limited` with `Retry-After`, the body unread, and `Connection: close`.
fn refuse<B>(req: ServiceRequest, refused: RateLimited) -> ServiceResponse<EitherBody<B>> {
    let mut answer = ApiError::from(refused).error_response();
    answer.head_mut().set_connection_type(ConnectionType::Close);
    req.into_response(answer).map_into_right_body()
}

/// A request body as actix-web streams it.
type Body = Pin<Box<dyn Stream<Item = Result<Bytes, actix_web::error::PayloadError>>>>;

/// A body stream that counts the bytes it yields.
struct Counted {
    inner: Payload,
    read: Arc<AtomicU64>,
}

impl Stream for Counted {
    type Item = Result<Bytes, actix_web::error::PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = Pin::new(&mut self.inner).poll_next(cx);
        if let Poll::Ready(Some(Ok(chunk))) = &polled {
            self.read.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        }
        polled
    }
}

/// At most 64 bytes of a token name, for messages.
fn clip(s: &str) -> &str {
    let mut end = s.len().min(64);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
#[path = "report_rate_test.rs"]
mod tests;
