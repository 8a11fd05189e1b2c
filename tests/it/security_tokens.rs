//! Tokens and roles on a real 3-server cluster started WITH a bootstrap token: every route of the auth
//! table refuses a request without a token (401) and answers each role as the table says (allowed, or 403);
//! an agent token cannot report for another node (single and batched, through the leader and a follower);
//! a revoked token is refused by every server; a form-encoded action is 415; secrets appear neither in
//! `GET /v1/tokens` nor in any server's log; events record the token's name as `by`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use convoy_actors::domain::{Permission, Role};
use convoy_node::api::auth::table;
use convoy_node::client::ApiClient;
use convoy_tests::{Cluster, ClusterOptions};
use rand::RngCore;
use serde_json::{json, Value};

/// One server of the cluster: its HTTP address and log.
struct Server {
    http: String,
    log: PathBuf,
}

/// Three servers sharing a cluster secret and a bootstrap token file (the harness's cluster).
struct SecureCluster {
    servers: Vec<Server>,
    admin: String,
    _cluster: Cluster,
}

fn secret() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("cvy_{hex}")
}

impl SecureCluster {
    fn start() -> anyhow::Result<Self> {
        let admin = secret();
        let dir = tempfile::Builder::new()
            .prefix("convoy-tokens-")
            .tempdir()?;
        let cluster = Cluster::spawn_in(
            dir.path(),
            ClusterOptions {
                bootstrap_token: Some(admin.clone()),
                ..ClusterOptions::for_tests(3)
            },
        )?;
        let servers = cluster
            .servers
            .values()
            .map(|s| Server {
                http: s.http_addr.clone(),
                log: s.log_path().to_path_buf(),
            })
            .collect();
        Ok(Self {
            servers,
            admin,
            _cluster: cluster.keeping(dir),
        })
    }

    /// Every server's log, for secret checks and failure messages.
    fn logs(&self) -> String {
        self.servers
            .iter()
            .map(|s| std::fs::read_to_string(&s.log).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Waits until every server knows the leader and accepts the bootstrap token; the leader's index.
    async fn wait_ready(&self) -> anyhow::Result<usize> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut last = String::new();
        while Instant::now() < deadline {
            let mut leaders = Vec::new();
            for s in &self.servers {
                match call(&s.http, "GET", "/v1/cluster", Some(&self.admin), None).await {
                    Ok((200, body)) if body["auth"] == "on" => {
                        leaders.push(body["leader_id"].as_u64())
                    }
                    other => {
                        last = format!("{}: {other:?}", s.http);
                        leaders.push(None);
                    }
                }
            }
            if let Some(Some(leader)) = leaders.first() {
                if leaders.iter().all(|l| *l == Some(*leader)) {
                    return Ok(*leader as usize - 1);
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!(
            "cluster not ready with the bootstrap token: {last}\n{}",
            self.logs()
        )
    }
}

/// One request through the library's client: `(status, JSON body)`.
async fn call(
    addr: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> anyhow::Result<(u16, Value)> {
    let client = ApiClient::new(addr)?.with_token(token);
    let body = body.map(|b| ("application/json", serde_json::to_vec(b).expect("JSON")));
    Ok(client.exchange(method.parse()?, path, body).await?)
}

/// A path for a pattern: node ids inside the agent's glob, every other parameter names nothing.
fn concrete(pattern: &str) -> String {
    let node_route = pattern.starts_with("/v1/nodes/");
    let server_route = pattern.starts_with("/v1/cluster/membership/");
    pattern
        .split('/')
        .map(|s| match s {
            "{id}" if node_route => "web-zz",
            "{id}" if server_route => "1",
            s if s.starts_with('{') => "zz-9",
            s => s,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Sends `rule`'s request (`{}` as the body of writes) with `token`.
async fn hit(addr: &str, rule: &table::Rule, token: Option<&str>) -> anyhow::Result<(u16, Value)> {
    if rule.pattern.ends_with("/watch") {
        return stream_head(addr, &concrete(rule.pattern), token).await;
    }
    let body = (rule.method != "GET").then(|| json!({}));
    call(
        addr,
        rule.method,
        &concrete(rule.pattern),
        token,
        body.as_ref(),
    )
    .await
}

/// A stream (server-sent events) never ends: its status from the head, its body only when refused.
async fn stream_head(addr: &str, path: &str, token: Option<&str>) -> anyhow::Result<(u16, Value)> {
    let mut request = reqwest::Client::new().get(format!("http://{addr}{path}"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.timeout(Duration::from_secs(10)).send().await?;
    let status = response.status().as_u16();
    if status == 200 {
        return Ok((status, Value::Null));
    }
    Ok((status, response.json().await.unwrap_or(Value::Null)))
}

async fn create_token(
    addr: &str,
    admin: &str,
    name: &str,
    role: &str,
    nodes: Option<&str>,
) -> anyhow::Result<String> {
    let (status, body) = call(
        addr,
        "POST",
        "/v1/tokens",
        Some(admin),
        Some(&json!({"name": name, "role": role, "nodes": nodes})),
    )
    .await?;
    if status != 201 {
        bail!("creating token {name}: {status} {body}");
    }
    assert_eq!(body["name"], name);
    assert_eq!(body["created_by"], "bootstrap");
    Ok(body["secret"].as_str().context("secret")?.to_string())
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Admin => "admin",
        Role::Operator => "operator",
        Role::Pulser => "pulser",
        Role::Agent => "agent",
        Role::Reader => "reader",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_and_roles_guard_every_route_on_every_server() -> anyhow::Result<()> {
    let cluster = SecureCluster::start()?;
    let leader_ix = cluster.wait_ready().await?;
    let leader = cluster.servers[leader_ix].http.clone();
    let follower = cluster.servers[(leader_ix + 1) % 3].http.clone();
    let admin = cluster.admin.clone();

    // One token per role (the agent's bound to web-*), created through a follower.
    let mut secrets: Vec<(Role, String)> = vec![(Role::Admin, admin.clone())];
    for role in [Role::Operator, Role::Pulser, Role::Agent, Role::Reader] {
        let nodes = (role == Role::Agent).then_some("web-*");
        let name = format!("t-{}", role_name(role));
        let secret = create_token(&follower, &admin, &name, role_name(role), nodes).await?;
        assert!(secret.starts_with("cvy_") && secret.len() == 68, "{secret}");
        secrets.push((role, secret));
    }
    // Tokens are replicated state: wait until the last one works on every server.
    for s in &cluster.servers {
        eventually(|| async {
            let (status, _) = call(&s.http, "GET", "/v1/cluster", Some(&secrets[4].1), None)
                .await
                .ok()?;
            (status == 200).then_some(())
        })
        .await
        .context("the reader token reaching every server")?;
    }

    // Table-driven: no token → 401 on every route but the public ones; each role as the table says.
    for rule in convoy_node::api::routes() {
        let (status, body) = hit(&leader, rule, None).await?;
        let what = format!("{} {}", rule.method, rule.pattern);
        if rule.need == Permission::Public {
            assert!(status == 200, "{what} without a token: {status} {body}");
        } else {
            assert_eq!(status, 401, "{what} without a token: {body}");
            assert_eq!(body["error"]["code"], "unauthenticated", "{what}: {body}");
        }
        let (status, _) = hit(&leader, rule, Some("cvy_not-a-token-at-all-0000000000")).await?;
        let want = if rule.need == Permission::Public {
            200
        } else {
            401
        };
        assert_eq!(status, want, "{what} with an unknown token");
        for (role, secret) in &secrets {
            let (status, body) = hit(&leader, rule, Some(secret)).await?;
            let who = format!("{what} as {}", role_name(*role));
            if role.grants(rule.need) {
                assert!(
                    ![401, 403, 415].contains(&status) && status < 500,
                    "{who} is allowed by the table but got {status} {body}"
                );
            } else {
                assert_eq!(status, 403, "{who}: {body}");
                assert_eq!(body["error"]["code"], "forbidden", "{who}: {body}");
                let message = body["error"]["message"].as_str().unwrap_or_default();
                assert!(
                    message.contains(role_name(*role)) && message.contains(rule.action),
                    "{who}: the 403 must name the role and the action: {message}"
                );
            }
        }
    }

    // An agent reports for its own nodes only: single and batched, through the leader and a follower.
    let agent = &secrets[3].1;
    for addr in [&leader, &follower] {
        let (status, body) = call(
            addr,
            "POST",
            "/v1/nodes/web-1/report",
            Some(agent),
            Some(&json!({})),
        )
        .await?;
        assert_eq!(status, 200, "own node via {addr}: {body}");
        let (status, body) = call(
            addr,
            "POST",
            "/v1/nodes/db-1/report",
            Some(agent),
            Some(&json!({})),
        )
        .await?;
        assert_eq!(status, 403, "other node via {addr}: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("\"db-1\""),
            "{body}"
        );
        let batch = json!({"reports": [{"node": "web-2"}, {"node": "db-2"}]});
        let (status, body) =
            call(addr, "POST", "/v1/nodes/reports", Some(agent), Some(&batch)).await?;
        assert_eq!(status, 403, "batch with another node via {addr}: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("\"db-2\""),
            "{body}"
        );
        let own = json!({"reports": [{"node": "web-2"}, {"node": "web-3"}]});
        let (status, body) =
            call(addr, "POST", "/v1/nodes/reports", Some(agent), Some(&own)).await?;
        assert_eq!(status, 200, "batch of own nodes via {addr}: {body}");
    }
    let (status, node) = call(
        &leader,
        "GET",
        "/v1/nodes/db-1?consistent=true",
        Some(&admin),
        None,
    )
    .await?;
    assert_eq!(
        status, 404,
        "a refused report must not create the node: {node}"
    );

    // What a token does is recorded with its name.
    let ops = &secrets[1].1;
    for (path, body) in [
        ("/v1/resources", json!({"name": "app"})),
        ("/v1/resources/app/versions", json!({})),
        ("/v1/consumers", json!({"name": "web", "nodes": ["web-1"]})),
    ] {
        let (status, answer) = call(&follower, "POST", path, Some(ops), Some(&body)).await?;
        assert!(status == 201 || status == 200, "{path}: {status} {answer}");
    }
    let start =
        json!({"consumer": "web", "resource": "app", "version": 1, "pulse_interval_ms": 60000});
    let (status, started) = call(
        &follower,
        "POST",
        "/v1/deployments",
        Some(ops),
        Some(&start),
    )
    .await?;
    assert_eq!(status, 201, "{started}");
    let id = started["id"].as_str().unwrap().to_string();
    let (status, paused) = call(
        &leader,
        "POST",
        &format!("/v1/deployments/{id}/pause"),
        Some(ops),
        Some(&json!({})),
    )
    .await?;
    assert_eq!(status, 200, "{paused}");
    let events = paused["events"].as_array().unwrap();
    assert_eq!(events.first().unwrap()["by"], "t-operator", "{paused}");
    assert_eq!(events.last().unwrap()["by"], "t-operator", "{paused}");
    // State changes must be JSON: a cross-site form post is 415 even with a good token; a bodyless action
    // with the header and an empty body works.
    let http = reqwest::Client::new();
    let form = http
        .post(format!("http://{leader}/v1/deployments/{id}/rollback"))
        .bearer_auth(ops)
        .header("origin", "http://evil.example")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("message=x")
        .send()
        .await?;
    assert_eq!(form.status().as_u16(), 415);
    let answer: Value = form.json().await?;
    assert_eq!(answer["error"]["code"], "unsupported_media_type");
    let bare = http
        .post(format!("http://{leader}/v1/deployments/{id}/resume"))
        .bearer_auth(ops)
        .header("content-type", "application/json")
        .send()
        .await?;
    assert_eq!(bare.status().as_u16(), 200);
    let resumed: Value = bare.json().await?;
    assert_eq!(
        resumed["status"], "ROLL_FORWARD_AWAITING_PULSE",
        "{resumed}"
    );
    // Resumed, it awaits its first pulse (none came yet): the pulser's pulse moves it on, recorded
    // with the pulser token's name.
    let pulser = &secrets[2].1;
    let (status, pulsed) = call(
        &follower,
        "POST",
        &format!("/v1/deployments/{id}/pulse"),
        Some(pulser),
        Some(&json!({})),
    )
    .await?;
    assert_eq!(status, 200, "{pulsed}");
    assert_eq!(pulsed["status"], "OK", "{pulsed}");
    let (_, view) = call(
        &leader,
        "GET",
        &format!("/v1/deployments/{id}"),
        Some(ops),
        None,
    )
    .await?;
    let moved_on = view["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["message"] == "pulse received")
        .unwrap_or_else(|| panic!("no pulse event: {view}"));
    assert_eq!(moved_on["by"], "t-pulser", "{moved_on}");

    // A revoked token is refused by every server once it has applied the revocation.
    let temp = create_token(&leader, &admin, "temp", "reader", None).await?;
    for s in &cluster.servers {
        eventually(|| async {
            let (status, _) = call(&s.http, "GET", "/v1/resources", Some(&temp), None)
                .await
                .ok()?;
            (status == 200).then_some(())
        })
        .await?;
    }
    let (status, revoked) =
        call(&follower, "DELETE", "/v1/tokens/temp", Some(&admin), None).await?;
    assert_eq!(status, 200, "{revoked}");
    for s in &cluster.servers {
        eventually(|| async {
            let (status, _) = call(&s.http, "GET", "/v1/resources", Some(&temp), None)
                .await
                .ok()?;
            (status == 401).then_some(())
        })
        .await
        .with_context(|| format!("revoked token still accepted by {}", s.http))?;
    }

    // No secret (nor its hash) in the token list, nor in any log.
    let (status, list) = call(&leader, "GET", "/v1/tokens", Some(&admin), None).await?;
    assert_eq!(status, 200);
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["bootstrap", "t-agent", "t-operator", "t-pulser", "t-reader"]
    );
    let listed = list.to_string();
    assert!(
        !listed.contains("secret") && !listed.contains("hash"),
        "{listed}"
    );
    let logs = cluster.logs();
    assert!(
        logs.contains("t-operator"),
        "writes are logged with the token's name"
    );
    for (_, secret) in secrets.iter().chain([(Role::Reader, temp)].iter()) {
        assert!(!listed.contains(secret.as_str()));
        assert!(!logs.contains(&secret[4..]), "a secret is in a server log");
    }
    Ok(())
}

/// Retries `f` for up to 10 s.
async fn eventually<T, F, Fut>(mut f: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(v) = f().await {
            return Ok(v);
        }
        if Instant::now() >= deadline {
            bail!("condition not met within 10 s");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
