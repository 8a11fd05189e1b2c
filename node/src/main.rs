//! The `convoy` binary: parses the command line and hands it to the `convoy_node` library.

use clap::{CommandFactory, Parser, Subcommand};
use convoy_node::tools::{bench, demo, replay};
use convoy_node::{agent, cli, config, server, sim, tls};

/// mimalloc as the global allocator: the leader's report and HTTP paths allocate many small, short-lived
/// blocks, which it serves more cheaply than glibc's malloc (measured in docs/BENCHMARKS.md). RocksDB's C++
/// keeps its own allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `convoy --help`: the commands grouped by what they are for.
const HELP: &str = "\
{name} {version}: a highly available rollout scheduler — servers keep every deployment on a replicated
log, agents on the fleet follow it, and this CLI steers it.

{usage-heading} {usage}

Server:
  server      Run a server of the replicated cluster
  cluster     The server cluster: every member's status, membership
  token       API tokens: create (the secret is shown once), list, revoke

Fleet:
  agent       Run the agent of a fleet machine: report, download, install, health-check
  node        Fleet nodes: versions, phases, last report, consumers and targets
  sim         Simulate a fleet of N agents in one process, over the real HTTP API

Client:
  resource    Resources and their versions: create, publish, list, show
  consumer    Consumers, their nodes and subscriptions
  deploy      Deployments: start, inspect, steer, pulse, watch, undo
  group       Consumer groups and group deployments
  window      Maintenance windows: list, show, next openings, create, delete
  version     Print this client's version and every server's
  login       Save a cluster's servers and token as a named context (~/.config/convoy/config.toml)
  context     The CLI's contexts: list, use, current, delete

Tools:
  demo        Run the demo: a local 3-server cluster, a simulated fleet, a rollout through a leader kill
  bench       Measure throughput, latency, failover and scale of a local cluster
  replay      Re-apply a stopped server's log through the domain: its digest, one deployment's decisions
  tls         TLS helpers: `convoy tls init DIR` writes a development CA and server certificate
  completion  Print a shell completion script (bash, zsh, fish)
  man         Write man pages for every command into a directory
  help        Print this message or the help of the given subcommand(s)

Options:
{options}

Client flags (--server, --context, -o, --token, --token-file, --ca-file) may come before or after the
command; what none of them says comes from the current context (`convoy login`).
";

/// convoy: a highly available rollout scheduler.
#[derive(Debug, Parser)]
#[command(name = "convoy", version, about, help_template = HELP)]
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
    Server(Box<config::ServerArgs>),
    /// Run the agent of a fleet machine: report, download, install, health-check.
    Agent(agent::AgentArgs),
    /// Run the demo: a local 3-server cluster, a simulated fleet, a rollout through a leader kill.
    Demo(demo::DemoArgs),
    /// Simulate a fleet of N agents in one process, over the real HTTP API.
    Sim(sim::SimArgs),
    /// Measure throughput, latency, failover and scale of a local cluster.
    Bench(bench::BenchArgs),
    /// Re-apply a stopped server's snapshot and log through the pure domain: the digest it reaches
    /// and, with `--deployment`, every decision about one deployment with the entry that made it.
    Replay(replay::ReplayArgs),
    /// TLS helpers: `convoy tls init DIR` writes a development CA and server certificate.
    #[command(subcommand)]
    Tls(tls::TlsCommand),
    #[command(flatten)]
    Client(cli::ClientCommand),
    /// Print a shell completion script: `source <(convoy completion bash)` (bash also completes
    /// deployment ids, asking the cluster).
    Completion {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write man pages for convoy and every subcommand into DIR (`convoy.1`, `convoy-deploy.1`, ...).
    Man {
        /// Where to write them (created if missing).
        dir: std::path::PathBuf,
    },
}

/// Writes every man page under `dir`.
fn man_pages(dir: &std::path::Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    clap_mangen::generate_to(Cli::command(), dir)?;
    println!("man pages written to {}", dir.display());
    Ok(())
}

fn main() {
    let cli = Cli::parse_from(cli::hoist::hoist_global_flags(
        std::env::args_os().collect(),
    ));
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
        Cmd::Server(args) => server::run(*args),
        Cmd::Agent(args) => agent::run(args),
        Cmd::Sim(args) => sim::run(args),
        Cmd::Demo(args) => demo::run(args),
        Cmd::Bench(args) => bench::run(args),
        Cmd::Replay(args) => replay::run(args),
        Cmd::Tls(command) => tls::run(command).map_err(Into::into),
        Cmd::Client(command) => cli::run(command),
        Cmd::Completion { shell } => {
            use std::io::Write;
            let script = cli::completion::script(shell, &mut Cli::command());
            std::io::stdout().write_all(&script).map_err(Into::into)
        }
        Cmd::Man { dir } => man_pages(&dir),
    };
    // One line naming the cause chain (`{:#}`), no backtrace: what a person reads at a failed start.
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grouped_help_lists_every_command_and_the_parser_is_sound() {
        Cli::command().debug_assert();
        for sub in Cli::command().get_subcommands() {
            let line = format!("\n  {} ", sub.get_name());
            assert!(
                HELP.contains(&line),
                "--help does not list {}",
                sub.get_name()
            );
        }
        for group in ["Server:", "Fleet:", "Client:", "Tools:"] {
            assert!(HELP.contains(group), "{group}");
        }
    }
}
