//! `convoy demo`: a local three-server cluster, a simulated fleet of about 50 nodes in two
//! consumers, a coordinated rolling deployment kept alive by a built-in pulser that survives a
//! leader kill, then a group deployment across both consumers, and last a bad version rolled back by its
//! metrics against a local Prometheus (`analysis_act.rs`) — narrated with progress bars.

mod analysis_act;
mod args;
mod script;

use anyhow::Context;

pub use args::DemoArgs;

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
        let mut options = crate::local::ClusterOptions::default().with_auth();
        // The final act's Prometheus, named in every server's config before it starts.
        let prometheus_port = crate::local::free_port()?;
        options.extra += &analysis_act::provider_config(prometheus_port);
        let mut cluster =
            crate::local::Cluster::spawn_in(&dir, options).context("starting the local cluster")?;
        let outcome = tokio::select! {
            r = script::run(&mut cluster, &args, &dir, prometheus_port) => r,
            _ = tokio::signal::ctrl_c() => {
                eprintln!("\ninterrupted: stopping the cluster");
                cluster.stop();
                return Ok(());
            }
        };
        if args.keep && outcome.is_ok() {
            println!("{}", kept(&cluster, &dir));
            let _ = tokio::signal::ctrl_c().await;
            eprintln!("\nstopping the cluster");
        }
        cluster.stop();
        outcome
    })
}

/// What `--keep` prints once the demo is over: where the dashboard is and how to sign in.
fn kept(cluster: &crate::local::Cluster, dir: &std::path::Path) -> String {
    let urls: Vec<String> = cluster
        .running()
        .into_iter()
        .map(|id| format!("{}/ui/", cluster.server(id).url()))
        .collect();
    let token_file = dir.join("admin-token");
    let token = std::fs::read_to_string(&token_file).unwrap_or_default();
    format!(
        "\n--keep: the cluster keeps running until Ctrl-C.\n  dashboard    {}\n  admin token  {}\n               (also in {})\n  CLI          CONVOY_SERVER={} CONVOY_TOKEN_FILE={} convoy deploy list",
        urls.join("  "),
        token.trim(),
        token_file.display(),
        cluster.addresses(),
        token_file.display(),
    )
}
