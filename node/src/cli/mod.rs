//! The `convoy` CLI client commands (being written).

/// The client subcommands, flattened into `convoy`'s top level.
#[derive(Debug, clap::Subcommand)]
pub enum ClientCommand {}

/// Runs a client command.
pub fn run(command: ClientCommand) -> anyhow::Result<()> {
    match command {}
}
