//! convoy's throughput, failover and crowded scenarios run against a 3-member etcd on the same machine, each
//! after convoy's own rows, with the convoy/etcd ratios.

use std::sync::Arc;
use std::time::{Duration, Instant};

use convoy_node::tools::bench::failover::{self, first_success, probe_client, summarize};
use convoy_node::tools::bench::load::{closed_loop, post_ok, LoadResult};
use convoy_node::tools::bench::report::ratio;
use convoy_node::tools::bench::throughput;
use convoy_node::tools::bench::Ctx;

use super::etcd::{self, EtcdCluster};
use super::Compare;

/// Puts keys `t-<tag>-<client>-<seq>` into etcd at `client_url` with `clients` loops for the configured
/// time: the same load as convoy's [`throughput::convoy_load`].
pub async fn etcd_load(
    ctx: &Ctx,
    cmp: &Compare,
    client_url: &str,
    tag: &str,
    clients: usize,
) -> LoadResult {
    let http = cmp.etcd_http.clone();
    let url = Arc::new(format!("{client_url}{}", etcd::PUT_PATH));
    let tag = tag.to_string();
    closed_loop(clients, ctx.args.duration, move |c, seq| {
        let (http, url) = (http.clone(), url.clone());
        let body = etcd::put_body(&format!("t-{tag}-{c}-{seq}"), "v");
        async move { post_ok(&http, &url, &body).await.map(|_| ()) }
    })
    .await
}

/// Every `--clients` level against etcd's leader, and the ratio to convoy's leader rows.
pub async fn etcd_throughput(ctx: &mut Ctx, cmp: &Compare) -> anyhow::Result<()> {
    let etcd = EtcdCluster::start(&ctx.dir("etcd-throughput"))?;
    etcd.wait_ready(&cmp.etcd_http, Duration::from_secs(30))
        .await?;
    for n in ctx.args.clients.clone() {
        let leader = etcd.leader(&cmp.etcd_http).await.unwrap_or(0);
        let r = etcd_load(ctx, cmp, &etcd.client_urls()[leader], &n.to_string(), n).await;
        throughput::record(&mut ctx.results, "etcd → leader", &r);
        let convoy = ctx
            .results
            .value(&format!("convoy → leader, {n} clients: writes/s"));
        ctx.results.add(
            throughput::SCENARIO,
            format!("convoy/etcd writes/s, {n} clients"),
            ratio(convoy, Some(r.rate())),
            "x",
            "both to the leader",
        );
    }
    Ok(())
}

/// The `crowded` scenario's write load (16 clients, `--duration`) against etcd's leader: the p50 and p99
/// beside convoy's quiet and crowded ones, from the same run.
pub async fn etcd_crowded(ctx: &mut Ctx, cmp: &Compare) -> anyhow::Result<()> {
    let etcd = EtcdCluster::start(&ctx.dir("etcd-crowded"))?;
    etcd.wait_ready(&cmp.etcd_http, Duration::from_secs(30))
        .await?;
    let leader = etcd.leader(&cmp.etcd_http).await.unwrap_or(0);
    let r = etcd_load(ctx, cmp, &etcd.client_urls()[leader], "crowded", 16).await;
    throughput::record_as(&mut ctx.results, "crowded", "etcd → leader, quiet", &r);
    Ok(())
}

/// Kills etcd's leader `--failovers` times, timing the first committed write after each kill, and
/// the ratio to convoy's.
pub async fn etcd_failover(ctx: &mut Ctx, cmp: &Compare) -> anyhow::Result<()> {
    let mut etcd = EtcdCluster::start(&ctx.dir("etcd-failover"))?;
    etcd.wait_ready(&cmp.etcd_http, Duration::from_secs(30))
        .await?;
    let http = probe_client(None);
    let mut writes = Vec::new();
    let kills = ctx.args.failovers;
    for round in 0..kills {
        let Some(leader) = etcd.leader(&cmp.etcd_http).await else {
            anyhow::bail!("etcd has no leader before kill {round}");
        };
        let survivors: Vec<String> = etcd
            .client_urls()
            .into_iter()
            .enumerate()
            .filter(|(i, _)| *i != leader)
            .map(|(_, u)| u)
            .collect();
        let kill_at = Instant::now();
        etcd.kill(leader);
        let h = http.clone();
        let write = first_success(kill_at, Duration::from_secs(20), move |k| {
            let url = format!(
                "{}{}",
                survivors[k as usize % survivors.len()],
                etcd::PUT_PATH
            );
            let (http, body) = (h.clone(), etcd::put_body(&format!("fo-{round}-{k}"), "v"));
            async move { post_ok(&http, &url, &body).await.is_ok() }
        })
        .await;
        println!("  etcd kill {round}: member {leader}; write {write:?} ms");
        writes.extend(write);
        etcd.restart(leader)?;
        etcd.wait_member(&cmp.etcd_http, leader, Duration::from_secs(30))
            .await?;
        etcd.wait_ready(&cmp.etcd_http, Duration::from_secs(30))
            .await?;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    summarize(
        &mut ctx.results,
        "etcd",
        "first committed write",
        &writes,
        kills,
    );
    for name in ["p50", "p99"] {
        let metric = |who: &str| format!("{who}: SIGKILL leader → first committed write, {name}");
        let (c, e) = (
            ctx.results.value(&metric("convoy")),
            ctx.results.value(&metric("etcd")),
        );
        ctx.results.add(
            failover::SCENARIO,
            format!("convoy/etcd failover time, {name}"),
            ratio(c, e),
            "x",
            "lower is better",
        );
    }
    Ok(())
}
