//! `convoy server`: the replica, its HTTP API and the leader's actors in one process.

use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Service;
use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpServer};
use anyhow::Context;
use convoy_raft::RaftNode;

use actix::Actor;
use convoy_actors::leader::{Supervisor, SupervisorConfig};

use crate::api;
use crate::api::auth::AuthMode;
use crate::api::reports::{Forwarder, ReportGateway};
use crate::config::{is_loopback, ServerArgs};
use crate::leader::{self, ServerHost};
use crate::machine::Machine;
use crate::replica::Replica;
use crate::tls;

pub mod devmode;

/// HTTP worker threads (the raft runtime has two more).
const HTTP_WORKERS: usize = 2;
/// A client must send a request's head within this time of connecting (slowloris).
const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// An idle keep-alive connection is closed after this.
const KEEP_ALIVE: Duration = Duration::from_secs(30);
/// A whole request — its body read and its answer made — must finish within this, or it is answered
/// 408 and its connection freed (a slow body holds nothing longer). Above `request_timeout_ms`'s
/// default of 10 s, so a write waiting for a quorum answers on its own first.
const REQUEST_DEADLINE: Duration = Duration::from_secs(30);
/// File descriptors kept for the raft transport, RocksDB and logs when HTTP connections are capped.
const RESERVED_FDS: u64 = 512;
/// On SIGTERM a leader hands leadership over for at most this long before it stops anyway.
const HAND_OVER_PATIENCE: Duration = Duration::from_secs(3);
/// On stopping, raft's last tasks get this long to let go of the database before it is closed.
const STORAGE_CLOSE_PATIENCE: Duration = Duration::from_secs(3);

/// The HTTP server's connection cap, below the process's file limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpLimits {
    /// The soft `RLIMIT_NOFILE` in force (after raising it to the hard limit).
    pub open_files: u64,
    /// Connections each worker accepts before it waits for one to close.
    pub max_connections_per_worker: usize,
}

impl HttpLimits {
    /// The cap for `open_files` descriptors shared by `workers`: what is left after
    /// [`RESERVED_FDS`], split between the workers, at least 16 and at most 25,000 each.
    pub fn for_open_files(open_files: u64, workers: usize) -> Self {
        let spare = open_files.saturating_sub(RESERVED_FDS) / workers.max(1) as u64;
        Self {
            open_files,
            max_connections_per_worker: spare.clamp(16, 25_000) as usize,
        }
    }

    /// Raises this process's soft file limit to its hard limit, then caps connections below it.
    pub fn for_this_process(workers: usize) -> Self {
        use nix::sys::resource::{getrlimit, setrlimit, Resource};
        let open_files = match getrlimit(Resource::RLIMIT_NOFILE) {
            Ok((soft, hard)) if soft < hard => {
                match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
                    Ok(()) => hard,
                    Err(_) => soft,
                }
            }
            Ok((soft, _)) => soft,
            Err(_) => 1024,
        };
        Self::for_open_files(open_files, workers)
    }
}

/// How long a server whose replica stopped on a fatal error keeps answering `/readyz` with the reason
/// before it exits (long enough for a probe to see why, short enough that nothing waits on a dead core).
const FATAL_GRACE: Duration = Duration::from_secs(1);

/// Waits for the replica to stop on a fatal error (a storage failure: disk full, a corrupt
/// write; a panic of the raft core or the state machine), logs why, and exits non-zero so that a
/// supervisor restarts the process; meanwhile `/readyz` answers 503 `fatal`.
async fn exit_on_fatal(replica: Replica) {
    loop {
        if let Some(why) = replica.replica_view().fatal {
            tracing::error!(error = %why, "the replica stopped on a fatal error; exiting with status 1");
            tokio::time::sleep(FATAL_GRACE).await;
            std::process::exit(1);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Logs every panic through the log subscriber (a JSON object with `--log-format json`, the panic's
/// message and place in `panic`) instead of a bare line on standard error. A panic of the raft core
/// or the state machine then ends the core, which [`exit_on_fatal`] turns into an exit.
fn log_panics() {
    std::panic::set_hook(Box::new(|info| {
        let thread = std::thread::current();
        let backtrace = std::backtrace::Backtrace::capture();
        tracing::error!(
            panic = %info,
            thread = thread.name().unwrap_or("unnamed"),
            backtrace = %backtrace,
            "a thread panicked"
        );
    }));
}

/// Waits for SIGTERM or SIGINT; then, if this server leads, hands leadership to the most
/// up-to-date voter (on the raft runtime `rt`) while still answering HTTP (requests are forwarded
/// to the successor), and only then stops the HTTP server gracefully (in-flight requests finish).
async fn stop_on_signal(
    node: Arc<RaftNode<Machine>>,
    rt: tokio::runtime::Handle,
    http: actix_web::dev::ServerHandle,
) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::error!("cannot listen for SIGTERM/SIGINT; stop this server with SIGKILL");
        return;
    };
    let name = tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    };
    tracing::info!(signal = name, "stopping");
    let handed = rt.spawn(async move { node.hand_over(HAND_OVER_PATIENCE).await });
    if let Ok(Some(leader)) = handed.await {
        tracing::info!(leader, "leadership handed over; stopping the HTTP server");
    }
    http.stop(true).await;
}

/// Runs a server until SIGTERM or SIGINT, then (a leader after handing leadership over) shuts
/// down cleanly.
pub fn run(args: ServerArgs) -> anyhow::Result<()> {
    if args.dev {
        // The temp dir lives until the server stops, then is removed.
        let dev = devmode::prepare(args)?;
        let served = serve(dev.args.clone(), Some(&dev.banner));
        drop(dev);
        return served;
    }
    serve(args, None)
}

/// Runs a server from `args`; prints `banner` (dev mode's) once both its addresses are bound.
fn serve(args: ServerArgs, banner: Option<&str>) -> anyhow::Result<()> {
    let config = args.resolve()?;
    log_panics();
    crate::metrics::scrape::mark_start();
    let http_addr = config.raft.http_addr.clone();
    // TLS material is read before anything starts: a bad file stops the server with its name.
    let tls = match &config.tls {
        Some(files) => Some((tls::server_config(files)?, Forwarder::tls(files)?)),
        None => None,
    };
    // So is the API's address: one in use stops the server before its raft node starts.
    let listeners = crate::listener::bind(&http_addr)?;
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
    // The database is closed here, on the main thread, before the process exits (see StorageHold).
    let storage = node.hold_storage();
    tracing::info!(id, http = %http_addr, raft = %config.raft.raft_addr, "server started");
    if let Some(banner) = banner {
        println!("{banner}");
    }
    let providers = config.analysis_providers.iter().map(|p| p.name.clone());
    let mut replica =
        Replica::new(node.clone(), rt.handle().clone()).with_providers(providers.collect());
    if config.bootstrap_token.is_some() {
        replica = replica.with_bootstrap_token();
    }
    rt.spawn(exit_on_fatal(replica.clone()));
    crate::analysis::runner::spawn(
        replica.clone(),
        rt.handle(),
        config.analysis_providers.clone(),
    );

    let node_timeout = config.node_timeout;
    let deployment_history = config.deployment_history;
    let forget_nodes_after = config.forget_nodes_after;
    let fault_injection = config.fault_injection;
    if fault_injection {
        tracing::warn!(
            "fault injection enabled: POST /v1/debug/faults is served (test configuration only)"
        );
    }
    let auth = config.auth;
    let hosts = config.hosts.clone();
    let report_rates = config.report_rates;
    if auth == AuthMode::Off && !is_loopback(&http_addr) {
        tracing::warn!(http = %http_addr, "insecure_no_auth = true: the API accepts every request without a token");
    }
    if let Some(hash) = config.bootstrap_token {
        api::auth::bootstrap::spawn(replica.clone(), rt.handle(), hash);
    }
    let fleet_limits = config.fleet_limits;
    api::limits::spawn(replica.clone(), rt.handle(), fleet_limits);
    let handle = rt.handle().clone();
    let served = actix_web::rt::System::new().block_on(async move {
        let supervisor = Supervisor::new(
            ServerHost::new(replica.clone()),
            SupervisorConfig {
                node_timeout,
                deployment_history,
                forget_nodes_after,
            },
        )
        .start();
        leader::watch(&replica, &handle, supervisor.clone());
        crate::metrics::scrape::watch_elections(&replica, &handle);
        let data = web::Data::new(replica.clone());
        let (rustls, forwarder) = match tls {
            Some((rustls, forwarder)) => (Some(rustls), forwarder),
            None => (None, Forwarder::plain()),
        };
        handle.spawn(crate::membership_probe::probe(
            replica.clone(),
            forwarder.http.clone(),
            forwarder.scheme,
        ));
        let reports = web::Data::new(ReportGateway::new(supervisor, forwarder));
        let limits = HttpLimits::for_this_process(HTTP_WORKERS);
        tracing::info!(
            max_connections = limits.max_connections_per_worker * HTTP_WORKERS,
            open_files = limits.open_files,
            "http limits"
        );
        let auth = web::Data::new(auth);
        let hosts = web::Data::new(hosts);
        let report_rate = web::Data::new(api::report_rate::ReportRate::new(report_rates));
        let configured_limits = web::Data::new(api::limits::ConfiguredLimits(fleet_limits));
        let server = HttpServer::new(move || {
            App::new()
                // Inside auth::check, which leaves the caller it charges.
                .wrap(from_fn(api::report_rate::check))
                .wrap(from_fn(api::auth::check))
                .wrap(from_fn(api::cors::cors))
                .wrap(from_fn(api::host::check))
                .wrap_fn(|req, srv| {
                    let call = srv.call(req);
                    async move {
                        match tokio::time::timeout(REQUEST_DEADLINE, call).await {
                            Ok(answer) => answer,
                            Err(_) => Err(api::error::ApiError::Timeout(REQUEST_DEADLINE).into()),
                        }
                    }
                })
                .wrap(from_fn(api::error::json_errors))
                .wrap(from_fn(crate::metrics::http::record))
                .app_data(data.clone())
                .app_data(reports.clone())
                .app_data(auth.clone())
                .app_data(hosts.clone())
                .app_data(report_rate.clone())
                .app_data(configured_limits.clone())
                .configure(|cfg| api::configure(cfg, fault_injection))
        })
        .workers(HTTP_WORKERS)
        .max_connections(limits.max_connections_per_worker)
        .client_request_timeout(HEAD_TIMEOUT)
        .client_disconnect_timeout(Duration::from_secs(1))
        .keep_alive(KEEP_ALIVE)
        .shutdown_timeout(5)
        .disable_signals();
        let mut server = server;
        for listener in listeners {
            server = match &rustls {
                Some(rustls) => server.listen_rustls_0_23(listener, rustls.clone()),
                None => server.listen(listener),
            }
            .with_context(|| format!("cannot serve http_addr {http_addr}"))?;
        }
        let server = server.run();
        actix_web::rt::spawn(stop_on_signal(
            replica.node().clone(),
            handle.clone(),
            server.handle(),
        ));
        crate::systemd::ready();
        server.await.context("http server failed")
    });
    crate::systemd::stopping();
    tracing::info!(id, "stopping");
    rt.block_on(node.shutdown());
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    if let Some(storage) = storage {
        storage.close(STORAGE_CLOSE_PATIENCE);
    }
    served
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_stay_below_the_file_limit_with_room_for_raft_and_rocksdb() {
        let l = HttpLimits::for_open_files(1024, 2);
        assert_eq!(l.max_connections_per_worker, 256);
        assert!(l.max_connections_per_worker as u64 * 2 + RESERVED_FDS <= 1024);
        assert_eq!(
            HttpLimits::for_open_files(1 << 20, 2).max_connections_per_worker,
            25_000
        );
        assert_eq!(
            HttpLimits::for_open_files(100, 2).max_connections_per_worker,
            16
        );
    }
}
