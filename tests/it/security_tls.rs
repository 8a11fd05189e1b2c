//! The HTTP API over TLS through the real binary: a cluster made with `convoy tls init`'s kind of
//! development CA serves HTTPS only; a client that trusts the CA is answered, one that does not is
//! refused, and plain HTTP gets no answer; a follower forwards reports to the leader over HTTPS;
//! with client certificates required, a client without one is refused.

use std::time::Duration;

use convoy_node::client::{ApiClient, RawClient};
use convoy_tests::scenario::{consumer, post_ok};
use convoy_tests::{Cluster, ClusterOptions};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_speaks_https_only_and_followers_forward_over_it() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions {
        tls: true,
        ..ClusterOptions::for_tests(3)
    })
    .await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(leader).client();
    post_ok(&api, "/v1/resources", json!({"name": "app"})).await?;
    consumer(&api, "web", 2).await?;

    // A follower takes a node's report and forwards it to the leader over HTTPS.
    let follower = cluster.client_except(leader);
    let report = json!({"active": true, "resources": {"app": {"versions": {}}}});
    let (status, body) = follower.post("/v1/nodes/web-0/report", &report).await?;
    assert_eq!(status, 200, "{body}\n{}", cluster.logs());

    let addr = cluster.server(leader).http_addr.clone();
    // No trust in the development CA: the handshake fails.
    let untrusting = RawClient::new(&format!("https://{addr}"));
    assert!(untrusting.get("/v1/cluster").await.is_err());
    // Plain HTTP to the TLS port is not answered as HTTP.
    let plain = RawClient::new(&addr);
    if let Ok((status, _)) = plain.get("/v1/cluster").await {
        assert_ne!(status, 200, "plain HTTP must not be served");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn required_client_certificates_refuse_a_client_without_one() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions {
        tls: true,
        tls_client_auth: true,
        ..ClusterOptions::for_tests(3)
    })
    .await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let server = cluster.server(leader);
    // The harness's clients present the cluster's certificate: answered.
    let (status, _) = server.client().get("/v1/cluster").await?;
    assert_eq!(status, 200);
    // Trusting the CA but with no certificate of its own: refused in the handshake.
    let ca = cluster.dir().join("tls/ca.pem");
    let anonymous = ApiClient::new(&server.url())?
        .with_patience(Duration::ZERO)
        .with_tls(Some(&ca), None)?;
    assert!(anonymous
        .get::<serde_json::Value>("/v1/cluster")
        .await
        .is_err());
    Ok(())
}
