//! Fuzzes every JSON-bodied endpoint of the real API (one in-process server on a one-node
//! cluster) with byte soup, JSON-ish text and mutated valid bodies: no panic, no 500, and the
//! server still answers correctly afterwards.
//!
//! Cases default to 512; `PROPTEST_CASES=100000` runs more, `FUZZ_SEED=n` replays one seed.

use std::sync::Mutex;
use std::time::Duration;

use actix::Actor;
use actix_web::{http::StatusCode, test, web, App};
use convoy_actors::leader::{Supervisor, SupervisorConfig, DEFAULT_DEPLOYMENT_HISTORY};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use super::test_server::{request, OneNode};
use crate::api;
use crate::api::reports::ReportGateway;
use crate::leader::{self, ServerHost};

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

/// One JSON-bodied route and a valid body for it.
pub(crate) struct Seed {
    pub method: &'static str,
    pub path: &'static str,
    pub body: Value,
}

/// Valid requests, in an order that makes each one succeed on a fresh cluster.
pub(crate) fn seeds() -> Vec<Seed> {
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
