//! (a) Replicated command throughput and commit latency: closed-loop clients creating resources with
//! unique names (one log entry each) on the leader, through a follower, and the same load as etcd puts.

use std::sync::Arc;

use serde_json::json;

use super::etcd::{self, EtcdCluster};
use super::load::{closed_loop, post_ok, LoadResult};
use super::report::{ratio, Results};
use super::{cluster, Ctx};

const SCENARIO: &str = "throughput";

fn record(results: &mut Results, who: &str, r: &LoadResult) {
    record_as(results, SCENARIO, who, r);
}

/// Writes/s, p50 and p99 of `r` as rows of `scenario`, labelled `who, N clients`.
pub fn record_as(results: &mut Results, scenario: &str, who: &str, r: &LoadResult) {
    let n = r.clients;
    let note = r.error_note();
    results.add(
        scenario,
        format!("{who}, {n} clients: writes/s"),
        Some(r.rate()),
        "ops/s",
        note,
    );
    results.add(
        scenario,
        format!("{who}, {n} clients: p50"),
        r.percentile_ms(0.5),
        "ms",
        "",
    );
    results.add(
        scenario,
        format!("{who}, {n} clients: p99"),
        r.percentile_ms(0.99),
        "ms",
        "",
    );
}

/// Creates resources `t-<tag>-<client>-<seq>` on `addr` with `clients` loops for the configured time.
pub async fn convoy_load(ctx: &Ctx, addr: &str, tag: &str, clients: usize) -> LoadResult {
    let http = ctx.http.clone();
    let url = Arc::new(format!("http://{addr}/v1/resources"));
    let tag = tag.to_string();
    closed_loop(clients, ctx.args.duration, move |c, seq| {
        let (http, url) = (http.clone(), url.clone());
        let body = json!({"name": format!("t-{tag}-{c}-{seq}")});
        async move { post_ok(&http, &url, &body).await.map(|_| ()) }
    })
    .await
}

/// Puts keys `t-<tag>-<client>-<seq>` into etcd at `client_url` with `clients` loops for the configured
/// time: the same load as [`convoy_load`].
pub async fn etcd_load(ctx: &Ctx, client_url: &str, tag: &str, clients: usize) -> LoadResult {
    let http = ctx.etcd_http.clone();
    let url = Arc::new(format!("{client_url}{}", etcd::PUT_PATH));
    let tag = tag.to_string();
    closed_loop(clients, ctx.args.duration, move |c, seq| {
        let (http, url) = (http.clone(), url.clone());
        let body = etcd::put_body(&format!("t-{tag}-{c}-{seq}"), "v");
        async move { post_ok(&http, &url, &body).await.map(|_| ()) }
    })
    .await
}

/// Runs every level against convoy (leader, then a follower) and, with `--etcd`, etcd's leader.
pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    let levels = ctx.args.clients.clone();
    {
        let cluster = cluster::start(&ctx.dir("throughput"), cluster::options(ctx, 10_000)).await?;
        for &n in &levels {
            let leader =
                cluster::leader(&ctx.http, &cluster, std::time::Duration::from_secs(30)).await?;
            let r = convoy_load(ctx, &cluster::addr(&cluster, leader), &format!("l{n}"), n).await;
            record(&mut ctx.results, "convoy → leader", &r);
        }
        for &n in &levels {
            let leader =
                cluster::leader(&ctx.http, &cluster, std::time::Duration::from_secs(30)).await?;
            let r = convoy_load(
                ctx,
                &cluster::follower(&cluster, leader),
                &format!("f{n}"),
                n,
            )
            .await;
            record(&mut ctx.results, "convoy → follower (forwarded)", &r);
        }
    }
    if !ctx.with_etcd() {
        return Ok(());
    }
    let etcd = EtcdCluster::start(&ctx.dir("etcd-throughput"))?;
    etcd.wait_ready(&ctx.etcd_http, std::time::Duration::from_secs(30))
        .await?;
    for &n in &levels {
        let leader = etcd.leader(&ctx.etcd_http).await.unwrap_or(0);
        let r = etcd_load(ctx, &etcd.client_urls()[leader], &n.to_string(), n).await;
        record(&mut ctx.results, "etcd → leader", &r);
        let convoy = ctx
            .results
            .value(&format!("convoy → leader, {n} clients: writes/s"));
        ctx.results.add(
            SCENARIO,
            format!("convoy/etcd writes/s, {n} clients"),
            ratio(convoy, Some(r.rate())),
            "x",
            "both to the leader",
        );
    }
    Ok(())
}
