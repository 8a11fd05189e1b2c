//! A server whose bootstrap admin token is not applied yet is not ready and answers 503, never 401 (issue 41
//! item 7): `/readyz` says 503 `bootstrapping`, and a request with a token it does not know is 503
//! `unavailable` with that reason, so that a client retries instead of taking the token for revoked. Once the
//! token is applied the server is ready, the token works and an unknown one is 401 as ever.
//!
//! The state is made to last: a cluster runs without token auth, then one follower is restarted with a
//! `bootstrap_token_file`. Only a leader with one proposes the token, so none does while the leader is an
//! old server; once every server has the file and has restarted, the next leader proposes it.

use std::path::Path;
use std::time::Duration;

use convoy_node::client::ApiClient;
use convoy_node::local::{new_admin_token, write_private};
use convoy_tests::{eventually, Cluster, ClusterOptions, RawClient};
use serde_json::Value;

/// Turns token auth on in server config `config` (the next start reads it): the key goes first, before the
/// `[[initial_cluster]]` tables.
fn with_bootstrap_token(config: &Path) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(config)?;
    std::fs::write(
        config,
        format!("bootstrap_token_file = \"admin-token\"\n{text}"),
    )?;
    Ok(())
}

/// A raw client of `url` sending `token`.
fn client(url: &str, token: &str) -> RawClient {
    RawClient::from(
        ApiClient::new(url)
            .expect("a server URL")
            .with_token(Some(token)),
    )
}

/// Waits up to `within` until `GET path` through `client` answers `status` (and, for a 503, `code`).
async fn answers(
    client: &RawClient,
    path: &str,
    status: u16,
    code: Option<&str>,
    within: Duration,
) -> anyhow::Result<Value> {
    let found = eventually(within, || {
        let client = client.clone();
        async move {
            let (got, body) = client.get(path).await.ok()?;
            let code_ok = code.is_none_or(|c| body["error"]["code"] == c);
            (got == status && code_ok).then_some(body)
        }
    })
    .await;
    match found {
        Ok(body) => Ok(body),
        Err(e) => {
            let now = client.get(path).await;
            anyhow::bail!("GET {path} never answered {status} {code:?}: {e}; now {now:?}")
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_the_bootstrap_token_applied_answers_503_until_it_has(
) -> anyhow::Result<()> {
    let mut cluster = Cluster::start_with(ClusterOptions::for_tests(3)).await?;
    let result = async {
        let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
        let (late, other) = {
            let followers: Vec<u64> = cluster
                .running()
                .into_iter()
                .filter(|id| *id != leader)
                .collect();
            (followers[0], followers[1])
        };
        let token = new_admin_token();
        write_private(&cluster.dir().join("admin-token"), token.as_bytes())?;
        with_bootstrap_token(&cluster.server(late).config)?;
        cluster.restart(late)?;
        let url = cluster.server(late).url();
        let with_token = client(&url, &token);

        let ready = answers(
            &with_token,
            "/readyz",
            503,
            Some("bootstrapping"),
            Duration::from_secs(20),
        )
        .await?;
        assert!(
            ready["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("bootstrap admin token")),
            "{ready}"
        );
        // Its token is not applied here yet: 503 with the reason, not 401 "unknown or revoked".
        let (status, body) = with_token.get("/v1/whoami").await?;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (503, Some("unavailable")),
            "{body}"
        );
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("bootstrap admin token")),
            "{body}"
        );

        // Every server gets the file; once the old ones restarted, whoever leads proposes the token.
        for id in [other, leader] {
            with_bootstrap_token(&cluster.server(id).config)?;
            cluster.restart(id)?;
            answers(
                &client(&cluster.server(id).url(), &token),
                "/healthz",
                200,
                None,
                Duration::from_secs(20),
            )
            .await?;
        }
        answers(&with_token, "/readyz", 200, None, Duration::from_secs(30)).await?;
        let (status, body) = with_token.get("/v1/whoami").await?;
        assert_eq!(status, 200, "{body}");
        // Applied: an unknown token is 401 again.
        let (status, body) = client(&url, &new_admin_token()).get("/v1/whoami").await?;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (401, Some("unauthenticated")),
            "{body}"
        );
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}
