//! `convoy agent`: the real agent on a fleet machine (being written).

/// `convoy agent` flags.
#[derive(Debug, clap::Args)]
pub struct AgentArgs {}

/// Runs the agent until SIGTERM.
pub fn run(_args: AgentArgs) -> anyhow::Result<()> {
    anyhow::bail!("the agent is being written")
}
