//! Fuzzes every JSON-bodied endpoint of the real API (one in-process server on a one-node
//! cluster) with byte soup, JSON-ish text and mutated valid bodies: no panic, no 500, and the
//! server still answers correctly afterwards. Also checks the JSON body limit.
//!
//! Cases default to 512; `PROPTEST_CASES=100000` runs more, `FUZZ_SEED=n` replays one seed.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use actix::Actor;
use actix_web::{http::StatusCode, test, web, App};
use convoy_actors::leader::{Supervisor, SupervisorConfig, DEFAULT_DEPLOYMENT_HISTORY};
use convoy_raft::{Member, RaftConfig, RaftNode};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use crate::api;
use crate::api::reports::ReportGateway;
use crate::leader::{self, ServerHost};
use crate::machine::Machine;
use crate::replica::Replica;

/// Panics seen anywhere in the process (raft runtime, actors, handlers) since [`catch_panics`].
static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn catch_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(info.to_string());
        previous(info);
    }));
}

fn cases() -> usize {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(512)
}

fn seed() -> u64 {
    std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random)
}

/// A one-node cluster on its own raft runtime, as `convoy server` runs it.
struct OneNode {
    rt: tokio::runtime::Runtime,
    replica: Replica,
    _dir: tempfile::TempDir,
}

impl OneNode {
    async fn start() -> OneNode {
        let dir = tempfile::tempdir().unwrap();
        let raft_addr = free_addr();
        let mut config = RaftConfig::new(1, dir.path().join("data"), &raft_addr, "127.0.0.1:1");
        config.secret = b"fuzz".to_vec();
        config.bootstrap = true;
        config.initial_cluster = BTreeMap::from([(
            1,
            Member {
                raft_addr: raft_addr.clone(),
                http_addr: "127.0.0.1:1".into(),
            },
        )]);
        config.heartbeat_ms = 50;
        config.election_timeout_ms = (150, 300);
        config.request_timeout = Duration::from_secs(3);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let node = rt
            .spawn(RaftNode::<Machine>::start(config))
            .await
            .unwrap()
            .unwrap();
        let replica = Replica::new(node, rt.handle().clone());
        for _ in 0..200 {
            if replica.readiness().is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        replica.readiness().expect("one-node cluster elects itself");
        OneNode {
            rt,
            replica,
            _dir: dir,
        }
    }

    async fn stop(self) {
        let node = self.replica.node().clone();
        let _ = self.rt.spawn(async move { node.shutdown().await }).await;
        // Wait for the runtime's tasks to be dropped (they hold the RocksDB handle): a runtime
        // left to die in the background races the process exit, and RocksDB aborts with
        // "pthread lock: Invalid argument" when its mutexes are destroyed under a live DB.
        // A runtime cannot be dropped on an async thread, hence the plain thread.
        let rt = self.rt;
        std::thread::spawn(move || rt.shutdown_timeout(Duration::from_secs(5)))
            .join()
            .expect("the raft runtime shuts down");
    }
}

fn free_addr() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().to_string()
}

/// One JSON-bodied route and a valid body for it.
struct Seed {
    method: &'static str,
    path: &'static str,
    body: Value,
}

/// Valid requests, in an order that makes each one succeed on a fresh cluster.
fn seeds() -> Vec<Seed> {
    let s = |method, path, body| Seed { method, path, body };
    vec![
        s("POST", "/v1/resources", json!({"name": "web"})),
        s(
            "POST",
            "/v1/resources/web/versions",
            json!({"label": "v1", "artifact": {"url": "http://a/web-1", "sha256": "00000000000000000000000000000000000000000000000000000000000000aa", "size": 1},
                   "metadata": {"k": "v", "n": 1}, "depends_on": [], "health_port": 8080}),
        ),
        s("POST", "/v1/resources/web/versions", json!({"label": "v2"})),
        s(
            "POST",
            "/v1/consumers",
            json!({"name": "app", "nodes": ["n1", "n2", "n3"]}),
        ),
        s(
            "PUT",
            "/v1/consumers/app/nodes",
            json!({"add": ["n4"], "remove": ["n3"]}),
        ),
        s(
            "PUT",
            "/v1/consumers/app/subscriptions/web",
            json!({"mode": "strong", "strategy": {"rolling": {"install_window": 1, "download_window": 2}},
                   "completion": {"quorum": 1, "timeout_ms": 1000}}),
        ),
        s(
            "POST",
            "/v1/nodes/n1/report",
            json!({"active": true, "resources": {"web": {"interested": true, "current": 1,
                   "versions": {"1": {"downloaded": true, "installed": true, "done": true, "healthy": true}}}}}),
        ),
        s(
            "POST",
            "/v1/deployments",
            json!({"consumer": "app", "resource": "web", "version": 2,
                   "strategy": {"batch": {"sizes": [1, 2], "autopause": false}}, "nodes": "0-1",
                   "min_healthy_ms": 10, "max_failures_per_node": 1, "max_failed_nodes": 1,
                   "rollback_on_failure": true, "pulse_interval_ms": 1000,
                   "completion": {"quorum": 1, "timeout_ms": 1000}, "message": "go"}),
        ),
        s(
            "POST",
            "/v1/deployments/d-1/pause",
            json!({"message": "hold"}),
        ),
        s("POST", "/v1/deployments/d-1/resume", json!({})),
        s(
            "POST",
            "/v1/nodes/reports",
            json!({"reports": [{"node": "n2", "active": true, "resources": {"web": {"current": 1,
                   "versions": {"1": {"downloaded": true, "installed": true, "done": true}}}}},
                   {"node": "n4"}]}),
        ),
        s(
            "POST",
            "/v1/groups",
            json!({"name": "g", "members": [{"consumer": "app", "resource": "web"}]}),
        ),
        s(
            "POST",
            "/v1/group-deployments",
            json!({"group": "g", "versions": {"web": 2}}),
        ),
        s(
            "POST",
            "/v1/debug/faults",
            json!({"blocked": [2], "links": {"3": {"drop_probability": 0.5,
                   "duplicate_probability": 0.5, "delay_ms": 1, "jitter_ms": 1}}}),
        ),
        // Only ever sent malformed: a valid one would wait for a server that does not exist.
        s(
            "POST",
            "/v1/cluster/members",
            json!({"id": 0, "raft_addr": "x", "http_addr": "y"}),
        ),
    ]
}

/// Values that stress a field: wrong types, out-of-range and boundary numbers, odd strings,
/// nesting near and beyond serde_json's recursion limit.
fn weird(rng: &mut StdRng) -> Value {
    let nested = |depth: usize| (0..depth).fold(json!(1), |v, _| json!([v]));
    match rng.gen_range(0..24) {
        0 => json!(u64::MAX),
        1 => json!(u64::MAX - 1),
        2 => json!(-1),
        3 => json!(i64::MIN),
        4 => json!(1e308),
        5 => json!(0.5),
        6 => json!(0),
        7 => json!(u64::from(u32::MAX) + 1),
        8 => json!(u32::MAX),
        9 => json!(u64::from(u16::MAX) + 1),
        10 => json!(""),
        11 => json!("x".repeat(rng.gen_range(1000..100_000))),
        12 => json!("\u{0}\u{202e}ü💥\u{ffff}"),
        13 => json!("d-18446744073709551616"),
        14 => json!(true),
        15 => Value::Null,
        16 => json!([]),
        17 => json!({}),
        18 => nested(100),
        19 => nested(200),
        20 => json!([u64::MAX, 0, u64::MAX]),
        21 => json!({"rolling": {"install_window": 0, "download_window": u64::MAX}}),
        22 => json!({"batch": {"sizes": [], "autopause": true}}),
        _ => json!({"": {"": [null]}}),
    }
}

/// Replaces one value somewhere in `v` (or adds an unknown field, or drops one).
fn mutate(v: &mut Value, rng: &mut StdRng) {
    match v {
        Value::Object(map) if !map.is_empty() && rng.gen_bool(0.7) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let key = &keys[rng.gen_range(0..keys.len())];
            match rng.gen_range(0..10) {
                0 => {
                    map.remove(key);
                }
                1 => {
                    map.insert(format!("{key}_"), weird(rng));
                }
                _ => mutate(map.get_mut(key).unwrap(), rng),
            }
        }
        Value::Array(items) if !items.is_empty() && rng.gen_bool(0.7) => {
            let i = rng.gen_range(0..items.len());
            mutate(&mut items[i], rng);
        }
        _ => *v = weird(rng),
    }
}

/// Text that looks like JSON: tokens of the API's own vocabulary, sometimes balanced.
fn jsonish(rng: &mut StdRng) -> String {
    const TOKENS: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        "\"name\"",
        "\"nodes\"",
        "\"version\"",
        "\"strategy\"",
        "\"rolling\"",
        "\"batch\"",
        "\"sizes\"",
        "\"resources\"",
        "\"versions\"",
        "\"mode\"",
        "\"links\"",
        "\"1\"",
        "1",
        "-0",
        "1e999",
        "18446744073709551616",
        "-9223372036854775809",
        "0.0000001",
        "true",
        "null",
        "\"\\ud800\"",
        "\"\\u0000\"",
        "\"",
        "\\",
        " ",
        "\n",
    ];
    let n = rng.gen_range(0..80);
    (0..n)
        .map(|_| TOKENS[rng.gen_range(0..TOKENS.len())])
        .collect()
}

/// Forces `"id": 0` into a body that would add a real member: adding a member that does not
/// exist wedges the cluster (see `adding_an_unreachable_member_does_not_wedge_writes`).
fn never_a_valid_member(body: Vec<u8>) -> Vec<u8> {
    match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(mut map)) if map.get("id").is_some_and(|id| id.as_u64() != Some(0)) => {
            map.insert("id".into(), json!(0));
            Value::Object(map).to_string().into_bytes()
        }
        _ => body,
    }
}

fn body_for(seed: &Seed, rng: &mut StdRng) -> Vec<u8> {
    match rng.gen_range(0..8) {
        0 => (0..rng.gen_range(0..512)).map(|_| rng.gen()).collect(),
        1 => jsonish(rng).into_bytes(),
        2 => {
            // Deep nesting as raw text, far past any recursion limit.
            let depth = rng.gen_range(129..50_000);
            format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes()
        }
        3 => {
            // A valid body cut short.
            let full = seed.body.to_string().into_bytes();
            let cut = rng.gen_range(0..full.len());
            full[..cut].to_vec()
        }
        _ => {
            let mut body = seed.body.clone();
            for _ in 0..rng.gen_range(1..4) {
                mutate(&mut body, rng);
            }
            body.to_string().into_bytes()
        }
    }
}

fn request(method: &str, path: &str, body: Vec<u8>) -> test::TestRequest {
    test::TestRequest::default()
        .method(method.parse().unwrap())
        .uri(path)
        .insert_header(("content-type", "application/json"))
        .set_payload(body)
}

/// Anything but a server error: 5xx other than 503 is a bug (503 is an honest "not now").
fn assert_not_a_server_error(status: StatusCode, what: &str, body: &[u8]) {
    assert!(
        !status.is_server_error() || status == StatusCode::SERVICE_UNAVAILABLE,
        "{what} answered {status}: {}",
        String::from_utf8_lossy(body)
    );
}

macro_rules! app {
    ($node:expr, $supervisor:expr) => {
        test::init_service(
            App::new()
                .app_data(web::Data::new($node.replica.clone()))
                .app_data(web::Data::new(ReportGateway::new(
                    $supervisor.clone(),
                    crate::api::reports::Forwarder::plain(),
                )))
                .configure(|cfg| api::configure(cfg, true)),
        )
        .await
    };
}

#[actix_web::test]
async fn json_endpoints_survive_garbage_and_mutated_bodies() {
    catch_panics();
    let node = OneNode::start().await;
    let supervisor = Supervisor::new(
        ServerHost::new(node.replica.clone()),
        SupervisorConfig {
            node_timeout: Duration::from_secs(30),
            deployment_history: DEFAULT_DEPLOYMENT_HISTORY,
            forget_nodes_after: Duration::ZERO,
        },
    )
    .start();
    leader::watch(&node.replica, node.rt.handle(), supervisor.clone());
    let app = app!(node, supervisor);

    let seeds = seeds();
    for seed in &seeds {
        let resp = test::call_service(
            &app,
            request(seed.method, seed.path, seed.body.to_string().into_bytes()).to_request(),
        )
        .await;
        let status = resp.status();
        let body = test::read_body(resp).await;
        assert_not_a_server_error(status, seed.path, &body);
    }

    let seed_value = seed();
    println!("FUZZ_SEED={seed_value}");
    let mut rng = StdRng::seed_from_u64(seed_value);
    let n = cases();
    for case in 0..n {
        let target = &seeds[rng.gen_range(0..seeds.len())];
        let mut body = body_for(target, &mut rng);
        if target.path == "/v1/cluster/members" {
            body = never_a_valid_member(body);
        }
        let shown = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
        let started = std::time::Instant::now();
        let resp =
            test::call_service(&app, request(target.method, target.path, body).to_request()).await;
        if started.elapsed() > Duration::from_secs(1) {
            println!(
                "slow ({:?}): case {case}: {} {} with {shown}",
                started.elapsed(),
                target.method,
                target.path
            );
        }
        let status = resp.status();
        let answer = test::read_body(resp).await;
        let what = format!(
            "case {case} of {n} (FUZZ_SEED={seed_value}): {} {} with {shown}",
            target.method, target.path
        );
        assert_not_a_server_error(status, &what, &answer);
        if status.is_client_error() {
            let err: Value = serde_json::from_slice(&answer)
                .unwrap_or_else(|e| panic!("{what}: error body is not JSON ({e})"));
            assert!(err["error"]["code"].is_string(), "{what}: {err}");
        }
        let panics = PANICS.lock().unwrap().clone();
        assert!(panics.is_empty(), "{what}: panicked: {panics:?}");
    }

    // Still the same server: healthy, and a fresh valid request works.
    let ready =
        test::call_service(&app, test::TestRequest::get().uri("/readyz").to_request()).await;
    assert_eq!(ready.status(), StatusCode::OK);
    let resp = test::call_service(
        &app,
        request(
            "POST",
            "/v1/resources",
            json!({"name": "after-the-fuzz"}).to_string().into_bytes(),
        )
        .to_request(),
    )
    .await;
    let status = resp.status();
    let body = test::read_body(resp).await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "FUZZ_SEED={seed_value}: {}",
        String::from_utf8_lossy(&body)
    );
    node.stop().await;
    let panics = PANICS.lock().unwrap().clone();
    assert!(panics.is_empty(), "panicked: {panics:?}");
}

#[actix_web::test]
async fn json_body_over_the_limit_is_refused_without_reading_it() {
    // The limit comes from `api::configure`; a probe route shows it applies to every JSON body.
    let app = test::init_service(
        App::new()
            .configure(|cfg| api::configure(cfg, false))
            .route(
                "/probe",
                web::post().to(|body: web::Json<Value>| async move {
                    actix_web::HttpResponse::Ok().json(body.into_inner())
                }),
            ),
    )
    .await;
    let limit = 4 * 1024 * 1024;
    let fits = format!("\"{}\"", "x".repeat(limit - 2));
    let resp = test::call_service(
        &app,
        request("POST", "/probe", fits.into_bytes()).to_request(),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);

    let over = format!("\"{}\"", "x".repeat(limit));
    let resp = test::call_service(
        &app,
        request("POST", "/probe", over.into_bytes()).to_request(),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let err: Value = serde_json::from_slice(&test::read_body(resp).await).unwrap();
    assert_eq!(err["error"]["code"], "payload_too_large");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than allowed"),
        "{err}"
    );

    // A client announcing 1 GiB is refused on its Content-Length, before any byte is read.
    let req = request("POST", "/probe", b"{}".to_vec())
        .insert_header(("content-length", (1u64 << 30).to_string()))
        .to_request();
    let resp = test::call_service(&app, req).await;
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

/// A fresh one-node app without the leader's actors, for the regression tests below.
macro_rules! plain_app {
    ($node:expr) => {
        test::init_service(
            App::new()
                .app_data(web::Data::new($node.replica.clone()))
                .configure(|cfg| api::configure(cfg, true)),
        )
        .await
    };
}

/// POSTs `body` as JSON; the status and the answer's JSON (null when it is none).
macro_rules! post_json {
    ($app:expr, $path:expr, $body:expr) => {{
        let req = request("POST", $path, $body.to_string().into_bytes()).to_request();
        let resp = test::call_service(&$app, req).await;
        let status = resp.status();
        let body = test::read_body(resp).await;
        (
            status,
            serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null),
        )
    }};
}

#[actix_web::test]
async fn adding_an_unreachable_member_does_not_wedge_writes() {
    let node = OneNode::start().await;
    let app = plain_app!(node);
    let member = json!({"id": 2, "raft_addr": "x", "http_addr": "y"});
    let (status, _) = post_json!(app, "/v1/cluster/members", member);
    assert!(
        status.is_client_error() || status.is_server_error(),
        "{status}"
    );
    let (status, body) = post_json!(app, "/v1/resources", json!({"name": "still-writable"}));
    assert_eq!(status, StatusCode::CREATED, "{body}");
    node.stop().await;
}

#[actix_web::test]
async fn action_with_a_malformed_body_changes_nothing() {
    let node = OneNode::start().await;
    let app = plain_app!(node);
    for seed in seeds()
        .iter()
        .take(8)
        .filter(|s| !s.path.ends_with("/report"))
    {
        let req = request(seed.method, seed.path, seed.body.to_string().into_bytes()).to_request();
        let status = test::call_service(&app, req).await.status();
        assert!(
            status.is_success(),
            "{} {}: {status}",
            seed.method,
            seed.path
        );
    }
    for bad in [
        json!({"mesage": "typo"}),
        json!(4294967296u64),
        json!({"message": 7}),
    ] {
        let (status, body) = post_json!(app, "/v1/deployments/d-1/pause", bad);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad} paused: {body}");
    }
    node.stop().await;
}
