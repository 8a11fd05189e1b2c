//! One agent token holding many report requests open on a server (issue 28's flood, with bodies that
//! arrive slowly): past 16 in flight, the next report is refused at once with 429 `rate_limited` naming the
//! limit, with `Retry-After`, before its body is read, and its connection is closed; when one of the
//! requests in flight ends, the token may report again. Through the real binary, with raw HTTP/1.1.

use std::time::Duration;

use convoy_tests::scenario::{post_ok, publish, put_ok};
use convoy_tests::{Cluster, ClusterOptions};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The per-token cap on report requests in flight (`node/src/api/report_rate.rs`, `MAX_IN_FLIGHT`).
const CAP: usize = 16;
/// The report every request sends: 16 bytes.
const BODY: &str = r#"{"resources":{}}"#;

/// Sends the head of a report for `node` with `secret` and `Content-Length` `length`, then `body`.
async fn start_report(
    addr: &str,
    secret: &str,
    node: &str,
    length: usize,
    body: &str,
) -> anyhow::Result<TcpStream> {
    let mut stream = TcpStream::connect(addr).await?;
    let head = format!(
        "POST /v1/nodes/{node}/report HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {secret}\r\n\
         content-type: application/json\r\ncontent-length: {length}\r\n\r\n{body}"
    );
    stream.write_all(head.as_bytes()).await?;
    Ok(stream)
}

/// Reads until the server closes the connection (or `patience` passes); what it said and whether it closed.
async fn read_to_close(stream: &mut TcpStream, patience: Duration) -> (String, bool) {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&seen).into(), true),
            Ok(Ok(n)) => seen.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&seen).into(), false),
        }
    }
}

/// Reads one answer's head and body (its `content-length`).
async fn read_answer(stream: &mut TcpStream, patience: Duration) -> anyhow::Result<String> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(patience, async {
        loop {
            let n = stream.read(&mut buf).await?;
            anyhow::ensure!(n > 0, "closed after {:?}", String::from_utf8_lossy(&seen));
            seen.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&seen).to_string();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if body.len() >= length {
                    return Ok(text);
                }
            }
        }
    })
    .await
    .map_err(|_| anyhow::anyhow!("no answer within {patience:?}"))?
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_requests_past_the_tokens_cap_in_flight_are_refused_before_their_body(
) -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(3).with_auth()).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(leader).client();
    let addr = cluster.server(leader).http_addr.clone();
    post_ok(&api, "/v1/resources", json!({"name": "app"})).await?;
    publish(&api, "app", json!({"label": "1"})).await?;
    let nodes: Vec<String> = (0..=CAP).map(|i| format!("slow-{i}")).collect();
    post_ok(
        &api,
        "/v1/consumers",
        json!({"name": "slow", "nodes": nodes}),
    )
    .await?;
    put_ok(&api, "/v1/consumers/slow/subscriptions/app", json!({})).await?;
    let created = post_ok(
        &api,
        "/v1/tokens",
        json!({"name": "slow-agent", "role": "agent", "nodes": "slow-*", "consumers": ["slow"]}),
    )
    .await?;
    let secret = created["secret"].as_str().unwrap_or_default().to_string();

    // CAP reports whose bodies stop after 5 bytes: each is in flight, its handler waiting for the rest.
    let (first, rest) = BODY.split_at(5);
    let mut open = Vec::new();
    for node in &nodes[..CAP] {
        open.push(start_report(&addr, &secret, node, BODY.len(), first).await?);
    }
    // Give the server the heads (the requests are in flight once their heads are read).
    tokio::time::sleep(Duration::from_millis(500)).await;

    // One more, with a 62 KB body announced and none sent: refused at once, its body never awaited.
    let mut extra = start_report(&addr, &secret, &nodes[CAP], 62_000, "").await?;
    let (said, closed) = read_to_close(&mut extra, Duration::from_secs(10)).await;
    assert!(
        said.starts_with("HTTP/1.1 429"),
        "report {} of one token at once must be refused before its body: {said:?}",
        CAP + 1
    );
    let lower = said.to_ascii_lowercase();
    assert!(lower.contains("retry-after: 1"), "{said}");
    assert!(lower.contains("connection: close"), "{said}");
    assert!(
        said.contains("rate_limited") && said.contains("slow-agent") && said.contains("in flight"),
        "names the token and the limit: {said}"
    );
    assert!(
        closed,
        "the refused request's connection is closed: {said:?}"
    );

    // One request in flight ends (its body arrives): the token may report again.
    let mut done = open.pop().expect("one open request");
    done.write_all(rest.as_bytes()).await?;
    let answer = read_answer(&mut done, Duration::from_secs(20)).await?;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let mut again = start_report(&addr, &secret, &nodes[CAP], BODY.len(), BODY).await?;
    let answer = read_answer(&mut again, Duration::from_secs(20)).await?;
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "a slot freed: the next report is taken: {answer}"
    );
    drop(open);
    Ok(())
}
