//! Every route's real answers against the OpenAPI document the server serves: a real server with token auth
//! on is driven through every operation of `/openapi.json` (reads, writes with valid bodies, dry runs, streams,
//! static files) and through refusals (400, 401, 403, 404, 409, 415); each answer's status must be one the spec
//! declares for that operation, its media type the declared one, and a JSON body must validate against the
//! declared schema (errors all against the one shared error schema). A stream's events (`{event, id, data}`)
//! must each match the item schema its answer declares (`x-itemSchema`), and their `data` the JSON schema the
//! event's name is given there; every event of both streams is seen at least once.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::{eventually, Cluster, ClusterOptions};

use crate::openapi_probe::{check_event, Probe};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_answers_as_the_spec_says() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(1).with_auth()).await?;
    let server = cluster.server(1);
    let admin = std::fs::read_to_string(cluster.dir().join("admin-token"))
        .context("the harness writes the admin token")?
        .trim()
        .to_string();
    let base = format!("http://{}", server.http_addr);
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let spec: Value = http
        .get(format!("{base}/openapi.json"))
        .send()
        .await?
        .json()
        .await?;
    let mut p = Probe {
        base,
        admin,
        spec,
        http,
        seen: BTreeSet::new(),
        checked: 0,
        events: BTreeSet::new(),
        kept: None,
    };

    // Readiness first: the bootstrap token must be applied before anything else.
    let ready = eventually(Duration::from_secs(30), || {
        let probe = p
            .http
            .get(format!("{}/v1/whoami", p.base))
            .bearer_auth(p.admin.clone());
        async move {
            probe
                .send()
                .await
                .ok()
                .filter(|r| r.status() == 200)
                .map(drop)
        }
    })
    .await;
    ensure!(ready.is_ok(), "the bootstrap token never worked");

    // Public and cluster routes.
    p.call("GET", "/healthz", None, None, 200).await?;
    p.call("GET", "/readyz", None, None, 200).await?;
    p.call("GET", "/", None, None, 302).await?;
    for asset in convoy_node::api::ui::ASSETS {
        p.call("GET", asset.path, None, None, 200).await?;
    }
    p.call("GET", "/openapi.json", None, None, 200).await?;
    p.admin("GET", "/v1/whoami", None, 200).await?;
    p.admin("GET", "/v1/watch", None, 200).await?;
    p.admin("GET", "/metrics", None, 200).await?;
    p.admin("GET", "/v1/cluster", None, 200).await?;
    p.admin("GET", "/v1/cluster/digest", None, 200).await?;
    p.call("GET", "/v1/cluster/membership/1", None, None, 200)
        .await?;
    p.admin("POST", "/v1/debug/faults", Some(json!({})), 200)
        .await?;
    p.admin("POST", "/v1/cluster/members", Some(json!({"id": 1})), 400)
        .await?;
    p.admin("DELETE", "/v1/cluster/members/x", None, 400)
        .await?;
    p.admin(
        "POST",
        "/v1/cluster/members/42/replace",
        Some(json!({})),
        400,
    )
    .await?;

    // Tokens; a reader for the 403s.
    let reader = p
        .admin(
            "POST",
            "/v1/tokens",
            Some(json!({"name": "viewer", "role": "reader"})),
            201,
        )
        .await?["secret"]
        .as_str()
        .context("a secret")?
        .to_string();
    p.admin(
        "POST",
        "/v1/tokens",
        Some(json!({"name": "viewer", "role": "reader"})),
        409,
    )
    .await?;
    p.admin("GET", "/v1/tokens", None, 200).await?;

    // Resources and versions.
    p.admin("POST", "/v1/resources", Some(json!({"name": "app"})), 201)
        .await?;
    p.admin("POST", "/v1/resources", Some(json!({"name": "app"})), 409)
        .await?;
    p.admin(
        "POST",
        "/v1/resources",
        Some(json!({"name": "app", "x": 1})),
        400,
    )
    .await?;
    p.admin("GET", "/v1/resources", None, 200).await?;
    p.admin("GET", "/v1/resources/app", None, 200).await?;
    p.admin("GET", "/v1/resources/app?offset=1&limit=1", None, 200)
        .await?;
    p.admin("GET", "/v1/resources/app?limit=1001", None, 400)
        .await?;
    p.admin("GET", "/v1/resources/nope", None, 404).await?;
    for _ in 0..3 {
        p.admin(
            "POST",
            "/v1/resources/app/versions",
            Some(json!({"metadata": {"k": "v"}})),
            201,
        )
        .await?;
    }
    p.admin(
        "POST",
        "/v1/resources/app/versions?dry_run=true",
        Some(json!({"label": "maybe"})),
        200,
    )
    .await?;
    p.admin(
        "POST",
        "/v1/resources/app/versions/3/retract",
        Some(json!({"message": "bad"})),
        200,
    )
    .await?;
    p.admin(
        "POST",
        "/v1/resources/app/versions/3/unretract",
        Some(json!({})),
        200,
    )
    .await?;

    // Consumers, nodes and reports.
    p.admin(
        "POST",
        "/v1/consumers",
        Some(json!({"name": "web", "nodes": ["n1", "n2"]})),
        201,
    )
    .await?;
    p.admin(
        "PUT",
        "/v1/consumers/web/nodes",
        Some(json!({"add": ["n3"]})),
        200,
    )
    .await?;
    p.admin(
        "PUT",
        "/v1/consumers/web/subscriptions/app",
        Some(json!({"mode": "weak", "pin": 1})),
        200,
    )
    .await?;
    p.admin(
        "PATCH",
        "/v1/consumers/web/subscriptions/app",
        Some(json!({"pin": null, "max_failed_nodes": "50%"})),
        200,
    )
    .await?;
    p.admin("GET", "/v1/consumers", None, 200).await?;
    p.admin("GET", "/v1/consumers/web", None, 200).await?;
    p.admin("GET", "/v1/consumers/web?offset=0&limit=1", None, 200)
        .await?;
    p.admin("GET", "/v1/consumers/web?limit=0", None, 400)
        .await?;
    p.admin("GET", "/v1/consumers/web/subscriptions", None, 200)
        .await?;
    p.admin("GET", "/v1/consumers/nope/subscriptions", None, 404)
        .await?;
    p.admin("GET", "/v1/consumers/web/holds", None, 200).await?;
    p.admin("GET", "/v1/consumers/web/holds?offset=x", None, 400)
        .await?;
    // A disruption budget, set, read, refused, shown in the consumer and removed before anything rolls.
    let budget = "/v1/consumers/web/budget";
    p.admin("GET", budget, None, 404).await?;
    p.admin("PUT", budget, Some(json!({"max_unavailable": "50%"})), 200)
        .await?;
    p.admin("GET", budget, None, 200).await?;
    p.admin(
        "PUT",
        budget,
        Some(json!({"max_unavailable": 1, "min_available": 1})),
        400,
    )
    .await?;
    p.admin(
        "PUT",
        "/v1/consumers/nope/budget",
        Some(json!({"min_available": 1})),
        404,
    )
    .await?;
    p.admin("GET", "/v1/consumers/web", None, 200).await?;
    p.admin("DELETE", budget, None, 200).await?;
    p.admin("DELETE", budget, None, 404).await?;
    // A maintenance window that applies to nothing here, listed, shown, refused and deleted.
    let window = json!({"name": "nights", "kind": "allow", "schedule": "0 22 * * *", "duration": "2h",
                        "time_zone": "Europe/Berlin", "applies_to": {"consumers": ["elsewhere"]}});
    p.admin("POST", "/v1/windows", Some(window.clone()), 201)
        .await?;
    p.admin("POST", "/v1/windows", Some(window), 409).await?;
    let bad = json!({"name": "bad", "kind": "deny", "schedule": "0 25 * * *", "duration": "1h"});
    p.admin("POST", "/v1/windows", Some(bad), 400).await?;
    p.admin("GET", "/v1/windows", None, 200).await?;
    p.admin("GET", "/v1/windows/nights", None, 200).await?;
    p.admin("GET", "/v1/windows/none", None, 404).await?;
    p.admin("DELETE", "/v1/windows/nights", None, 200).await?;
    p.admin("DELETE", "/v1/windows/nights", None, 404).await?;
    // The fleet-wide limits: read, set, refused over the bound, and lifted again before anything rolls.
    p.admin("GET", "/v1/cluster/limits", None, 200).await?;
    let limits = json!({"max_concurrent_installs": 5, "max_concurrent_downloads": 10});
    p.admin("PUT", "/v1/cluster/limits", Some(limits), 200)
        .await?;
    let over = json!({"max_concurrent_installs": 2_000_000});
    p.admin("PUT", "/v1/cluster/limits", Some(over), 400)
        .await?;
    p.admin("PUT", "/v1/cluster/limits", Some(json!({})), 200)
        .await?;
    let progress = json!({"downloaded": true, "installed": true, "done": true});
    let report = |v: u64| json!({"active": true, "resources": {"app": {"current": v, "versions": {v.to_string(): progress.clone()}}}});
    p.admin("POST", "/v1/nodes/n1/report", Some(report(1)), 200)
        .await?;
    let batch = json!({"reports": [{"node": "n2", "active": true, "resources": report(1)["resources"].clone()},
                                   {"node": "n3", "active": true, "resources": report(1)["resources"].clone()}]});
    p.admin("POST", "/v1/nodes/reports", Some(batch), 200)
        .await?;
    p.admin("GET", "/v1/nodes", None, 200).await?;
    p.admin("GET", "/v1/nodes?consumer=web&limit=2", None, 200)
        .await?;
    p.admin("GET", "/v1/nodes/n1", None, 200).await?;
    p.admin("GET", "/v1/nodes/nope", None, 404).await?;
    p.admin("GET", "/v1/nodes?limit=0", None, 400).await?;

    // Deployments.
    let start = json!({"consumer": "web", "resource": "app", "version": 2,
                       "strategy": {"rolling": {"install_window": 1, "download_window": 2}},
                       "max_failed_nodes": 1, "completion": {"quorum": 1.0}, "pulse_interval_ms": 600000});
    p.admin(
        "POST",
        "/v1/deployments?dry_run=true",
        Some(start.clone()),
        200,
    )
    .await?;
    let id = p
        .admin("POST", "/v1/deployments", Some(start.clone()), 201)
        .await?["id"]
        .as_str()
        .context("an id")?
        .to_string();
    p.admin("POST", "/v1/deployments", Some(start), 409).await?;
    p.admin(
        "POST",
        "/v1/deployments",
        Some(json!({"consumer": "web", "resource": "nope"})),
        404,
    )
    .await?;
    p.admin("GET", "/v1/deployments", None, 200).await?;
    p.admin("GET", "/v1/deployments?status=active", None, 200)
        .await?;
    p.admin("GET", &format!("/v1/deployments/{id}"), None, 200)
        .await?;
    p.admin(
        "GET",
        &format!("/v1/deployments/{id}?limit=1&offset=1"),
        None,
        200,
    )
    .await?;
    p.admin("GET", &format!("/v1/deployments/{id}?limit=0"), None, 400)
        .await?;
    p.admin("GET", &format!("/v1/deployments/{id}/summary"), None, 200)
        .await?;
    p.admin("GET", &format!("/v1/deployments/{id}/watch"), None, 200)
        .await?;
    p.admin("GET", &format!("/v1/deployments/{id}/nodes/n1"), None, 200)
        .await?;
    p.admin(
        "POST",
        &format!("/v1/deployments/{id}/pulse"),
        Some(json!({})),
        200,
    )
    .await?;
    p.admin("POST", "/v1/deployments/d-99/pulse", Some(json!({})), 200)
        .await?;
    p.admin(
        "POST",
        &format!("/v1/deployments/{id}/pause"),
        Some(json!({"message": "hold on"})),
        200,
    )
    .await?;
    p.admin(
        "POST",
        &format!("/v1/deployments/{id}/resume"),
        Some(json!({})),
        200,
    )
    .await?;
    // Not waiting at a confirmation gate: 409; an unknown deployment: 404.
    p.admin(
        "POST",
        &format!("/v1/deployments/{id}/confirm"),
        Some(json!({})),
        409,
    )
    .await?;
    p.admin("POST", "/v1/deployments/d-99/confirm", Some(json!({})), 404)
        .await?;
    // By job key: the pair's active deployment.
    let pair = "/v1/consumers/web/resources/app";
    p.admin("POST", &format!("{pair}/pulse"), Some(json!({})), 200)
        .await?;
    p.admin("POST", &format!("{pair}/pause"), Some(json!({})), 200)
        .await?;
    p.admin("POST", &format!("{pair}/resume"), Some(json!({})), 200)
        .await?;
    p.admin(
        "POST",
        &format!("/v1/deployments/{id}/abort"),
        Some(json!({})),
        200,
    )
    .await?;
    // Ended: its feed sends the last summary and `end`, then closes.
    p.admin("GET", &format!("/v1/deployments/{id}/watch"), None, 200)
        .await?;
    p.admin("POST", "/v1/deployments/d-99/abort", Some(json!({})), 404)
        .await?;
    p.admin("POST", &format!("{pair}/abort"), Some(json!({})), 404)
        .await?;
    p.admin(
        "POST",
        "/v1/deployments/d-99/rollback",
        Some(json!({})),
        404,
    )
    .await?;
    p.admin("POST", &format!("{pair}/rollback"), Some(json!({})), 404)
        .await?;
    p.admin("POST", &format!("{pair}/pulse"), Some(json!({})), 200)
        .await?;
    p.admin(
        "POST",
        "/v1/consumers/web/resources/a%20b/pulse",
        Some(json!({})),
        400,
    )
    .await?;
    p.admin("GET", "/v1/deployments/d-99", None, 404).await?;

    // Groups and group deployments.
    p.admin(
        "POST",
        "/v1/groups",
        Some(json!({"name": "g", "members": [{"consumer": "web", "resource": "app"}]})),
        201,
    )
    .await?;
    p.admin("GET", "/v1/groups", None, 200).await?;
    p.admin("GET", "/v1/groups/g", None, 200).await?;
    p.admin(
        "POST",
        "/v1/group-deployments?dry_run=true",
        Some(json!({"group": "g", "versions": {"app": 3}})),
        200,
    )
    .await?;
    let gid = p
        .admin(
            "POST",
            "/v1/group-deployments",
            Some(json!({"group": "g", "versions": {"app": 3}})),
            201,
        )
        .await?["id"]
        .as_str()
        .context("a group deployment id")?
        .to_string();
    p.admin("GET", "/v1/group-deployments", None, 200).await?;
    p.admin("GET", &format!("/v1/group-deployments/{gid}"), None, 200)
        .await?;
    p.admin(
        "POST",
        &format!("/v1/group-deployments/{gid}/abort"),
        Some(json!({})),
        200,
    )
    .await?;
    p.admin("GET", "/v1/group-deployments/g-99", None, 404)
        .await?;

    // Refusals: no token, a role that may not, a form instead of JSON, an unknown hold.
    p.call("GET", "/v1/deployments", None, None, 401).await?;
    p.call(
        "POST",
        "/v1/resources",
        Some(&reader),
        Some(json!({"name": "x"})),
        403,
    )
    .await?;
    let form = p
        .http
        .post(format!("{}/v1/resources", p.base))
        .bearer_auth(p.admin.clone())
        .header("content-type", "application/x-www-form-urlencoded")
        .body("name=x")
        .send()
        .await?;
    p.check("POST", "/v1/resources", 415, form).await?;
    p.admin("DELETE", "/v1/consumers/web/holds/app/2", None, 404)
        .await?;

    // Removals.
    p.admin("DELETE", "/v1/groups/g", None, 200).await?;
    p.admin("DELETE", "/v1/consumers/web/subscriptions/app", None, 200)
        .await?;
    p.admin("DELETE", "/v1/consumers/web", None, 200).await?;
    // The reader's change feed ends with `closed` once its token is revoked.
    p.call("GET", "/v1/watch", Some(&reader), None, 200).await?;
    let (pattern, mut feed) = p.kept.take().context("the reader's feed")?;
    p.admin("DELETE", "/v1/tokens/viewer", None, 200).await?;
    let item = p.spec["paths"][pattern.as_str()]["get"]["responses"]["200"]["content"]
        ["text/event-stream"]["x-itemSchema"]
        .clone();
    let closed = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match feed.next().await {
                Ok(Some(e)) if e.event == "closed" => return Ok(e),
                Ok(Some(_)) => continue,
                other => anyhow::bail!("the feed ended without `closed`: {other:?}"),
            }
        }
    })
    .await
    .context("no `closed` event within 30 s")??;
    check_event(&p.spec, &item, &closed)?;
    p.events.insert((pattern, closed.event));
    p.admin("DELETE", "/v1/tokens/viewer", None, 404).await?;

    let mut missing = Vec::new();
    for (path, item) in p.spec["paths"].as_object().context("paths")? {
        for method in item.as_object().context("path item")?.keys() {
            if !p.seen.contains(&(method.to_uppercase(), path.clone())) {
                missing.push(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    ensure!(
        missing.is_empty(),
        "operations never exercised: {missing:?}"
    );
    ensure!(p.checked >= 60, "only {} JSON answers validated", p.checked);
    let events: Vec<String> = p.events.iter().map(|(r, e)| format!("{r} {e}")).collect();
    for want in [
        "/v1/watch applied",
        "/v1/watch closed",
        "/v1/deployments/{id}/watch summary",
        "/v1/deployments/{id}/watch end",
    ] {
        ensure!(
            events.iter().any(|e| e == want),
            "event never validated: {want} (seen: {events:?})"
        );
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_document_is_the_same_bytes_on_every_server() -> anyhow::Result<()> {
    let cluster = Cluster::start(2).await?;
    let http = reqwest::Client::new();
    let mut documents = Vec::new();
    for addr in cluster.http_addrs() {
        let bytes = http
            .get(format!("http://{addr}/openapi.json"))
            .send()
            .await?
            .bytes()
            .await?;
        documents.push(bytes);
    }
    ensure!(
        documents.windows(2).all(|w| w[0] == w[1]),
        "two processes serve different bytes for one document ({} and {} bytes)",
        documents[0].len(),
        documents[1].len()
    );
    Ok(())
}
