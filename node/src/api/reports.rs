//! Where node reports go: the leader's supervisor on this server, or the leader's HTTP API when
//! this server follows; and `POST /v1/nodes/reports`, many nodes' reports in one request.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use actix::Addr;
use actix_web::http::header::{HeaderValue, AUTHORIZATION};
use actix_web::{web, HttpRequest, HttpResponse};
use convoy_actors::domain::{
    check_name, check_report, cut_errors, node_consumers, NodeReport, ResourceReport,
};
use convoy_actors::leader::messages::{Report, ReportBatch, ReportRejected};
use convoy_actors::leader::refusals::{RefusalLog, REFUSAL_LOG_INTERVAL};
use convoy_actors::leader::{ingest_stats, Supervisor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::auth::Caller;
use super::error::ApiError;
use crate::replica::Replica;

/// The most reports one `POST /v1/nodes/reports` may carry (a consumer actor's queue bound).
pub const MAX_BATCH_REPORTS: usize = convoy_actors::leader::REPORT_QUEUE_LIMIT;

/// How a follower reaches the leader's HTTP API: the scheme and a client that trusts the
/// cluster's CA (and presents this server's certificate when servers require client certificates).
#[derive(Clone)]
pub struct Forwarder {
    /// `http` or `https`.
    pub scheme: &'static str,
    /// The client, set up for the cluster's TLS.
    pub http: reqwest::Client,
}

/// How long a forwarded request may take.
const FORWARD_TIMEOUT: Duration = Duration::from_secs(5);

impl Forwarder {
    /// Plain HTTP, for a cluster without TLS.
    pub fn plain() -> Self {
        Self {
            scheme: "http",
            http: reqwest::Client::builder()
                .timeout(FORWARD_TIMEOUT)
                .build()
                .expect("reqwest client"),
        }
    }

    /// HTTPS, trusting `files.ca` and presenting this server's own certificate.
    pub fn tls(files: &crate::tls::ServerTls) -> Result<Self, crate::tls::TlsError> {
        let http =
            crate::tls::client_builder(files.ca.as_deref(), Some((&files.cert, &files.key)))?
                .timeout(FORWARD_TIMEOUT)
                .build()
                .map_err(|e| crate::tls::TlsError::Config(e.to_string()))?;
        Ok(Self {
            scheme: "https",
            http,
        })
    }
}

/// Refused reports on this server, logged as a summary (one line per interval at most).
static REFUSALS: Mutex<RefusalLog> = Mutex::new(RefusalLog::new(REFUSAL_LOG_INTERVAL));

/// Counts (`convoy_reports_refused_total`) and, in summary, logs one refused report.
fn refused(reason: &str) {
    ingest_stats::refused();
    let line = REFUSALS
        .lock()
        .map(|mut log| log.record(Instant::now(), reason))
        .unwrap_or_default();
    if let Some(line) = line {
        tracing::warn!("{line}");
    }
}

/// A node id as the API takes it, checked at the edge with the rule of its creation (so an encoded
/// path such as `web-1%2F..%2Fapi-1` is refused here, never forwarded); 400 otherwise.
pub(crate) fn check_node_id(node: &str) -> Result<(), ApiError> {
    check_name("node", node).map_err(|e| {
        refused(&e.to_string());
        ApiError::from(e)
    })
}

/// A report as it arrives: every `error` cut to 1,024 bytes (with a marker), then checked against this
/// server's applied state (`check_report`: the resources the node may name, versions that exist, the
/// byte budget); 400 naming the limit otherwise, counted and summarised in the log.
pub(crate) fn admit(replica: &Replica, mut report: NodeReport) -> Result<NodeReport, ApiError> {
    cut_errors(&mut report);
    let checked = replica.node().read(|m| check_report(m.state(), &report));
    match checked {
        Ok(()) => Ok(report),
        Err(e) => {
            refused(&e.to_string());
            Err(ApiError::from(e))
        }
    }
}

/// `node` as one path segment: every byte but ASCII letters, digits, `-`, `_`, `.` percent-encoded
/// (ids are checked to hold only those, so this changes nothing today; it keeps a path a path).
fn encode_segment(node: &str) -> String {
    node.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Routes reports to the leader's supervisor here, or forwards them to the leader's HTTP API.
pub struct ReportGateway {
    supervisor: Addr<Supervisor>,
    forwarder: Forwarder,
}

impl ReportGateway {
    /// Routes reports to `supervisor` when this server leads, else through `forwarder`.
    pub fn new(supervisor: Addr<Supervisor>, forwarder: Forwarder) -> Self {
        Self {
            supervisor,
            forwarder,
        }
    }

    /// Hands one report to the leader's consumer actor; from a follower, forwards `body` to the
    /// leader's `POST /v1/nodes/{id}/report` with the caller's `Authorization` header (the leader checks
    /// the token again, and names the report's sender, `by`, from it).
    pub async fn ingest<B: Serialize>(
        &self,
        replica: &Replica,
        report: NodeReport,
        body: &B,
        auth: Option<&HeaderValue>,
    ) -> Result<(), ApiError> {
        let node = report.node.clone();
        let answer = self
            .supervisor
            .send(Report(report))
            .await
            .map_err(|e| ApiError::Internal(format!("supervisor unavailable: {e}")))?;
        match answer {
            Ok(()) => {
                crate::metrics::metrics().reports.inc();
                Ok(())
            }
            Err(busy @ ReportRejected::Busy { .. }) => {
                crate::metrics::metrics().reports_busy.inc();
                Err(ApiError::Unavailable(busy.to_string()))
            }
            Err(invalid @ ReportRejected::Invalid { .. }) => {
                Err(ApiError::BadRequest(invalid.to_string()))
            }
            Err(ReportRejected::NotLeader) => self
                .forward(
                    replica,
                    &format!("/v1/nodes/{}/report", encode_segment(&node)),
                    body,
                    auth,
                )
                .await
                .map(drop),
        }
    }

    /// Sends `body` to the same endpoint on the leader; its answer's bytes on success. The leader's 401
    /// and 403 pass through as they are (a token revoked there first).
    async fn forward<B: Serialize>(
        &self,
        replica: &Replica,
        path: &str,
        body: &B,
        auth: Option<&HeaderValue>,
    ) -> Result<web::Bytes, ApiError> {
        let Some((leader, member)) = replica.node().leader() else {
            return Err(ApiError::Unavailable("no leader is known yet".into()));
        };
        if leader == replica.node().id() {
            return Err(ApiError::Unavailable(
                "leadership is changing; retry".into(),
            ));
        }
        let url = format!("{}://{}{path}", self.forwarder.scheme, member.http_addr);
        let mut request = self.forwarder.http.post(&url).json(body);
        if let Some(auth) = auth {
            request = request.header(reqwest::header::AUTHORIZATION, auth.as_bytes());
        }
        let response = request.send().await.map_err(|e| {
            ApiError::Unavailable(format!(
                "cannot forward reports to leader {leader} at {url}: {e}"
            ))
        })?;
        let status = response.status();
        if status.as_u16() == 401 || status.as_u16() == 403 {
            let body: serde_json::Value = response.json().await.unwrap_or_default();
            let message = body["error"]["message"]
                .as_str()
                .unwrap_or("refused")
                .to_string();
            return Err(if status.as_u16() == 401 {
                ApiError::Unauthenticated(format!("leader {leader}: {message}"))
            } else {
                ApiError::Forbidden(format!("leader {leader}: {message}"))
            });
        }
        if status.as_u16() == 429 {
            // The leader charges the token too: its refusal and its Retry-After pass through.
            let retry_after_secs = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(1)
                .clamp(1, 3_600);
            let body: serde_json::Value = response.json().await.unwrap_or_default();
            let message = body["error"]["message"].as_str().unwrap_or("rate limited");
            return Err(ApiError::RateLimited {
                message: format!("leader {leader}: {message}"),
                retry_after_secs,
            });
        }
        if status.as_u16() == 400 {
            let body: serde_json::Value = response.json().await.unwrap_or_default();
            let message = body["error"]["message"].as_str().unwrap_or("refused");
            return Err(ApiError::BadRequest(format!("leader {leader}: {message}")));
        }
        if !status.is_success() {
            return Err(ApiError::Unavailable(format!(
                "leader {leader} refused the reports: {status}"
            )));
        }
        response.bytes().await.map_err(|e| {
            ApiError::Unavailable(format!("leader {leader} answer cut short at {url}: {e}"))
        })
    }
}

impl ReportGateway {
    /// On the leader: how many ms ago each node last reported (`None` per node not heard from since
    /// this leader started or for longer than the node timeout); `None` on a follower.
    pub async fn last_reports(&self, nodes: Vec<String>) -> Option<Vec<Option<u64>>> {
        self.supervisor
            .send(convoy_actors::leader::messages::LastReports(nodes))
            .await
            .ok()
            .flatten()
    }

    /// From a follower: the leader's answer to `GET path_and_query` (with the caller's
    /// `Authorization`), as bytes; `None` when there is no leader or it does not answer 200.
    pub async fn leader_get(
        &self,
        replica: &Replica,
        path_and_query: &str,
        auth: Option<&HeaderValue>,
    ) -> Option<web::Bytes> {
        let (leader, member) = replica.node().leader()?;
        if leader == replica.node().id() {
            return None;
        }
        let url = format!(
            "{}://{}{path_and_query}",
            self.forwarder.scheme, member.http_addr
        );
        let mut request = self.forwarder.http.get(&url);
        if let Some(auth) = auth {
            request = request.header(reqwest::header::AUTHORIZATION, auth.as_bytes());
        }
        let response = request.send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        response.bytes().await.ok()
    }
}

/// `POST /v1/nodes/reports` body: each entry is what `POST /v1/nodes/{id}/report` takes, plus
/// the node's id.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchBody {
    reports: Vec<BatchEntry>,
}

/// One node's report in a batch.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BatchEntry {
    node: String,
    #[serde(default)]
    active: Option<bool>,
    #[serde(default)]
    resources: BTreeMap<String, ResourceReport>,
}

/// The answer: every reporting node's targets; the nodes whose report was not taken (a full queue,
/// leadership changing) with the reason — they send it again, nothing else is lost.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct BatchAnswer {
    targets: BTreeMap<String, BTreeMap<String, convoy_actors::domain::Target>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    rejected: BTreeMap<String, String>,
}

/// Refuses an empty or invalid node id (the rule of its creation), a node twice and more than
/// [`MAX_BATCH_REPORTS`] reports.
fn check_batch(body: &BatchBody) -> Result<(), ApiError> {
    if body.reports.len() > MAX_BATCH_REPORTS {
        return Err(ApiError::BadRequest(format!(
            "{} reports in one request; at most {MAX_BATCH_REPORTS}",
            body.reports.len()
        )));
    }
    let mut seen = BTreeSet::new();
    for (i, entry) in body.reports.iter().enumerate() {
        if entry.node.is_empty() {
            return Err(ApiError::BadRequest(format!("reports[{i}].node is empty")));
        }
        check_node_id(&entry.node).map_err(|e| match e {
            ApiError::BadRequest(m) => ApiError::BadRequest(format!("reports[{i}].node: {m}")),
            other => other,
        })?;
        if !seen.insert(entry.node.as_str()) {
            return Err(ApiError::BadRequest(format!(
                "node {:?} reports twice (reports[{i}]); send one report per node",
                entry.node
            )));
        }
    }
    Ok(())
}

/// `POST /v1/nodes/reports`: many nodes' reports in one request (a relay, a simulated fleet).
pub async fn report_batch(
    replica: web::Data<Replica>,
    reports: web::Data<ReportGateway>,
    caller: Caller,
    req: HttpRequest,
    body: web::Json<BatchBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    check_batch(&body)?;
    for entry in &body.reports {
        caller.check_report(&entry.node)?;
    }
    if let Caller::Token(t) = &caller {
        if !t.consumers.is_empty() {
            let scopes: Vec<Vec<String>> = replica.node().read(|m| {
                body.reports
                    .iter()
                    .map(|e| node_consumers(m.state(), &e.node))
                    .collect()
            });
            for (entry, consumers) in body.reports.iter().zip(&scopes) {
                caller.check_report_scope(&entry.node, consumers)?;
            }
        }
    }
    // Each report is checked alone where it arrives: one out of bounds is refused (in `rejected`) and
    // the others go on.
    let mut refused_here: BTreeMap<String, String> = BTreeMap::new();
    let mut batch: Vec<NodeReport> = Vec::with_capacity(body.reports.len());
    for e in body.reports {
        let report = NodeReport {
            node: e.node,
            active: e.active,
            resources: e.resources,
            by: caller.actor(),
        };
        let node = report.node.clone();
        match admit(&replica, report) {
            Ok(report) => batch.push(report),
            Err(e) => {
                refused_here.insert(node, e.to_string());
            }
        }
    }
    if !replica.node().is_leader() {
        let auth = req.headers().get(AUTHORIZATION);
        let body = BatchBody {
            reports: batch
                .into_iter()
                .map(|r| BatchEntry {
                    node: r.node,
                    active: r.active,
                    resources: r.resources,
                })
                .collect(),
        };
        let bytes = reports
            .forward(&replica, "/v1/nodes/reports", &body, auth)
            .await?;
        if refused_here.is_empty() {
            return Ok(HttpResponse::Ok()
                .content_type("application/json")
                .body(bytes));
        }
        let mut answer: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| ApiError::Unavailable(format!("the leader's answer is not JSON: {e}")))?;
        let targets: Vec<(String, Value)> = replica.node().read(|m| {
            refused_here
                .keys()
                .map(|n| {
                    (
                        n.clone(),
                        serde_json::to_value(m.state().targets(n)).unwrap_or_default(),
                    )
                })
                .collect()
        });
        for (node, targets) in targets {
            answer["targets"][node] = targets;
        }
        for (node, why) in refused_here {
            answer["rejected"][node] = why.into();
        }
        return Ok(HttpResponse::Ok().json(answer));
    }
    let nodes: Vec<String> = batch.iter().map(|r| r.node.clone()).collect();
    // Every node named gets its targets, the refused ones too (what they should do is not their report).
    let answered: Vec<String> = nodes.iter().chain(refused_here.keys()).cloned().collect();
    let answers = reports
        .supervisor
        .send(ReportBatch(batch))
        .await
        .map_err(|e| ApiError::Internal(format!("supervisor unavailable: {e}")))?;
    let rejected: BTreeMap<String, String> = nodes
        .iter()
        .zip(&answers)
        .filter_map(|(node, answer)| match answer {
            Ok(()) => {
                crate::metrics::metrics().reports.inc();
                None
            }
            // Leadership moved while the batch was being taken: the relay sends these again.
            Err(ReportRejected::NotLeader) => {
                Some((node.clone(), "leadership is changing; retry".into()))
            }
            Err(invalid @ ReportRejected::Invalid { .. }) => {
                Some((node.clone(), invalid.to_string()))
            }
            Err(busy) => {
                crate::metrics::metrics().reports_busy.inc();
                Some((node.clone(), busy.to_string()))
            }
        })
        .chain(refused_here)
        .collect();
    let targets = replica.node().read(|m| {
        answered
            .into_iter()
            .map(|node| {
                let targets = m.state().targets(&node);
                (node, targets)
            })
            .collect()
    });
    Ok(HttpResponse::Ok().json(BatchAnswer { targets, rejected }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(nodes: &[&str]) -> BatchBody {
        BatchBody {
            reports: nodes
                .iter()
                .map(|n| BatchEntry {
                    node: n.to_string(),
                    active: None,
                    resources: BTreeMap::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn a_batch_names_its_empty_or_repeated_node() {
        assert_eq!(check_batch(&body(&["a", "b"])), Ok(()));
        assert_eq!(check_batch(&body(&[])), Ok(()));
        let empty = check_batch(&body(&["a", ""])).unwrap_err();
        assert_eq!(
            empty,
            ApiError::BadRequest("reports[1].node is empty".into())
        );
        let twice = check_batch(&body(&["a", "b", "a"])).unwrap_err();
        assert!(
            twice.to_string().contains("\"a\"") && twice.to_string().contains("reports[2]"),
            "{twice}"
        );
    }

    #[test]
    fn a_batch_over_the_limit_says_both_numbers() {
        let names: Vec<String> = (0..=MAX_BATCH_REPORTS).map(|i| format!("n{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let err = check_batch(&body(&refs)).unwrap_err().to_string();
        assert!(err.contains("10001") && err.contains("10000"), "{err}");
    }
}
