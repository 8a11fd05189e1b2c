//! (b), batched: relays report many nodes' changes per `POST /v1/nodes/reports`. A consumer ten
//! times the size of the per-request one is cycled through, so a node changes at most once per
//! cycle and no change is coalesced away (replaced by a newer one) before it commits.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::context::Ctx;
use super::ingest_check::{
    change_report, check_applied, padded_ids, record_latencies, sample_latencies, SCENARIO,
};
use super::load::{closed_loop, register_consumer};
use super::relay;

const RELAYS: usize = 16;

/// Nodes `c`, `c + relays`, ... of `n`, the `k`-th chunk of `batch` of them.
pub fn chunk(n: usize, relays: usize, c: usize, batch: usize, k: usize) -> Vec<usize> {
    let owned = (n - c).div_ceil(relays);
    (k * batch..((k + 1) * batch).min(owned))
        .map(|j| c + j * relays)
        .collect()
}

/// Registers `n` more nodes in a consumer of their own and drives them for `--duration`.
pub async fn run(
    ctx: &mut Ctx,
    base: &str,
    addr: &str,
    n: usize,
    batch: usize,
) -> anyhow::Result<()> {
    let nodes = Arc::new(padded_ids("rl", n));
    register_consumer(&ctx.http, base, "relayed", &nodes)
        .await
        .map_err(anyhow::Error::msg)?;
    let sample = padded_ids("sample", 100);
    let sampler = tokio::spawn(sample_latencies(
        ctx.http.clone(),
        addr.to_string(),
        sample,
        Instant::now() + ctx.args.duration,
    ));
    let last: Arc<Vec<AtomicU8>> = Arc::new((0..n).map(|_| AtomicU8::new(0)).collect());
    let taken = Arc::new(AtomicU64::new(0));
    let (http, url) = (
        ctx.http.clone(),
        Arc::new(format!("{base}/v1/nodes/reports")),
    );
    let (l, t, ns) = (last.clone(), taken.clone(), nodes.clone());
    let chunks = n.div_ceil(RELAYS).div_ceil(batch);
    let r = closed_loop(RELAYS, ctx.args.duration, move |c, seq| {
        let (http, url, last, taken, nodes) =
            (http.clone(), url.clone(), l.clone(), t.clone(), ns.clone());
        let which = chunk(n, RELAYS, c, batch, seq as usize % chunks);
        let current = 1 + ((seq as usize / chunks) % 2) as u8;
        async move {
            let report = change_report(current).to_string();
            let body =
                relay::batch_body(which.iter().map(|i| (nodes[*i].as_str(), report.as_str())));
            let answer = relay::post_batch(&http, &url, body, Instant::now()).await?;
            let answer: relay::Rejected =
                serde_json::from_slice(&answer).map_err(|e| e.to_string())?;
            let refused = answer.rejected;
            for i in which {
                if !refused.contains_key(&nodes[i]) {
                    last[i].store(current, Ordering::Relaxed);
                    taken.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(())
        }
    })
    .await;
    let taken = taken.load(Ordering::Relaxed);
    let rate = taken as f64 / r.elapsed.as_secs_f64();
    let note = format!(
        "{n} nodes in one consumer, {RELAYS} relays, {batch} reports per request, each flipping the node's current version; a node changes once per {:.1} s cycle. {}",
        n as f64 / rate.max(1.0),
        r.error_note()
    );
    ctx.results.add(
        SCENARIO,
        "batched: node changes accepted/s",
        Some(rate),
        "changes/s",
        note,
    );
    ctx.results.add(
        SCENARIO,
        "batched: request round trip p50",
        r.percentile_ms(0.5),
        "ms",
        format!("{batch} reports per request"),
    );
    ctx.results.add(
        SCENARIO,
        "batched: request round trip p99",
        r.percentile_ms(0.99),
        "ms",
        "",
    );
    let latencies = sampler.await.unwrap_or_default();
    record_latencies(ctx, "batched: report → applied", latencies);
    check_applied(
        ctx,
        addr,
        &nodes,
        &last,
        "batched: accepted changes not applied after 2 s",
    )
    .await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::chunk;

    #[test]
    fn relays_own_disjoint_nodes_and_chunks_cover_them_once() {
        let (n, relays, batch) = (103, 4, 10);
        let mut seen = vec![0; n];
        for c in 0..relays {
            let chunks = n.div_ceil(relays).div_ceil(batch);
            for k in 0..chunks {
                let part = chunk(n, relays, c, batch, k);
                assert!(part.len() <= batch);
                for i in part {
                    assert_eq!(i % relays, c, "node {i} belongs to relay {}", i % relays);
                    seen[i] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&s| s == 1), "{seen:?}");
    }
}
