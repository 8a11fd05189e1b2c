//! Maps command-line arguments to the JSON bodies of the API (API.md), refusing contradictory flags.

use std::collections::BTreeMap;

use convoy_actors::domain::{
    Artifact, Completion, Dependency, FailedNodes, Gate, Member, OnTimeout, Pacing, Strategy,
    SubscriptionView,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::args::{
    CompletionArgs, GateArg, ModeArg, OnTimeoutArg, PacingArgs, PublishArgs, StartArgs,
    StrategyArgs, StrategyKind, SubscribeArgs,
};
use super::error::CliError;

/// The body of `POST /v1/deployments`; also the schema of a `deploy.toml` file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartRequest {
    /// The consumer to deploy to (the positional argument, else the file's); empty until given.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub consumer: String,
    /// The resource to deploy (the positional argument, else the file's); empty until given.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource: String,
    /// The version to roll out; absent: the server selects one (pin, else the newest allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// How nodes are admitted; absent: the subscription's strategy, else rolling (install 1,
    /// download 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Strategy>,
    /// Ordinal ranges of the consumer's nodes to deploy to (`0-1,5`); absent: every node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    /// Watch time (ms) a healthy node waits out before it succeeds; absent: the subscription's,
    /// else 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_healthy_ms: Option<u64>,
    /// Retries per node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_failures_per_node: Option<u32>,
    /// Failed nodes tolerated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_failed_nodes: Option<FailedNodes>,
    /// Roll back on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_on_failure: Option<bool>,
    /// Coordinated when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pulse_interval_ms: Option<u64>,
    /// When the deployment may end before every node finished (quorum, timeout); absent: the
    /// subscription's, else every node and no timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion: Option<Completion>,
    /// Bake time, node and progress deadlines, confirmation gates (DEPLOYMENTS.md §14); absent: the
    /// subscription's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<Pacing>,
    /// Why, recorded on the deployment's creation event (at most 1024 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Deploy a version held back on the consumer (DEPLOYMENTS.md §10), lifting the hold.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force: bool,
    /// Spread the first admissions over this duration (`"30s"`; DEPLOYMENTS.md §16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_jitter: Option<String>,
}

/// The strategy the flags describe, if any.
pub fn strategy(args: &StrategyArgs) -> Result<Option<Strategy>, CliError> {
    let rolling_flags = args.install_window.is_some() || args.download_window.is_some();
    let batch_flags = !args.batch_sizes.is_empty() || args.autopause;
    if args.fail_fast && !matches!(args.strategy, Some(StrategyKind::AllAtOnce)) {
        return Err(CliError::invalid(
            "--fail-fast",
            "true",
            "--fail-fast needs --strategy all-at-once",
        ));
    }
    let kind = match args.strategy {
        Some(kind) => kind,
        None if rolling_flags && batch_flags => {
            return Err(CliError::invalid(
                "--batch-sizes",
                join(&args.batch_sizes),
                "rolling windows and batch sizes belong to different strategies",
            ))
        }
        None if rolling_flags => StrategyKind::Rolling,
        None if batch_flags => StrategyKind::Batch,
        None => return Ok(None),
    };
    let name = match kind {
        StrategyKind::AllAtOnce => "all-at-once",
        StrategyKind::Rolling => "rolling",
        StrategyKind::Batch => "batch",
    };
    match kind {
        StrategyKind::AllAtOnce | StrategyKind::Batch if rolling_flags => Err(CliError::invalid(
            "--strategy",
            name,
            "--install-window and --download-window need --strategy rolling",
        )),
        StrategyKind::AllAtOnce | StrategyKind::Rolling if batch_flags => Err(CliError::invalid(
            "--strategy",
            name,
            "--batch-sizes and --autopause need --strategy batch",
        )),
        StrategyKind::AllAtOnce => Ok(Some(Strategy::AllAtOnce {
            fail_fast: args.fail_fast,
        })),
        StrategyKind::Rolling => {
            let install_window = args.install_window.ok_or_else(|| {
                CliError::invalid("--strategy", "rolling", "give --install-window N")
            })?;
            Ok(Some(Strategy::Rolling {
                install_window,
                download_window: args.download_window.unwrap_or(install_window),
            }))
        }
        StrategyKind::Batch if args.batch_sizes.is_empty() => Err(CliError::invalid(
            "--strategy",
            "batch",
            "give --batch-sizes N[,N...]",
        )),
        StrategyKind::Batch => Ok(Some(Strategy::Batch {
            sizes: args.batch_sizes.clone(),
            autopause: args.autopause,
        })),
    }
}

fn join(sizes: &[u32]) -> String {
    sizes
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The completion conditions the flags describe, if any.
pub fn completion(args: &CompletionArgs) -> Option<Completion> {
    let on_timeout = match args.on_timeout {
        Some(OnTimeoutArg::Fail) => OnTimeout::Fail,
        Some(OnTimeoutArg::Finish) | None => OnTimeout::Finish,
    };
    (args.quorum.is_some() || args.timeout_ms.is_some() || args.on_timeout.is_some()).then_some(
        Completion {
            quorum: args.quorum,
            timeout_ms: args.timeout_ms,
            on_timeout,
        },
    )
}

/// `POST /v1/resources/{name}/versions`.
pub fn publish(args: &PublishArgs) -> Value {
    let mut body = serde_json::Map::new();
    if let Some(label) = &args.label {
        body.insert("label".into(), json!(label));
    }
    if let Some(url) = &args.url {
        let artifact = Artifact {
            url: url.clone(),
            sha256: args.sha256.clone(),
            size: args.size,
        };
        body.insert("artifact".into(), json!(artifact));
        if args.unchecked {
            body.insert("unchecked".into(), json!(true));
        }
    }
    if !args.metadata.is_empty() {
        let metadata: BTreeMap<&str, &str> = args
            .metadata
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        body.insert("metadata".into(), json!(metadata));
    }
    if !args.depends_on.is_empty() {
        let deps: &[Dependency] = &args.depends_on;
        body.insert("depends_on".into(), json!(deps));
    }
    if let Some(port) = args.health_port {
        body.insert("health_port".into(), json!(port));
    }
    Value::Object(body)
}

/// The body of `PUT` (a new subscription: `existing` is `None`) or `PATCH` (an existing one) of
/// `/v1/consumers/{name}/subscriptions/{resource}`: only the fields given by flags, plus `null` for each
/// `--clear`ed field. On a PATCH the completion flags merge into the existing completion conditions.
pub fn subscribe(
    args: &SubscribeArgs,
    existing: Option<&SubscriptionView>,
) -> Result<Value, CliError> {
    let mut body = serde_json::Map::new();
    if let Some(mode) = args.mode {
        let mode = match mode {
            ModeArg::Weak => "weak",
            ModeArg::Strong => "strong",
        };
        body.insert("mode".into(), json!(mode));
    }
    if let Some(strategy) = strategy(&args.strategy)? {
        body.insert("strategy".into(), json!(strategy));
    }
    if let Some(pin) = args.pin {
        body.insert("pin".into(), json!(pin));
    }
    if let Some(mut c) = completion(&args.completion) {
        if let Some(old) = existing.and_then(|s| s.completion.as_ref()) {
            c.quorum = c.quorum.or(old.quorum);
            c.timeout_ms = c.timeout_ms.or(old.timeout_ms);
            if args.completion.on_timeout.is_none() {
                c.on_timeout = old.on_timeout;
            }
        }
        body.insert("completion".into(), json!(c));
    }
    if let Some(ms) = args.min_healthy_ms {
        body.insert("min_healthy_ms".into(), json!(ms));
    }
    if let Some(n) = args.max_failures_per_node {
        body.insert("max_failures_per_node".into(), json!(n));
    }
    if let Some(n) = args.max_failed_nodes {
        body.insert("max_failed_nodes".into(), json!(n));
    }
    if args.no_rollback {
        body.insert("rollback_on_failure".into(), json!(false));
    }
    if let Some(ms) = args.pulse_interval_ms {
        body.insert("pulse_interval_ms".into(), json!(ms));
    }
    if args.no_brake {
        body.insert("brake".into(), json!({"enabled": false}));
    } else if args.brake_max_failed.is_some() || args.brake_window.is_some() {
        // The brake is replaced as a whole: what no flag gives keeps the existing brake's value.
        let old = existing.and_then(|s| s.brake).unwrap_or_default();
        let brake = convoy_actors::domain::Brake {
            enabled: true,
            max_failed: args.brake_max_failed.unwrap_or(old.max_failed),
            window_ms: args.brake_window.unwrap_or(old.window_ms),
            ..old
        };
        body.insert("brake".into(), json!(brake));
    }
    for field in &args.clear {
        let name = field.json_name();
        if body.contains_key(name) {
            return Err(CliError::invalid(
                "--clear",
                name,
                "this field is also set by another flag",
            ));
        }
        body.insert(name.into(), Value::Null);
    }
    Ok(Value::Object(body))
}

/// `PUT /v1/consumers/{name}/nodes`.
pub fn update_nodes(add: &[String], remove: &[String]) -> Result<Value, CliError> {
    if add.is_empty() && remove.is_empty() {
        return Err(CliError::invalid(
            "NODE",
            "",
            "give nodes to add and/or --remove NODE",
        ));
    }
    Ok(json!({"add": add, "remove": remove}))
}

/// `POST /v1/deployments`: the file's request (if any) overridden by the flags given.
pub fn start(args: &StartArgs, file: Option<StartRequest>) -> Result<StartRequest, CliError> {
    let mut req = file.unwrap_or_default();
    if let Some(c) = &args.consumer {
        req.consumer = c.clone();
    }
    if let Some(r) = &args.resource {
        req.resource = r.clone();
    }
    if req.consumer.is_empty() {
        return Err(CliError::Missing { what: "consumer" });
    }
    if req.resource.is_empty() {
        return Err(CliError::Missing { what: "resource" });
    }
    let set = |field: &mut Option<u64>, value: Option<u64>| {
        if value.is_some() {
            *field = value;
        }
    };
    set(&mut req.version, args.version);
    set(&mut req.min_healthy_ms, args.min_healthy_ms);
    set(&mut req.pulse_interval_ms, args.pulse_interval_ms);
    if let Some(s) = strategy(&args.strategy)? {
        req.strategy = Some(s);
    }
    if args.nodes.is_some() {
        req.nodes = args.nodes.clone();
    }
    if args.max_failures_per_node.is_some() {
        req.max_failures_per_node = args.max_failures_per_node;
    }
    if args.max_failed_nodes.is_some() {
        req.max_failed_nodes = args.max_failed_nodes;
    }
    if args.no_rollback {
        req.rollback_on_failure = Some(false);
    }
    if let Some(c) = completion(&args.completion) {
        let mut merged = req.completion.take().unwrap_or_default();
        merged.quorum = c.quorum.or(merged.quorum);
        merged.timeout_ms = c.timeout_ms.or(merged.timeout_ms);
        if args.completion.on_timeout.is_some() {
            merged.on_timeout = c.on_timeout;
        }
        req.completion = Some(merged);
    }
    pacing(&args.pacing, &mut req.pacing);
    if args.message.is_some() {
        req.message = args.message.clone();
    }
    req.force |= args.force;
    if args.start_jitter.is_some() {
        req.start_jitter = args.start_jitter.clone();
    }
    Ok(req)
}

/// Merges the pacing flags given into `pacing` (the file's, if any): each flag overrides its key.
fn pacing(args: &PacingArgs, pacing: &mut Option<Pacing>) {
    let given = args.bake_ms.is_some()
        || args.healthy_deadline_ms.is_some()
        || args.download_deadline_ms.is_some()
        || args.progress_deadline_ms.is_some()
        || !args.confirm.is_empty();
    if !given {
        return;
    }
    let p = pacing.get_or_insert_with(Pacing::default);
    p.bake_ms = args.bake_ms.or(p.bake_ms);
    p.healthy_deadline_ms = args.healthy_deadline_ms.or(p.healthy_deadline_ms);
    p.download_deadline_ms = args.download_deadline_ms.or(p.download_deadline_ms);
    p.progress_deadline_ms = args.progress_deadline_ms.or(p.progress_deadline_ms);
    if !args.confirm.is_empty() {
        p.confirm = args
            .confirm
            .iter()
            .map(|g| match g {
                GateArg::BeforeStart => Gate::BeforeStart,
                GateArg::BeforeEachBatch => Gate::BeforeEachBatch,
                GateArg::BeforePromotion => Gate::BeforePromotion,
            })
            .collect();
    }
}

/// `POST /v1/groups`.
pub fn create_group(name: &str, members: &[Member]) -> Value {
    json!({"name": name, "members": members})
}

/// `POST /v1/group-deployments`.
pub fn group_deploy(name: &str, versions: &[(String, u64)]) -> Result<Value, CliError> {
    let mut table = BTreeMap::new();
    for (resource, version) in versions {
        if table.insert(resource.as_str(), *version).is_some() {
            return Err(CliError::invalid(
                "--version",
                format!("{resource}={version}"),
                "this resource is given twice",
            ));
        }
    }
    if table.is_empty() {
        Ok(json!({"group": name}))
    } else {
        Ok(json!({"group": name, "versions": table}))
    }
}

/// `?key=value&...` from the pairs whose value is set, percent-encoded.
pub fn query(pairs: &[(&str, Option<&str>)]) -> String {
    let parts: Vec<String> = pairs
        .iter()
        .filter_map(|(k, v)| v.map(|v| format!("{k}={}", encode(v))))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

/// Percent-encodes a path segment or query value.
pub fn encode(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for b in raw.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
#[path = "body_test.rs"]
mod tests;
