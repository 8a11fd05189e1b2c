//! `convoy server`: the replica, its HTTP API and the leader's actors in one process.

use std::sync::Arc;

use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpServer};
use anyhow::Context;
use convoy_raft::RaftNode;

use actix::Actor;
use convoy_actors::leader::{Supervisor, SupervisorConfig};

use crate::api;
use crate::api::auth::AuthMode;
use crate::api::reports::Reports;
use crate::config::{is_loopback, ServerArgs};
use crate::engine::Engine;
use crate::leader::{self, ServerHost};
use crate::machine::Machine;

/// Runs a server until SIGTERM or SIGINT, then shuts down cleanly.
pub fn run(args: ServerArgs) -> anyhow::Result<()> {
    let config = args.resolve()?;
    let http_addr = config.raft.http_addr.clone();
    let id = config.raft.id;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("convoy-raft")
        .enable_all()
        .build()
        .context("cannot start the raft runtime")?;
    let node: Arc<RaftNode<Machine>> = rt
        .block_on(RaftNode::start(config.raft.clone()))
        .with_context(|| format!("cannot start server {id}"))?;
    tracing::info!(id, http = %http_addr, raft = %config.raft.raft_addr, "server started");
    let engine = Engine::new(node.clone(), rt.handle().clone());

    let node_timeout = config.node_timeout;
    let fault_injection = config.fault_injection;
    if fault_injection {
        tracing::warn!(
            "fault injection enabled: POST /v1/debug/faults is served (test configuration only)"
        );
    }
    let auth = config.auth;
    if auth == AuthMode::Off && !is_loopback(&http_addr) {
        tracing::warn!(http = %http_addr, "insecure_no_auth = true: the API accepts every request without a token");
    }
    if let Some(hash) = config.bootstrap_token {
        api::auth::bootstrap::spawn(engine.clone(), rt.handle(), hash);
    }
    let handle = rt.handle().clone();
    let served = actix_web::rt::System::new().block_on(async move {
        let supervisor = Supervisor::new(
            ServerHost::new(engine.clone()),
            SupervisorConfig { node_timeout },
        )
        .start();
        leader::watch(&engine, &handle, supervisor.clone());
        let data = web::Data::new(engine);
        let reports = web::Data::new(Reports::new(supervisor));
        let auth = web::Data::new(auth);
        HttpServer::new(move || {
            App::new()
                .wrap(from_fn(api::auth::check))
                .app_data(data.clone())
                .app_data(reports.clone())
                .app_data(auth.clone())
                .configure(|cfg| api::configure(cfg, fault_injection))
        })
        .workers(2)
        .shutdown_timeout(5)
        .bind(&http_addr)
        .with_context(|| format!("cannot listen on http_addr {http_addr}"))?
        .run()
        .await
        .context("http server failed")
    });
    tracing::info!(id, "stopping");
    rt.block_on(node.shutdown());
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    served
}
