//! Issue 37 §2 for the single-object shows, through a real server: `GET /v1/resources/{name}` answers one
//! page of its versions and `GET /v1/consumers/{name}` one page of its nodes (`?offset=&limit=`, the list
//! routes' bounds), with `page: {total, offset, limit, next_offset}`; `next_offset` walks the rest, each
//! item once; unpaged, at most 1,000; a consumer's subscriptions and holds are cut at 100 with their counts,
//! the rest in `GET /v1/consumers/{name}/subscriptions` and `/holds` (paged lists). A bad `offset` or
//! `limit` is a 400 naming it. And the CLI still shows everything: it follows the pages.

use std::collections::BTreeSet;

use anyhow::{ensure, Context};
use convoy_tests::cli::run;
use convoy_tests::scenario::{
    get_ok, post_ok, publish, put_ok, refuses_bad_pages, resource_with_v1,
};
use convoy_tests::{Cluster, RawClient};
use serde_json::{json, Value};

/// Walks every page of the show `route`'s `key` list (`limit` items each; `page.next_offset`) and returns
/// each item's `field` (the item itself when `field` is empty), in order.
async fn walk_show(
    api: &RawClient,
    route: &str,
    key: &str,
    field: &str,
    limit: usize,
) -> anyhow::Result<Vec<String>> {
    let mut seen = Vec::new();
    let mut offset = 0;
    loop {
        let show = get_ok(api, &format!("{route}?offset={offset}&limit={limit}")).await?;
        let items = show[key]
            .as_array()
            .with_context(|| format!("{route}: no {key:?} in {show}"))?;
        let page = &show["page"];
        ensure!(items.len() <= limit, "{route}: {} > {limit}", items.len());
        ensure!(
            page["offset"] == json!(offset) && page["limit"] == json!(limit),
            "{route}: {page}"
        );
        let total = page["total"].as_u64().context("a total")? as usize;
        seen.extend(items.iter().map(|i| {
            let v = if field.is_empty() { i } else { &i[field] };
            match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }
        }));
        match page["next_offset"].as_u64() {
            Some(next) => {
                ensure!(next as usize == offset + items.len(), "{route}: {page}");
                offset = next as usize;
            }
            None => {
                ensure!(seen.len() == total, "{route}: {} of {total}", seen.len());
                return Ok(seen);
            }
        }
    }
}

/// Asserts `seen` holds each item once and exactly the `want` ones.
fn each_once(route: &str, seen: &[String], want: &BTreeSet<String>) -> anyhow::Result<()> {
    let unique: BTreeSet<String> = seen.iter().cloned().collect();
    ensure!(unique.len() == seen.len(), "{route}: an item twice");
    ensure!(
        &unique == want,
        "{route}: {} != {} items",
        unique.len(),
        want.len()
    );
    Ok(())
}

/// A consumer `big` with 1,005 nodes subscribed to 103 resources, and `app` with 23 versions.
async fn crowded(api: &RawClient) -> anyhow::Result<()> {
    resource_with_v1(api, "app").await?;
    for _ in 0..22 {
        publish(api, "app", json!({})).await?;
    }
    let nodes: Vec<String> = (0..1_005).map(|i| format!("big-{i:04}")).collect();
    post_ok(api, "/v1/consumers", json!({"name": "big", "nodes": nodes})).await?;
    for i in 0..103 {
        let r = format!("s-{i:03}");
        resource_with_v1(api, &r).await?;
        let mode = if i == 102 { "strong" } else { "weak" };
        put_ok(
            api,
            &format!("/v1/consumers/big/subscriptions/{r}"),
            json!({"mode": mode, "min_healthy_ms": 1234}),
        )
        .await?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shows_are_paged_each_item_once_and_a_bad_limit_is_a_400() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    let result = async {
        let api = cluster.server(1).client();
        crowded(&api).await?;

        let versions = walk_show(&api, "/v1/resources/app", "versions", "version", 5).await?;
        let want: BTreeSet<String> = (1..=23).map(|v| v.to_string()).collect();
        each_once("versions", &versions, &want)?;
        let nodes = walk_show(&api, "/v1/consumers/big", "nodes", "", 300).await?;
        let want: BTreeSet<String> = (0..1_005).map(|i| format!("big-{i:04}")).collect();
        each_once("nodes", &nodes, &want)?;

        // Unpaged: the first 1,000 nodes, and where the rest is; subscriptions cut at 100, with the count.
        let show = get_ok(&api, "/v1/consumers/big").await?;
        ensure!(
            show["nodes"].as_array().map(Vec::len) == Some(1_000)
                && show["page"]
                    == json!({"total": 1_005, "offset": 0, "limit": 1_000, "next_offset": 1_000}),
            "{}",
            show["page"]
        );
        ensure!(
            show["subscriptions"].as_object().map(|s| s.len()) == Some(100)
                && show["subscriptions_total"] == 103
                && show["holds_total"] == 0,
            "{} subscriptions, total {}",
            show["subscriptions"].as_object().map_or(0, |s| s.len()),
            show["subscriptions_total"]
        );
        // The rest of the subscriptions in their own paged list, each once.
        let subs = walk_list(&api, "/v1/consumers/big/subscriptions", "subscriptions", 40).await?;
        let want: BTreeSet<String> = (0..103).map(|i| format!("s-{i:03}")).collect();
        each_once("subscriptions", &subs, &want)?;
        let holds = get_ok(&api, "/v1/consumers/big/holds?limit=10").await?;
        ensure!(
            holds["total"] == 0 && holds["holds"] == json!([]),
            "{holds}"
        );
        let small = get_ok(&api, "/v1/resources/app").await?;
        ensure!(
            small["versions"].as_array().map(Vec::len) == Some(23)
                && small["page"] == json!({"total": 23, "offset": 0, "limit": 1_000}),
            "{}",
            small["page"]
        );

        // Bad limits and offsets: 400 naming the parameter, the value cut.
        refuses_bad_pages(
            &api,
            &[
                "/v1/resources/app",
                "/v1/consumers/big",
                "/v1/consumers/big/subscriptions",
                "/v1/consumers/big/holds",
            ],
        )
        .await?;
        for route in [
            "/v1/consumers/nope/subscriptions",
            "/v1/consumers/nope/holds",
        ] {
            let (status, _) = api.get(route).await?;
            ensure!(status == 404, "{route}: {status}");
        }
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}

/// Walks every page of the list route `route` (`limit` objects each) and returns each object's `resource`.
async fn walk_list(
    api: &RawClient,
    route: &str,
    key: &str,
    limit: usize,
) -> anyhow::Result<Vec<String>> {
    let mut seen = Vec::new();
    let mut offset = 0;
    loop {
        let page = get_ok(api, &format!("{route}?offset={offset}&limit={limit}")).await?;
        let items = page[key].as_array().with_context(|| format!("{page}"))?;
        ensure!(items.len() <= limit, "{route}: {} > {limit}", items.len());
        seen.extend(
            items
                .iter()
                .map(|i| i["resource"].as_str().unwrap_or_default().to_string()),
        );
        match page["next_offset"].as_u64() {
            Some(next) => offset = next as usize,
            None => return Ok(seen),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_shows_every_node_version_and_subscription_by_following_the_pages(
) -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    let result = async {
        let api = cluster.server(1).client();
        crowded(&api).await?;
        // More versions than one page holds.
        post_ok(&api, "/v1/resources", json!({"name": "many"})).await?;
        for _ in 0..1_003 {
            publish(&api, "many", json!({})).await?;
        }
        let home = tempfile::tempdir()?;
        let server = cluster.server(1).http_addr.to_string();
        let cli = |args: &[&str]| -> anyhow::Result<Value> {
            let mut all = args.to_vec();
            all.extend(["-o", "json", "--server", &server]);
            let out = run(home.path(), &all, &[]);
            ensure!(
                out.status.success(),
                "convoy {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            Ok(serde_json::from_slice(&out.stdout)?)
        };

        let many = cli(&["resource", "show", "many"])?;
        let versions: Vec<u64> = many["versions"]
            .as_array()
            .context("versions")?
            .iter()
            .filter_map(|v| v["version"].as_u64())
            .collect();
        ensure!(
            versions == (1..=1_003).collect::<Vec<u64>>(),
            "{} versions",
            versions.len()
        );

        let big = cli(&["consumer", "show", "big"])?;
        let nodes = big["nodes"].as_array().context("nodes")?;
        ensure!(nodes.len() == 1_005, "{} nodes", nodes.len());
        ensure!(nodes[1_004] == "big-1004", "{}", nodes[1_004]);
        let subs = big["subscriptions"].as_object().context("subscriptions")?;
        ensure!(
            subs.len() == 103 && subs.contains_key("s-102"),
            "{} subscriptions",
            subs.len()
        );

        // A subscription past the show's first 100 is found, so subscribe changes only what it is told.
        cli(&["consumer", "subscribe", "big", "s-102", "--pin", "1"])?;
        let sub = get_ok(&api, "/v1/consumers/big/subscriptions?offset=102&limit=1").await?;
        let sub = &sub["subscriptions"][0];
        ensure!(
            sub["resource"] == "s-102"
                && sub["mode"] == "strong"
                && sub["pin"] == 1
                && sub["min_healthy_ms"] == 1234,
            "{sub}"
        );
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}
