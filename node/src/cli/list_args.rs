//! `--limit` and `--watch`, the flags every list command takes (carried out by list.rs).

use clap::Args;

/// `--limit` and `--watch`, on every list command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Args)]
pub struct ListArgs {
    /// Show at most this many rows: the first ones in the list's order (`deploy list`: the newest).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub limit: Option<u32>,
    /// Keep running: print the list again whenever the cluster changes it (Ctrl-C to stop).
    #[arg(long, short = 'w')]
    pub watch: bool,
}
