//! `convoy demo`: a local three-server cluster, a simulated fleet of about 50 nodes in two
//! consumers, a coordinated rolling deployment kept alive by a built-in pulser that survives a
//! leader kill, then a group deployment across both consumers — narrated with progress bars.

mod script;

use std::path::PathBuf;

use anyhow::Context;

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
}

/// Runs the demo; cleans up on exit and on Ctrl-C.
pub fn run(args: DemoArgs) -> anyhow::Result<()> {
    let temp;
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => {
            temp = tempfile::Builder::new().prefix("convoy-demo-").tempdir()?;
            temp.path().to_path_buf()
        }
    };
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        // Token auth on, as in production: the admin token is written to DIR/admin-token.
        let options = crate::dev::harness::ClusterOptions::default().with_auth();
        let mut cluster = crate::dev::harness::Cluster::spawn_in(&dir, options)
            .context("starting the local cluster")?;
        let outcome = tokio::select! {
            r = script::run(&mut cluster, &args, &dir) => r,
            _ = tokio::signal::ctrl_c() => {
                eprintln!("\ninterrupted: stopping the cluster");
                Ok(())
            }
        };
        cluster.stop();
        outcome
    })
}
