//! The in-process server the API's request tests run against: a one-node cluster on its own raft runtime,
//! as `convoy server` runs it, and a JSON request builder.

use std::collections::BTreeMap;
use std::time::Duration;

use actix_web::test;
use convoy_raft::{Member, RaftConfig, RaftNode};

use crate::machine::Machine;
use crate::replica::Replica;

/// A one-node cluster on its own raft runtime, as `convoy server` runs it.
pub(crate) struct OneNode {
    pub rt: tokio::runtime::Runtime,
    pub replica: Replica,
    _dir: tempfile::TempDir,
}

impl OneNode {
    pub async fn start() -> OneNode {
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
        let replica = Replica::new(node, rt.handle().clone()).with_providers(vec!["prom".into()]);
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

    pub async fn stop(self) {
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

/// A request with a JSON content type and `body`.
pub(crate) fn request(method: &str, path: &str, body: Vec<u8>) -> test::TestRequest {
    test::TestRequest::default()
        .method(method.parse().unwrap())
        .uri(path)
        .insert_header(("content-type", "application/json"))
        .set_payload(body)
}
