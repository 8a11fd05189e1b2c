//! `convoy demo`'s flags, which the demo's script reads too.

use std::path::PathBuf;

/// `convoy demo` flags.
#[derive(Debug, Clone, clap::Args)]
pub struct DemoArgs {
    /// Where to keep the servers' data dirs and logs (default: a temp dir removed on exit).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Nodes of the `web` consumer (the `api` consumer gets two thirds as many).
    #[arg(long, default_value_t = 30)]
    pub web_nodes: usize,
    /// Simulated install time per node, in ms.
    #[arg(long, default_value_t = 600)]
    pub install_ms: u64,
    /// Keep the cluster and its dashboard running after the demo, until Ctrl-C (prints the URL and token).
    #[arg(long)]
    pub keep: bool,
}
