//! (a) Replicated command throughput and commit latency: closed-loop clients creating resources with
//! unique names (one log entry each) on the leader and through a follower (the lab runs the same load
//! as etcd puts).

use std::sync::Arc;

use serde_json::json;

use super::cluster;
use super::context::Ctx;
use super::load::{closed_loop, post_ok, LoadResult};
use super::report::Results;

/// The scenario's name in the results.
pub const SCENARIO: &str = "throughput";

/// Writes/s, p50 and p99 of `r` as rows of this scenario, labelled `who, N clients`.
pub fn record(results: &mut Results, who: &str, r: &LoadResult) {
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

/// Runs every level against convoy: the leader, then a follower.
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
    Ok(())
}
