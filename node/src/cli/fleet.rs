//! Fleet and cluster visibility: `node list|show`, `consumer show` with the version distribution,
//! `cluster status` asking every member for itself, and `version`.

use std::collections::BTreeMap;
use std::time::Duration;

use convoy_actors::domain::{text, ConsumerView};
use serde_json::{json, Value};

use super::args::{NodeCommand, Output};
use super::body::{encode, query};
use super::error::CliError;
use super::natural::natural_cmp;
use super::output::print_document;
use super::render;
use super::table::{duration, opt, Table};
use crate::client::ApiClient;

/// How long `cluster status` and `version` wait for each member.
const MEMBER_TIMEOUT: Duration = Duration::from_secs(2);

/// `key<sep>value` for each entry of the JSON object `v`, comma-separated; `-` when it has none.
fn pairs(v: &Value, sep: char, value: impl Fn(&Value) -> String) -> String {
    let pairs: Vec<String> = v
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, x)| format!("{k}{sep}{}", value(x)))
        .collect();
    if pairs.is_empty() {
        "-".into()
    } else {
        pairs.join(",")
    }
}

/// `res=v` pairs of a node's versions, `-` when it reported none.
fn versions(v: &Value) -> String {
    pairs(v, '=', |n| n.as_u64().map_or("-".into(), |n| n.to_string()))
}

/// `d-3:installing` for each active deployment holding the node.
fn phases(v: &Value) -> String {
    pairs(v, ':', |p| p.as_str().unwrap_or("?").to_string())
}

/// How long ago a node reported: `2.5s ago`, or `-` when the leader has not heard from it lately.
fn age(v: &Value) -> String {
    v.as_u64()
        .map_or_else(|| "-".to_string(), |ms| format!("{} ago", duration(ms)))
}

/// `page` (a `GET /v1/nodes` answer, in byte order of the ids) with its nodes in natural order of their
/// ids (`node-2` before `node-10`).
pub fn natural_order(mut page: Value) -> Value {
    if let Some(nodes) = page["nodes"].as_array_mut() {
        nodes.sort_by(|a, b| {
            natural_cmp(
                a["id"].as_str().unwrap_or_default(),
                b["id"].as_str().unwrap_or_default(),
            )
        });
    }
    page
}

/// The `node list` table of a `GET /v1/nodes` page (in the page's order).
pub fn node_table(page: &Value) -> String {
    let mut t = Table::new(&[
        "NODE",
        "ACTIVE",
        "LAST REPORT",
        "VERSIONS",
        "PHASES",
        "CONSUMERS",
    ]);
    let nodes = page["nodes"].as_array().cloned().unwrap_or_default();
    for n in &nodes {
        let consumers: Vec<&str> = n["consumers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        t.row([
            n["id"].as_str().unwrap_or("?").to_string(),
            if n["active"] == true { "yes" } else { "no" }.to_string(),
            age(&n["last_report_ms"]),
            versions(&n["versions"]),
            phases(&n["phases"]),
            consumers.join(","),
        ]);
    }
    let total = page["total"].as_u64().unwrap_or(nodes.len() as u64);
    let more = if (nodes.len() as u64) < total {
        format!(
            "(the first {} of {total} nodes: narrow the list with --consumer)\n",
            nodes.len()
        )
    } else {
        String::new()
    };
    format!("{}{more}", t.render())
}

/// The `node show` text of a `GET /v1/nodes/{id}` answer.
pub fn node_view(n: &Value) -> String {
    let consumers: Vec<&str> = n["consumers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut out = format!(
        "node:          {}\nactive:        {}\nlast report:   {}\nconsumers:     {}\n",
        text::escape(n["id"].as_str().unwrap_or("?")),
        if n["active"] == true { "yes" } else { "no" },
        age(&n["last_report_ms"]),
        if consumers.is_empty() {
            "-".to_string()
        } else {
            consumers.join(", ")
        },
    );
    let mut t = Table::new(&[
        "RESOURCE",
        "CURRENT",
        "TARGET",
        "DOWNLOAD",
        "INSTALL",
        "INTERESTED",
    ]);
    let resources = n["resources"].as_object().cloned().unwrap_or_default();
    let targets = n["targets"].as_object().cloned().unwrap_or_default();
    let mut names: Vec<&String> = resources.keys().chain(targets.keys()).collect();
    names.sort();
    names.dedup();
    for r in names {
        let state = &resources.get(r).cloned().unwrap_or(Value::Null);
        let target = &targets.get(r).cloned().unwrap_or(Value::Null);
        let flag = |v: &Value| match v.as_bool() {
            Some(true) => "yes",
            Some(false) => "no",
            None => "-",
        };
        t.row([
            r.clone(),
            opt(state["current"].as_u64()),
            opt(target["version"].as_u64()),
            flag(&target["download"]).to_string(),
            flag(&target["install"]).to_string(),
            flag(&state["interested"]).to_string(),
        ]);
    }
    out += &format!("\n{}", t.render());
    let logs: Vec<(&String, &str)> = resources
        .iter()
        .filter_map(|(r, state)| Some((r, state["log"].as_str()?)))
        .collect();
    if !logs.is_empty() {
        // The stdout log the agent reported; the stderr log is beside it (`<resource>.stderr.log`).
        let mut t = Table::new(&["RESOURCE", "APP LOG (stderr beside it)"]);
        for (r, log) in logs {
            t.row([r.clone(), log.to_string()]);
        }
        out += &format!("\n{}", t.render());
    }
    let phases = n["phases"].as_object().cloned().unwrap_or_default();
    if !phases.is_empty() {
        let mut t = Table::new(&["DEPLOYMENT", "PHASE"]);
        for (d, p) in &phases {
            t.row([d.clone(), p.as_str().unwrap_or("?").to_string()]);
        }
        out += &format!("\n{}", t.render());
    }
    out
}

/// `convoy node ...`.
pub async fn node(
    client: &ApiClient,
    output: Output,
    command: NodeCommand,
) -> Result<(), CliError> {
    match command {
        NodeCommand::List { consumer, list } => {
            let q = query(&[("consumer", consumer.as_deref())]);
            let path = format!("/v1/nodes{q}");
            // A consumer's nodes come in its own (ordinal) order; the whole fleet in natural order.
            let natural = consumer.is_none();
            let fetch = || async {
                let page = client.get::<Value>(&path).await?;
                Ok(if natural { natural_order(page) } else { page })
            };
            return super::list::run(client, output, list, fetch, node_table).await;
        }
        NodeCommand::Show { id } => {
            let v: Value = client.get(&format!("/v1/nodes/{}", encode(&id))).await?;
            match output {
                o if o.is_table() => out!("{}", node_view(&v)),
                o => print_document(o, &v),
            }
        }
    }
    Ok(())
}

/// Per resource: how many of the nodes run each version (`"-"`: none reported).
pub fn distribution(nodes: &[Value]) -> BTreeMap<String, BTreeMap<String, u64>> {
    let mut out: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for n in nodes {
        for (r, v) in n["versions"].as_object().into_iter().flatten() {
            let version = v.as_u64().map_or("-".to_string(), |v| v.to_string());
            *out.entry(r.clone())
                .or_default()
                .entry(version)
                .or_default() += 1;
        }
    }
    out
}

/// `consumer show`: the consumer, each node's versions and liveness, and how many nodes run each
/// version of each resource.
pub async fn consumer_show(client: &ApiClient, output: Output, name: &str) -> Result<(), CliError> {
    // Every node, subscription and hold, however many pages they take.
    let mut consumer = crate::client_pages::consumer(client, &encode(name)).await?;
    let page: Value = client
        .get(&format!("/v1/nodes?consumer={}&limit=5000", encode(name)))
        .await?;
    let nodes = page["nodes"].as_array().cloned().unwrap_or_default();
    let dist = distribution(&nodes);
    match output {
        Output::Json | Output::Yaml => {
            consumer["versions"] = json!(dist);
            print_document(output, &consumer);
        }
        Output::Table | Output::Wide => {
            if let Ok(view) = serde_json::from_value::<ConsumerView>(consumer.clone()) {
                out!("{}", render::consumer(&view));
            }
            let mut t = Table::new(&["RESOURCE", "VERSION", "NODES"]);
            for (r, versions) in &dist {
                for (v, n) in versions {
                    t.row([r.clone(), v.clone(), n.to_string()]);
                }
            }
            outln!("\n{}", t.render());
            out!("{}", node_table(&page));
        }
    }
    Ok(())
}

/// What one member says of itself, or why it could not be asked.
async fn ask(client: &ApiClient, http_addr: &str) -> Result<Value, String> {
    let url = format!("{}://{http_addr}", client.scheme());
    client
        .get_from::<Value>(&url, "/v1/cluster", MEMBER_TIMEOUT)
        .await
        .map_err(|e| match e {
            crate::client::ClientError::Unreachable { last, .. } => last,
            other => other.to_string(),
        })
}

/// Why a member is not ready (`GET /readyz` answered 503: `refused_by_peers`, `not_a_member`, ...) as
/// `{"code", "message"}`; `None` when it is ready or did not say.
async fn not_ready(client: &ApiClient, http_addr: &str) -> Option<Value> {
    let url = format!("{}://{http_addr}", client.scheme());
    match client
        .get_from::<Value>(&url, "/readyz", MEMBER_TIMEOUT)
        .await
    {
        Err(crate::client::ClientError::Api { code, message, .. }) => {
            Some(json!({"code": code, "message": message}))
        }
        _ => None,
    }
}

/// Every member as it answers for itself (`"reachable": false` and the error when it does not), with
/// `not_ready` when its `/readyz` says why it is not ready: a server its peers refuse still answers
/// `GET /v1/cluster` as a follower, but it is no working member (no role, no lag shown for it).
pub async fn member_status(client: &ApiClient) -> Result<Vec<Value>, CliError> {
    let cluster: Value = client.get("/v1/cluster").await?;
    let members = cluster["members"].as_array().cloned().unwrap_or_default();
    let answers = futures::future::join_all(members.iter().map(|m| {
        let addr = m["http_addr"].as_str().unwrap_or_default().to_string();
        async move {
            let me = ask(client, &addr).await?;
            Ok::<_, String>((me, not_ready(client, &addr).await))
        }
    }))
    .await;
    let applied: Vec<u64> = answers
        .iter()
        .filter_map(|a| a.as_ref().ok().filter(|(_, nr)| nr.is_none())?.0["last_applied"].as_u64())
        .collect();
    let top = applied.iter().copied().max().unwrap_or(0);
    Ok(members
        .iter()
        .zip(answers)
        .map(|(m, answer)| match answer {
            Ok((me, Some(why))) => json!({
                "id": m["id"], "http_addr": m["http_addr"], "reachable": true, "not_ready": why,
                "term": me["term"], "last_applied": me["last_applied"], "version": me["version"],
            }),
            Ok((me, None)) => {
                let id = me["id"].as_u64();
                let role = me["members"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|x| x["id"].as_u64() == id)
                    .map_or(Value::Null, |x| x["role"].clone());
                let applied = me["last_applied"].as_u64().unwrap_or(0);
                json!({
                    "id": m["id"], "http_addr": m["http_addr"], "reachable": true,
                    "role": role, "leader_id": me["leader_id"], "term": me["term"],
                    "last_applied": applied, "lag": top.saturating_sub(applied),
                    "version": me["version"],
                })
            }
            Err(error) => json!({
                "id": m["id"], "http_addr": m["http_addr"], "reachable": false, "error": error,
            }),
        })
        .collect())
}

/// The `cluster status` table.
pub fn status_table(members: &[Value]) -> String {
    let mut t = Table::new(&[
        "ID",
        "HTTP_ADDR",
        "STATUS",
        "ROLE",
        "TERM",
        "APPLIED",
        "LAG",
        "VERSION",
    ]);
    for m in members {
        let reachable = m["reachable"] == true;
        t.row([
            opt(m["id"].as_u64()),
            m["http_addr"].as_str().unwrap_or("-").to_string(),
            if let Some(why) = m.get("not_ready").filter(|w| w.is_object()) {
                not_ready_status(why)
            } else if reachable {
                "reachable".to_string()
            } else {
                format!("unreachable: {}", m["error"].as_str().unwrap_or("?"))
            },
            m["role"].as_str().unwrap_or("-").to_string(),
            opt(m["term"].as_u64()),
            opt(m["last_applied"].as_u64()),
            opt(m["lag"].as_u64()),
            m["version"].as_str().unwrap_or("-").to_string(),
        ]);
    }
    t.render()
}

/// The `STATUS` of a member that answers but is not ready: `refused by its peers: ...`, `not a member`.
fn not_ready_status(why: &Value) -> String {
    let message = why["message"].as_str().unwrap_or("?");
    match why["code"].as_str().unwrap_or("?") {
        "refused_by_peers" => format!("refused: {message}"),
        "not_a_member" => "not a member".to_string(),
        code => format!("not ready ({code}): {message}"),
    }
}

/// `convoy cluster status`.
pub async fn cluster_status(client: &ApiClient, output: Output) -> Result<(), CliError> {
    let members = member_status(client).await?;
    match output {
        o if o.is_table() => out!("{}", status_table(&members)),
        o => print_document(o, &json!(members)),
    }
    Ok(())
}

/// `convoy version`: this client's version and each member's.
pub async fn version(client: &ApiClient, output: Output) -> Result<(), CliError> {
    let members = member_status(client).await?;
    match output {
        Output::Json | Output::Yaml => print_document(
            output,
            &json!({"client": crate::VERSION, "servers": members
            .iter()
            .map(|m| json!({"id": m["id"], "http_addr": m["http_addr"], "version": m["version"]}))
            .collect::<Vec<_>>()}),
        ),
        Output::Table | Output::Wide => {
            outln!("client  {}", crate::VERSION);
            for m in &members {
                outln!(
                    "server {} ({})  {}",
                    opt(m["id"].as_u64()),
                    m["http_addr"].as_str().unwrap_or("-"),
                    match (m["reachable"] == true, m["version"].as_str()) {
                        (_, Some(v)) => v,
                        (true, None) => "unknown (a server older than GET /v1/cluster's version)",
                        (false, None) => "unreachable",
                    }
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "fleet_test.rs"]
mod tests;
