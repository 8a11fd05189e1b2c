//! Issue 37 §2 through a real server: every list route that can return many objects takes `?offset=&limit=`
//! and answers pages that together hold every object once (`total`, `next_offset`); without them the bare
//! array it always was, cut at 1,000 objects with `X-Total-Count` and a `Link` to the next page; a bad
//! `limit` or `offset` is a 400 naming the parameter, never echoing a huge value. And a write completes,
//! with no election, while other clients list 1,000 windows in a loop.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{get_ok, post_ok, refuses_bad_pages, resource_with_v1};
use convoy_tests::{Cluster, ClusterOptions, RawClient};
use serde_json::{json, Value};

/// Walks every page of `route` (`limit` objects each) and returns each object's `field`, in order.
async fn walk(
    api: &RawClient,
    route: &str,
    key: &str,
    field: &str,
    limit: usize,
) -> anyhow::Result<Vec<String>> {
    let sep = if route.contains('?') { '&' } else { '?' };
    let mut seen = Vec::new();
    let mut offset = 0;
    let mut total = None;
    loop {
        let page = get_ok(api, &format!("{route}{sep}offset={offset}&limit={limit}")).await?;
        let items = page[key]
            .as_array()
            .with_context(|| format!("{route}: no {key:?} in {page}"))?;
        ensure!(items.len() <= limit, "{route}: {} > {limit}", items.len());
        let t = page["total"].as_u64().context("a total")? as usize;
        ensure!(
            *total.get_or_insert(t) == t,
            "{route}: total changed: {page}"
        );
        ensure!(
            page["offset"] == json!(offset) && page["limit"] == json!(limit),
            "{page}"
        );
        seen.extend(items.iter().map(|i| match &i[field] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }));
        match page["next_offset"].as_u64() {
            Some(next) => {
                ensure!(next as usize == offset + items.len(), "{route}: {page}");
                offset = next as usize;
            }
            None => {
                ensure!(
                    seen.len() == t,
                    "{route}: {} of {t} seen, no next_offset",
                    seen.len()
                );
                return Ok(seen);
            }
        }
    }
}

/// Asserts `seen` holds each object once and exactly the `want` ones.
fn each_once(route: &str, seen: &[String], want: &BTreeSet<String>) -> anyhow::Result<()> {
    let unique: BTreeSet<String> = seen.iter().cloned().collect();
    ensure!(
        unique.len() == seen.len(),
        "{route}: an object twice: {seen:?}"
    );
    ensure!(&unique == want, "{route}: {unique:?} != {want:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_list_is_paged_each_object_once_and_a_bad_limit_is_a_400() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(1).with_auth()).await?;
    let result = async {
        let api = cluster.server(1).client();
        // 1,004 resources: more than the unpaged answer holds.
        let mut resources = BTreeSet::new();
        resource_with_v1(&api, "app").await?;
        resources.insert("app".to_string());
        for i in 0..1_003 {
            let name = format!("r-{i:04}");
            post_ok(&api, "/v1/resources", json!({"name": name})).await?;
            resources.insert(name);
        }
        let mut consumers = BTreeSet::new();
        for i in 0..23 {
            let name = format!("c-{i:02}");
            post_ok(
                &api,
                "/v1/consumers",
                json!({"name": name, "nodes": [format!("n-{i}")]}),
            )
            .await?;
            consumers.insert(name);
        }
        let mut deployments = BTreeSet::new();
        for c in consumers.iter().take(7) {
            let d = post_ok(
                &api,
                "/v1/deployments",
                json!({"consumer": c, "resource": "app"}),
            )
            .await?;
            deployments.insert(d["id"].as_str().context("an id")?.to_string());
        }
        let mut windows = BTreeSet::new();
        for i in 0..12 {
            let name = format!("w-{i:02}");
            post_ok(
                &api,
                "/v1/windows",
                json!({"name": name, "kind": "deny", "schedule": "0 3 * * 0", "duration": "1h"}),
            )
            .await?;
            windows.insert(name);
        }
        let mut groups = BTreeSet::new();
        for i in 0..5 {
            let name = format!("g-{i}");
            let members = json!([{"consumer": format!("c-{:02}", 10 + i), "resource": "app"}]);
            post_ok(
                &api,
                "/v1/groups",
                json!({"name": name, "members": members}),
            )
            .await?;
            groups.insert(name);
        }
        let mut tokens = BTreeSet::from(["bootstrap".to_string()]);
        for i in 0..6 {
            let name = format!("t-{i}");
            post_ok(&api, "/v1/tokens", json!({"name": name, "role": "reader"})).await?;
            tokens.insert(name);
        }

        for (route, key, field, want, limit) in [
            ("/v1/resources", "resources", "name", &resources, 300),
            ("/v1/consumers", "consumers", "name", &consumers, 10),
            ("/v1/deployments", "deployments", "id", &deployments, 3),
            ("/v1/windows", "windows", "name", &windows, 5),
            ("/v1/groups", "groups", "name", &groups, 2),
            ("/v1/tokens", "tokens", "name", &tokens, 4),
        ] {
            let seen = walk(&api, route, key, field, limit).await?;
            each_once(route, &seen, want)?;
            // The unpaged answer is the bare array it was.
            let all = get_ok(&api, route).await?;
            ensure!(
                all.as_array()
                    .is_some_and(|a| a.len() == want.len().min(1_000)),
                "{route} unpaged: {} objects",
                all.as_array().map_or(0, Vec::len)
            );
        }
        // Filters apply before the page; an offset past the end is an empty page.
        let mut both = walk(
            &api,
            "/v1/deployments?status=active",
            "deployments",
            "id",
            2,
        )
        .await?;
        both.extend(
            walk(
                &api,
                "/v1/deployments?status=terminal",
                "deployments",
                "id",
                2,
            )
            .await?,
        );
        each_once("active, then terminal deployments", &both, &deployments)?;
        let none = get_ok(&api, "/v1/group-deployments?limit=5").await?;
        ensure!(
            none["total"] == 0 && none["group_deployments"] == json!([]),
            "{none}"
        );
        let past = get_ok(&api, "/v1/consumers?offset=5000").await?;
        ensure!(
            past["total"] == 23
                && past["consumers"] == json!([])
                && past.get("next_offset").is_none(),
            "{past}"
        );
        let default = get_ok(&api, "/v1/resources?offset=0").await?;
        ensure!(
            default["limit"] == 100 && default["next_offset"] == 100,
            "{}",
            default["limit"]
        );

        // Unpaged past 1,000: the first 1,000, the total and where the rest is, in headers.
        let server = cluster.server(1);
        let admin = std::fs::read_to_string(cluster.dir().join("admin-token"))?;
        let answer = reqwest::Client::new()
            .get(format!("http://{}/v1/resources", server.http_addr))
            .bearer_auth(admin.trim())
            .send()
            .await?;
        let total = answer.headers().get("x-total-count").cloned();
        let link = answer.headers().get("link").cloned();
        let body: Value = answer.json().await?;
        ensure!(body.as_array().map(Vec::len) == Some(1_000), "cut at 1,000");
        ensure!(
            total.as_ref().and_then(|t| t.to_str().ok()) == Some("1004"),
            "{total:?}"
        );
        let link = link.context("a Link header")?;
        ensure!(
            link.to_str()? == "</v1/resources?offset=1000&limit=1000>; rel=\"next\"",
            "{link:?}"
        );
        let rest = get_ok(&api, "/v1/resources?offset=1000&limit=1000").await?;
        ensure!(
            rest["resources"].as_array().map(Vec::len) == Some(4),
            "{}",
            rest["total"]
        );

        // Bad limits and offsets: 400 naming the parameter, the value cut.
        refuses_bad_pages(
            &api,
            &[
                "/v1/resources",
                "/v1/consumers",
                "/v1/deployments",
                "/v1/windows",
                "/v1/groups",
                "/v1/group-deployments",
                "/v1/tokens",
            ],
        )
        .await?;
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}

/// The leader's id and term, as server `id` of `cluster` sees them.
async fn leader_and_term(api: &RawClient) -> anyhow::Result<(Value, Value)> {
    let c = get_ok(api, "/v1/cluster").await?;
    Ok((c["leader_id"].clone(), c["term"].clone()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_complete_without_an_election_while_readers_list_a_thousand_windows_in_a_loop(
) -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let result = async {
        let leader = cluster.wait_leader(Duration::from_secs(30)).await?;
        let api = cluster.server(leader).client();
        resource_with_v1(&api, "app").await?;
        // Active deployments for the windows to judge, then the most windows there may be.
        for i in 0..10 {
            let c = format!("c-{i}");
            post_ok(&api, "/v1/consumers", json!({"name": c, "nodes": [format!("{c}-0"), format!("{c}-1")]})).await?;
            post_ok(&api, "/v1/deployments", json!({"consumer": c, "resource": "app"})).await?;
        }
        for i in 0..1_000 {
            let (kind, schedule) = if i % 2 == 0 { ("deny", "0 3 * * 0") } else { ("allow", "*/5 * * * *") };
            post_ok(
                &api,
                "/v1/windows",
                json!({"name": format!("w-{i:04}"), "kind": kind, "schedule": schedule, "duration": "1m",
                       "applies_to": {"consumers": [format!("c-{}", i % 10)]}}),
            )
            .await?;
        }
        let before = leader_and_term(&api).await?;

        // Readers list everything in a loop on the leader, paged and not.
        let stop = Arc::new(AtomicBool::new(false));
        let lists = Arc::new(AtomicUsize::new(0));
        let mut readers = Vec::new();
        for r in 0..3 {
            let (api, stop, lists) = (cluster.server(leader).client(), stop.clone(), lists.clone());
            readers.push(tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let route = match r {
                        0 => "/v1/windows",
                        1 => "/v1/windows?offset=0&limit=1000",
                        _ => "/v1/deployments",
                    };
                    let (status, body) = api.get(route).await?;
                    let n = body.as_array().or(body["windows"].as_array()).map_or(0, Vec::len);
                    ensure!(status == 200 && (r == 2 || n == 1_000), "{route}: {status}, {n} windows");
                    lists.fetch_add(1, Ordering::Relaxed);
                }
                anyhow::Ok(())
            }));
        }
        // Writes meanwhile, each answered; at least a few lists in between.
        let mut written = 0;
        while written < 30 || lists.load(Ordering::Relaxed) < 6 {
            ensure!(written < 2_000, "the readers made no progress");
            post_ok(&api, "/v1/resources", json!({"name": format!("during-{written}")})).await?;
            written += 1;
        }
        stop.store(true, Ordering::Relaxed);
        for r in readers {
            r.await??;
        }
        let after = leader_and_term(&api).await?;
        ensure!(before == after, "an election under the readers: {before:?} -> {after:?}");
        let list = get_ok(&api, "/v1/resources?offset=0&limit=1000").await?;
        ensure!(list["total"] == written + 1, "{}", list["total"]);
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}
