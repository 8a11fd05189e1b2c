//! The `convoy` binary: parses the command line and hands it to the `convoy_node` library.

use clap::{Parser, Subcommand};
use convoy_node::dev::{bench, chaos, demo};
use convoy_node::{agent, cli, config, server, sim, tls};

/// mimalloc instead of glibc's malloc: the leader's report and HTTP paths allocate many small,
/// short-lived blocks, and glibc spent a third of the leader's CPU on them in the ingest bench
/// (`_int_malloc`, `unlink_chunk`, `malloc_consolidate`). RocksDB's C++ keeps its own.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// convoy: a highly available rollout scheduler.
#[derive(Debug, Parser)]
#[command(name = "convoy", version, about)]
struct Cli {
    /// Log lines as `text` or `json` (default: text on a terminal, json otherwise; a server's
    /// config file may set `log_format`).
    #[arg(long, global = true, env = "CONVOY_LOG_FORMAT", value_enum)]
    log_format: Option<convoy_node::logging::LogFormat>,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run a server of the replicated cluster.
    Server(config::ServerArgs),
    /// Run the agent of a fleet machine: report, download, install, health-check.
    Agent(agent::AgentArgs),
    /// Run the demo: a local 3-server cluster, a simulated fleet, a rollout through a leader kill.
    Demo(demo::DemoArgs),
    /// Simulate a fleet of N agents in one process, over the real HTTP API.
    Sim(sim::SimArgs),
    /// Inject seeded faults into a local cluster under load and check that nothing breaks.
    Chaos(chaos::ChaosArgs),
    /// Measure throughput, latency, failover and scale of a local cluster (optionally against etcd).
    Bench(bench::BenchArgs),
    /// TLS helpers: `convoy tls init DIR` writes a development CA and server certificate.
    #[command(subcommand)]
    Tls(tls::TlsCommand),
    #[command(flatten)]
    Client(cli::ClientCommand),
}

fn main() {
    let cli = Cli::parse();
    let format = match (&cli.log_format, &cli.command) {
        (Some(format), _) => Some(*format),
        (None, Cmd::Server(args)) => args.log_format().unwrap_or_else(|e| {
            eprintln!("error: {e}");
            std::process::exit(1)
        }),
        (None, _) => None,
    };
    convoy_node::logging::init(format);
    let result = match cli.command {
        Cmd::Server(args) => server::run(args),
        Cmd::Agent(args) => agent::run(args),
        Cmd::Sim(args) => sim::run(args),
        Cmd::Demo(args) => demo::run(args),
        Cmd::Chaos(args) => chaos::run(args),
        Cmd::Bench(args) => bench::run(args),
        Cmd::Tls(command) => tls::run(command).map_err(Into::into),
        Cmd::Client(command) => cli::run(command),
    };
    // One line naming the cause chain (`{:#}`), no backtrace: what a person reads at a failed start.
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
