//! The `convoy` CLI client: `resource`, `consumer`, `deploy`, `group`, `cluster` and `token` commands over the
//! HTTP API.
//!
//! Every command takes `--server` (or `CONVOY_SERVER`: comma-separated addresses, the next tried when one is
//! down), `-o table|wide|json|yaml` and the API token (`--token`/`CONVOY_TOKEN` or `--token-file`/
//! `CONVOY_TOKEN_FILE`); what none of them gives comes from the current context of the CLI's config file
//! (`convoy login`, `convoy context`: context.rs). Errors print `error: <the server's message>` and exit 1;
//! usage errors exit 2.
//! The reference is `docs/CLI.md`; a test keeps it in step with the commands below.

#[macro_use]
mod stdout;

mod analysis;
mod args;
mod body;
mod budget;
pub mod completion;
mod config_file;
mod context;
mod deploy_args;
mod deploy_file;
mod error;
mod exec;
mod explain;
mod fleet;
mod held;
pub mod hoist;
mod latest;
mod limits;
mod list;
mod list_args;
mod natural;
mod output;
mod parse;
mod publish;
mod render;
mod replace_member;
mod table;
mod token;
mod undo;
mod watch;
mod window;
mod zoned;

#[cfg(test)]
mod docs_test;
#[cfg(test)]
mod fixtures;

use args::{
    ClusterCommand, ConsumerCommand, DeployCommand, GlobalOpts, GroupCommand, NodeCommand,
    ResourceCommand,
};
use error::CliError;

use crate::client::ApiClient;

/// The client subcommands, flattened into `convoy`'s top level.
#[derive(Debug, clap::Subcommand)]
pub enum ClientCommand {
    /// Resources and their versions: create, publish, list, show.
    Resource {
        #[command(flatten)]
        global: GlobalOpts,
        #[command(subcommand)]
        command: ResourceCommand,
    },
    /// Consumers, their nodes and subscriptions.
    Consumer {
        #[command(flatten)]
        global: GlobalOpts,
        #[command(subcommand)]
        command: ConsumerCommand,
    },
    /// Deployments: start, inspect, steer, pulse and watch.
    Deploy {
        #[command(flatten)]
        global: GlobalOpts,
        #[command(subcommand)]
        command: DeployCommand,
    },
    /// Consumer groups and group deployments.
    Group {
        #[command(flatten)]
        global: GlobalOpts,
        #[command(subcommand)]
        command: GroupCommand,
    },
    /// The server cluster: status and membership.
    Cluster {
        #[command(flatten)]
        global: GlobalOpts,
        #[command(subcommand)]
        command: ClusterCommand,
    },
    /// API tokens: create (the secret is shown once), list, revoke.
    Token {
        #[command(flatten)]
        global: GlobalOpts,
        #[command(subcommand)]
        command: token::TokenCommand,
    },
    /// Fleet nodes: versions, phases, last report, consumers and targets.
    Node {
        #[command(flatten)]
        global: GlobalOpts,
        #[command(subcommand)]
        command: NodeCommand,
    },
    /// Maintenance windows: list, show, next openings, create, delete.
    Window {
        #[command(flatten)]
        global: GlobalOpts,
        #[command(subcommand)]
        command: window::WindowCommand,
    },
    /// Print this client's version and the version of every server of the cluster.
    Version {
        #[command(flatten)]
        global: GlobalOpts,
    },
    /// Save a cluster's servers and token as a named context of the CLI's config file, and make it
    /// current.
    Login {
        #[command(flatten)]
        args: context::LoginArgs,
        /// Output: a line for people, or JSON or YAML for scripts.
        #[arg(short = 'o', long = "output", value_enum, default_value_t = args::Output::Table)]
        output: args::Output,
    },
    /// The contexts of the CLI's config file: list, use, current, delete.
    Context {
        #[command(subcommand)]
        command: context::ContextCommand,
        /// Output: a table for people, or JSON or YAML for scripts.
        #[arg(short = 'o', long = "output", value_enum, default_value_t = args::Output::Table, global = true)]
        output: args::Output,
    },
}

impl ClientCommand {
    /// The client flags of a command that talks to a cluster (`None`: `login` and `context`).
    fn global(&self) -> Option<&GlobalOpts> {
        match self {
            ClientCommand::Resource { global, .. }
            | ClientCommand::Consumer { global, .. }
            | ClientCommand::Deploy { global, .. }
            | ClientCommand::Group { global, .. }
            | ClientCommand::Cluster { global, .. }
            | ClientCommand::Token { global, .. }
            | ClientCommand::Node { global, .. }
            | ClientCommand::Window { global, .. }
            | ClientCommand::Version { global } => Some(global),
            ClientCommand::Login { .. } | ClientCommand::Context { .. } => None,
        }
    }
}

/// Runs a client command. On failure prints `error: <message>` to stderr and exits with status 1.
pub fn run(command: ClientCommand) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let result = runtime.block_on(execute(command));
    drop(runtime);
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
    Ok(())
}

/// Carries out a client command.
pub async fn execute(command: ClientCommand) -> Result<(), CliError> {
    let Some(global) = command.global().cloned() else {
        return match command {
            ClientCommand::Login { args, output } => context::login(args, output).await,
            ClientCommand::Context { command, output } => context::run(command, output),
            _ => unreachable!("only login and context have no client flags"),
        };
    };
    let target = context::target(&global)?;
    let output = global.output;
    let client = ApiClient::new(&target.server)?
        .with_fail_fast()
        .with_token(target.token.as_deref())
        .with_tls(target.ca_file.as_deref(), None)
        .map_err(|e| CliError::Invalid {
            flag: "--ca-file".into(),
            value: target
                .ca_file
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            reason: e.to_string(),
        })?;
    match command {
        ClientCommand::Resource { command, .. } => exec::resource(&client, output, command).await,
        ClientCommand::Consumer { command, .. } => exec::consumer(&client, output, command).await,
        ClientCommand::Deploy { command, .. } => exec::deploy(&client, output, command).await,
        ClientCommand::Group { command, .. } => exec::group(&client, output, command).await,
        ClientCommand::Cluster { command, .. } => exec::cluster(&client, output, command).await,
        ClientCommand::Token { command, .. } => token::run(&client, output, command).await,
        ClientCommand::Node { command, .. } => fleet::node(&client, output, command).await,
        ClientCommand::Window { command, .. } => window::run(&client, output, command).await,
        ClientCommand::Version { .. } => fleet::version(&client, output).await,
        ClientCommand::Login { .. } | ClientCommand::Context { .. } => {
            unreachable!("carried out above")
        }
    }
}
