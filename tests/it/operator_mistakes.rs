//! Operator mistakes never take the cluster down (issue 27): a follower restarted on an emptied
//! data dir with its unchanged config, or as `existing`, is refused by its peers and never
//! reaches their raft cores; the leader keeps serving writes and no server panics.

use std::process::Command;
use std::time::{Duration, Instant};

use convoy_tests::{convoy_bin, eventually, Cluster, ClusterOptions, RawClient};
use serde_json::json;

/// Server `id`'s data dir in the harness's layout (`data_dir = "data/{id}"`).
fn data_dir(cluster: &Cluster, id: u64) -> std::path::PathBuf {
    cluster.dir().join("data").join(id.to_string())
}

/// Stops follower `id`, empties its data dir, and sets `initial_cluster_state` in its config.
fn wipe(cluster: &mut Cluster, id: u64, state: &str) -> anyhow::Result<()> {
    cluster.server_mut(id).kill();
    std::fs::remove_dir_all(data_dir(cluster, id))?;
    let config = cluster.server(id).config.clone();
    let text = std::fs::read_to_string(&config)?
        .replace(
            "initial_cluster_state = \"new\"",
            &format!("initial_cluster_state = \"{state}\""),
        )
        .replace(
            "initial_cluster_state = \"existing\"",
            &format!("initial_cluster_state = \"{state}\""),
        );
    std::fs::write(&config, text)?;
    Ok(())
}

/// Writes a resource named `name` through `client`; the answer's status.
async fn write(client: &RawClient, name: &str) -> u16 {
    match client.post("/v1/resources", &json!({ "name": name })).await {
        Ok((status, _)) => status,
        Err(_) => 0,
    }
}

/// Every `period` for `span`, a write through `client` must answer 201.
async fn keeps_taking_writes(
    cluster: &Cluster,
    client: &RawClient,
    prefix: &str,
    span: Duration,
) -> anyhow::Result<()> {
    let until = Instant::now() + span;
    let mut i = 0;
    while Instant::now() < until {
        let status = write(client, &format!("{prefix}-{i}")).await;
        anyhow::ensure!(
            status == 201,
            "write {prefix}-{i} answered {status}\n{}",
            cluster.logs()
        );
        i += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}

fn no_panic(cluster: &Cluster) -> anyhow::Result<()> {
    for server in cluster.servers.values() {
        let log = std::fs::read_to_string(server.log_path()).unwrap_or_default();
        anyhow::ensure!(
            !log.contains("panicked"),
            "server {} panicked:\n{}",
            server.id,
            server.log_tail(40)
        );
    }
    Ok(())
}

fn a_follower(cluster: &Cluster, leader: u64) -> u64 {
    cluster
        .servers
        .keys()
        .copied()
        .find(|id| *id != leader)
        .expect("a follower")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wiped_follower_restarted_as_it_was_refuses_to_start_and_the_leader_keeps_writing(
) -> anyhow::Result<()> {
    let mut cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let client = cluster.server(leader).client();
    assert_eq!(write(&client, "before").await, 201);
    let wiped = a_follower(&cluster, leader);

    wipe(&mut cluster, wiped, "new")?;
    cluster.restart(wiped)?;

    // It asks its peers first, learns that they know it, and refuses to start, naming the way back.
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = cluster.server_mut(wiped).exit_status() {
            break status;
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the wiped server {wiped} still runs after 20 s\n{}",
            cluster.logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let log = cluster.server(wiped).log_tail(20);
    assert!(!status.success(), "it exited with {status}: {log}");
    assert!(log.contains("replace-member"), "no recovery named: {log}");

    keeps_taking_writes(&cluster, &client, "after", Duration::from_secs(3)).await?;
    let (status, body) = client.get("/readyz").await?;
    assert_eq!(status, 200, "the leader is not ready: {body}");
    no_panic(&cluster)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wiped_member_never_votes_as_the_member_it_was() -> anyhow::Result<()> {
    let mut cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let client = cluster.server(leader).client();
    assert_eq!(write(&client, "before").await, 201);
    let wiped = a_follower(&cluster, leader);
    let other = cluster
        .servers
        .keys()
        .copied()
        .find(|id| *id != leader && *id != wiped)
        .expect("a third server");

    // Started as `existing` it waits to be added; its peers refuse it as the member it was.
    wipe(&mut cluster, wiped, "existing")?;
    cluster.restart(wiped)?;
    keeps_taking_writes(&cluster, &client, "refused", Duration::from_secs(3)).await?;
    let (status, body) = cluster.server(wiped).client().get("/readyz").await?;
    assert_eq!(status, 503, "the wiped server says ready: {body}");
    let why = body.to_string();
    assert!(
        why.contains("refused"),
        "its /readyz does not say that its peers refuse it: {body}"
    );
    // `convoy cluster status` shows it refused, with the reason: not a follower with lag 0.
    let out = std::process::Command::new(convoy_tests::convoy_bin())
        .args([
            "cluster",
            "status",
            "--server",
            &cluster.server(leader).http_addr,
        ])
        .env_remove("CONVOY_SERVER")
        .env_remove("CONVOY_TOKEN")
        .env_remove("CONVOY_CONTEXT")
        .env("HOME", cluster.dir())
        .env("XDG_CONFIG_HOME", cluster.dir())
        .output()?;
    let status = String::from_utf8_lossy(&out.stdout);
    let row = status
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&wiped.to_string()))
        .unwrap_or_default();
    assert!(
        out.status.success() && row.contains("refused: ") && !row.contains("follower"),
        "{status}{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Without the leader, the remaining server needs the wiped one's vote: it must not get it.
    cluster.server_mut(leader).kill();
    let other_client = cluster.server(other).client();
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        let (_, body) = other_client.get("/v1/cluster").await?;
        assert!(
            body["leader_id"].as_u64() != Some(other),
            "server {other} was elected with the vote of the wiped server {wiped}\n{}",
            cluster.logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The old leader back, the cluster of the two intact members writes again.
    cluster.restart(leader)?;
    cluster
        .wait_leader_among(&[leader, other], Duration::from_secs(15))
        .await?;
    let api = cluster.api_client().with_patience(Duration::from_secs(10));
    api.post::<_, serde_json::Value>("/v1/resources", &json!({"name": "healed"}))
        .await?;
    no_panic(&cluster)
}

/// docs/RELIABILITY.md, "Replacing a server", step by step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replacing_a_server_runbook_works_word_for_word() -> anyhow::Result<()> {
    let mut cluster = Cluster::start_with(ClusterOptions::for_tests(3).with_auth()).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.api_client().with_patience(Duration::from_secs(10));
    for i in 0..20 {
        api.post::<_, serde_json::Value>("/v1/resources", &json!({"name": format!("r{i}")}))
            .await?;
    }
    let lost = a_follower(&cluster, leader);

    // 1. Stop the server, and give it an empty data dir at the same path.
    cluster.server_mut(lost).kill();
    std::fs::remove_dir_all(data_dir(&cluster, lost))?;
    std::fs::create_dir_all(data_dir(&cluster, lost))?;
    // 2. In its config, set initial_cluster_state = "existing".
    let config = cluster.server(lost).config.clone();
    let text = std::fs::read_to_string(&config)?.replace(
        "initial_cluster_state = \"new\"",
        "initial_cluster_state = \"existing\"",
    );
    std::fs::write(&config, text)?;
    // 3. Start it: /readyz answers 503 refused_by_peers, naming replace-member.
    cluster.restart(lost)?;
    let lost_client = cluster.server(lost).client();
    let body = eventually(Duration::from_secs(15), || async {
        match lost_client.get("/readyz").await {
            Ok((503, body)) if body["error"]["code"] == "refused_by_peers" => Some(body),
            _ => None,
        }
    })
    .await
    .map_err(|e| anyhow::anyhow!("{e}\n{}", cluster.logs()))?;
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("convoy cluster replace-member {lost}")),
        "{body}"
    );

    // 4. convoy cluster replace-member ID, with an admin token.
    let healthy = cluster.server(leader).url();
    let out = Command::new(convoy_bin())
        .args(["cluster", "replace-member", &lost.to_string()])
        .env("CONVOY_SERVER", &healthy)
        .env("CONVOY_TOKEN_FILE", cluster.dir().join("admin-token"))
        .env_remove("CONVOY_TOKEN")
        .output()?;
    assert!(
        out.status.success(),
        "replace-member failed: {}{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        cluster.logs()
    );
    let (_, info) = cluster.server(leader).client().get("/v1/cluster").await?;
    let members = info["members"].as_array().cloned().unwrap_or_default();
    let replaced = members
        .iter()
        .find(|m| m["id"].as_u64() == Some(lost))
        .unwrap_or_else(|| panic!("server {lost} is no member: {info}"));
    assert_ne!(replaced["role"], "learner", "not promoted: {info}");

    // 5. Its /readyz answers 200 once it has applied what it knows committed; it has every write.
    eventually(Duration::from_secs(15), || async {
        matches!(lost_client.get("/readyz").await, Ok((200, _))).then_some(())
    })
    .await
    .map_err(|e| anyhow::anyhow!("{e}\n{}", cluster.logs()))?;
    let (status, resources) = lost_client.get("/v1/resources").await?;
    assert_eq!(status, 200, "{resources}");
    let names = resources.to_string();
    assert!(
        (0..20).all(|i| names.contains(&format!("\"r{i}\""))),
        "{resources}"
    );

    // The cluster takes writes with the replaced server as a voter, and survives losing the leader.
    cluster.server_mut(leader).kill();
    api.post::<_, serde_json::Value>("/v1/resources", &json!({"name": "after"}))
        .await?;
    no_panic(&cluster)
}

/// WARN lines of server `id`'s log.
fn warnings(cluster: &Cluster, id: u64) -> Vec<String> {
    std::fs::read_to_string(cluster.server(id).log_path())
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("\"level\":\"WARN\"") || l.contains(" WARN "))
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_down_costs_one_warn_when_it_goes_and_one_when_it_is_back() -> anyhow::Result<()>
{
    let mut cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let down = a_follower(&cluster, leader);
    let before = warnings(&cluster, leader).len();
    cluster.server_mut(down).kill();
    // Writes go on meanwhile: heartbeats and appends to the dead follower fail many times a second.
    keeps_taking_writes(
        &cluster,
        &cluster.server(leader).client(),
        "down",
        Duration::from_secs(4),
    )
    .await?;
    let while_down: Vec<String> = warnings(&cluster, leader).split_off(before);
    assert!(
        while_down.len() <= 3,
        "{} WARN lines in 4 s with a follower down:\n{}",
        while_down.len(),
        while_down.join("\n")
    );
    assert!(
        while_down
            .iter()
            .any(|l| l.contains(&format!("peer {down} is unreachable"))),
        "no line says the follower is down:\n{}",
        while_down.join("\n")
    );
    cluster.restart(down)?;
    eventually(Duration::from_secs(15), || async {
        warnings(&cluster, leader)
            .iter()
            .any(|l| l.contains(&format!("peer {down} is back")))
            .then_some(())
    })
    .await
    .map_err(|e| anyhow::anyhow!("no line says it is back: {e}\n{}", cluster.logs()))?;
    no_panic(&cluster)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_restored_from_an_old_backup_is_refused_and_the_leader_keeps_writing(
) -> anyhow::Result<()> {
    let mut cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let client = cluster.server(leader).client();
    assert_eq!(write(&client, "before-backup").await, 201);
    let restored = a_follower(&cluster, leader);
    let data = data_dir(&cluster, restored);
    let backup = cluster.dir().join("backup");

    // A backup of the stopped follower; then it runs on and acknowledges more entries.
    cluster.server_mut(restored).kill();
    copy_dir(&data, &backup)?;
    cluster.restart(restored)?;
    let follower = cluster.server(restored).client();
    for i in 0..30 {
        assert_eq!(write(&client, &format!("acked-{i}")).await, 201);
    }
    eventually(Duration::from_secs(10), || async {
        let (_, r) = follower.get("/v1/resources/acked-29").await.ok()?;
        (r["name"] == "acked-29").then_some(())
    })
    .await?;

    // The old backup restored: its log went backwards below what it acknowledged.
    cluster.server_mut(restored).kill();
    std::fs::remove_dir_all(&data)?;
    copy_dir(&backup, &data)?;
    cluster.restart(restored)?;
    keeps_taking_writes(&cluster, &client, "after", Duration::from_secs(4)).await?;
    let log = std::fs::read_to_string(cluster.server(leader).log_path())?;
    assert!(
        log.contains("lost log entries it had acknowledged"),
        "the leader does not report the reverted follower:\n{}",
        cluster.logs()
    );
    let metrics = reqwest::get(format!(
        "http://{}/metrics",
        cluster.server(leader).http_addr
    ))
    .await?
    .text()
    .await?;
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("convoy_raft_follower_reversions_total") && !l.ends_with(" 0")),
        "no reversion counted"
    );
    no_panic(&cluster)
}

/// A server started on a data dir of another state format (here: one recorded before formats were,
/// format 1) refuses to start, naming both formats, instead of skipping the commands it cannot decode;
/// the others keep writing (docs/RELIABILITY.md, "Upgrades").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_dir_of_another_state_format_is_refused_at_start() -> anyhow::Result<()> {
    let mut cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let client = cluster.server(leader).client();
    assert_eq!(write(&client, "before").await, 201);
    let old = a_follower(&cluster, leader);
    cluster.server_mut(old).kill();
    let identity = data_dir(&cluster, old).join("identity");
    let text = std::fs::read_to_string(&identity)?;
    assert!(text.contains("state_format = "), "{text}");
    // What a build before formats were wrote: no state_format line.
    let before: String = text
        .lines()
        .filter(|l| !l.starts_with("state_format"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&identity, before)?;
    cluster.restart(old)?;

    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = cluster.server_mut(old).exit_status() {
            break status;
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "server {old} on a format-1 data dir still runs after 20 s\n{}",
            cluster.logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let log = cluster.server(old).log_tail(20);
    assert!(!status.success(), "it exited with {status}: {log}");
    let refusal = format!(
        "holds state format 1, and this build reads format {}",
        convoy_actors::domain::STATE_FORMAT
    );
    assert!(log.contains(&refusal), "{log}");
    keeps_taking_writes(&cluster, &client, "after", Duration::from_secs(3)).await?;
    no_panic(&cluster)
}

/// Copies directory `from` into `to` (replacing it), files and subdirectories (a stopped server's data dir: a
/// backup).
fn copy_dir(from: &std::path::Path, to: &std::path::Path) -> anyhow::Result<()> {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Issue 37 §4: a server started on another cluster's data dir (the same server id, its own config and
/// secret) refuses its peers as another cluster's; it was ready and served that cluster's state. Now its
/// `/readyz` says 503 with the reason, its reads and writes are refused, and its peers go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_on_another_clusters_data_is_not_ready_and_serves_nothing() -> anyhow::Result<()> {
    let mut ours = Cluster::start(3).await?;
    let mut other = Cluster::start(1).await?;
    let odd = *other.servers.keys().next().expect("one server");
    let (status, _) = other
        .server(odd)
        .client()
        .post("/v1/resources", &json!({"name": "from-the-other-cluster"}))
        .await?;
    anyhow::ensure!(status == 201, "the other cluster took no write: {status}");
    other.server_mut(odd).kill();
    ours.server_mut(odd).kill();
    copy_dir(&data_dir(&other, odd), &data_dir(&ours, odd))?;
    ours.restart(odd)?;
    let survivors: Vec<u64> = ours
        .servers
        .keys()
        .copied()
        .filter(|id| *id != odd)
        .collect();
    let leader = ours
        .wait_leader_among(&survivors, Duration::from_secs(20))
        .await?;
    let client = ours.server(odd).client();
    let seen = eventually(Duration::from_secs(20), || {
        let client = client.clone();
        async move {
            // Right after its restart it may still say `no_leader`: wait for the reason that names the cause.
            match client.get("/readyz").await {
                Ok((503, body)) if body["error"]["code"] == "another_cluster" => Some(body),
                _ => None,
            }
        }
    })
    .await;
    let body = ours.logs_on_error(seen)?;
    assert_eq!(body["error"]["code"], "another_cluster", "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("different clusters"), "{message}");
    let (status, body) = client.get("/v1/resources").await?;
    assert_eq!(status, 503, "it served the other cluster's state: {body}");
    assert!(
        !body.to_string().contains("from-the-other-cluster"),
        "{body}"
    );
    let (status, body) = client.post("/v1/resources", &json!({"name": "x"})).await?;
    assert_eq!(status, 503, "it took a write: {body}");
    // Its peers stay ready (once they exchanged with each other since the refusal) and keep taking writes.
    let good = ours.server(leader).client();
    let ready = eventually(Duration::from_secs(10), || {
        let good = good.clone();
        async move { matches!(good.get("/readyz").await, Ok((200, _))).then_some(()) }
    })
    .await;
    ours.logs_on_error(ready)?;
    keeps_taking_writes(
        &ours,
        &ours.server(leader).client(),
        "ours",
        Duration::from_secs(2),
    )
    .await?;
    drop(other);
    no_panic(&ours)
}
