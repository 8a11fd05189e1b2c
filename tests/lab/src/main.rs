//! The `convoy-lab` binary: `chaos`, `simulate` and `bench` (with the etcd and wrk comparisons) for developers.

use clap::{Parser, Subcommand};
use convoy_lab::{chaos, compare, simulate};

/// convoy-lab: fault injection and comparisons for convoy's developers (not shipped with convoy).
#[derive(Debug, Parser)]
#[command(name = "convoy-lab", version, about)]
struct Cli {
    /// Log lines as `text` or `json` (default: text on a terminal, json otherwise).
    #[arg(long, global = true, env = "CONVOY_LOG_FORMAT", value_enum)]
    log_format: Option<convoy_node::logging::LogFormat>,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Inject seeded faults into a local cluster under load and check that nothing breaks.
    Chaos(chaos::ChaosArgs),
    /// `convoy bench`'s scenarios, optionally against etcd (`--etcd`) and with wrk (`--scenario wrk`).
    Bench(Box<compare::LabBenchArgs>),
    /// The whole cluster in one thread from a seed: real openraft and state machine, simulated
    /// disks, network and clock, seeded faults, checkers at every step (`--seed S` replays one).
    Simulate(simulate::SimArgs),
}

fn main() {
    let cli = Cli::parse();
    convoy_node::logging::init(cli.log_format);
    let result = match cli.command {
        Cmd::Chaos(args) => chaos::run(args),
        Cmd::Bench(args) => compare::run(*args),
        Cmd::Simulate(args) => simulate::run_cli(args),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_parser_is_sound() {
        super::Cli::command().debug_assert();
    }
}
