//! `convoy token create|list|revoke`: API tokens, and reading the caller's own token from the global
//! `--token`, `CONVOY_TOKEN`, `--token-file` or `CONVOY_TOKEN_FILE`.

use clap::{Subcommand, ValueEnum};
use convoy_actors::domain::{Role, TokenView};
use serde_json::{json, Value};

use super::args::{GlobalOpts, Output};
use super::body::encode;
use super::error::CliError;
use super::output::{document, print_document};
use super::table::{opt, timestamp, Table};
use crate::client::ApiClient;
use crate::common::token_file;

/// `convoy token ...`
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token; its secret is printed once and never again.
    Create {
        /// Token name (recorded as `by` on what it does).
        name: String,
        /// What it may do.
        #[arg(long, value_enum)]
        role: RoleArg,
        /// Agent tokens: the node ids it may report for, as a glob (`web-*`).
        #[arg(long, value_name = "GLOB")]
        nodes: Option<String>,
        /// How long it works from its creation (`30d`, `12h`; 1s to 3650d); without it, until revoked.
        #[arg(long, value_name = "DURATION", env = "CONVOY_TOKEN_TTL")]
        ttl: Option<String>,
        /// Agent tokens: a consumer whose nodes it may report for, as well as the glob (repeat for
        /// several; every consumer of a reported node must be one of them).
        #[arg(long = "consumer", value_name = "CONSUMER")]
        consumers: Vec<String>,
    },
    /// List tokens (names, roles, node globs, expiry; never secrets).
    List(super::args::ListArgs),
    /// Revoke a token: every server refuses it from the next applied index.
    Revoke {
        /// Token name.
        name: String,
    },
}

/// `--role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    /// Everything, including cluster members and tokens.
    Admin,
    /// Resources, versions, consumers, subscriptions, deployments, groups.
    Operator,
    /// Pulses only.
    Pulser,
    /// Reports for the nodes its --nodes glob matches, and reading resources.
    Agent,
    /// Reads only.
    Reader,
}

impl From<RoleArg> for Role {
    fn from(r: RoleArg) -> Role {
        match r {
            RoleArg::Admin => Role::Admin,
            RoleArg::Operator => Role::Operator,
            RoleArg::Pulser => Role::Pulser,
            RoleArg::Agent => Role::Agent,
            RoleArg::Reader => Role::Reader,
        }
    }
}

/// The caller's secret: `--token`/`CONVOY_TOKEN`, else the file of `--token-file`/`CONVOY_TOKEN_FILE`.
pub fn caller_secret(global: &GlobalOpts) -> Result<Option<String>, CliError> {
    if let Some(token) = global.token.as_deref().map(str::trim) {
        return Ok(Some(token.to_string()).filter(|t| !t.is_empty()));
    }
    match &global.token_file {
        None => Ok(None),
        Some(path) => token_file::read_file(path)
            .map(Some)
            .map_err(|e| CliError::Invalid {
                flag: "--token-file".into(),
                value: path.display().to_string(),
                reason: e.to_string(),
            }),
    }
}

/// Carries out `convoy token ...`.
pub async fn run(
    client: &ApiClient,
    output: Output,
    command: TokenCommand,
) -> Result<(), CliError> {
    match command {
        TokenCommand::Create {
            name,
            role,
            nodes,
            ttl,
            consumers,
        } => {
            let role = Role::from(role);
            if let Some(raw) = &ttl {
                convoy_time::parse_duration(raw).map_err(|e| CliError::Invalid {
                    flag: "--ttl".into(),
                    value: raw.chars().take(100).collect(),
                    reason: e.to_string(),
                })?;
            }
            let mut body =
                json!({ "name": name, "role": role, "nodes": nodes, "consumers": consumers });
            if let Some(ttl) = ttl {
                body["ttl"] = Value::String(ttl);
            }
            let v: Value = client.post("/v1/tokens", &body).await?;
            match output {
                Output::Json | Output::Yaml => print_document(output, &v),
                Output::Table | Output::Wide => {
                    let expiry = v["expires_at"]
                        .as_u64()
                        .map(|at| format!(", expires {}", timestamp(at)))
                        .unwrap_or_default();
                    outln!(
                        "created token {name} ({role}{expiry}); its secret, shown only this once:"
                    );
                    outln!("{}", v["secret"].as_str().unwrap_or("?"));
                }
            }
        }
        TokenCommand::List(args) => {
            let fetch = || async { Ok(super::list::all(client, "/v1/tokens", "tokens").await?) };
            let show = |v: &Value| match serde_json::from_value::<Vec<TokenView>>(v.clone()) {
                Ok(list) if output.is_table() => table(&list),
                _ => document(output, v),
            };
            return super::list::run(client, output, args, fetch, show).await;
        }
        TokenCommand::Revoke { name } => {
            let v: Value = client
                .delete(&format!("/v1/tokens/{}", encode(&name)))
                .await?;
            match output {
                Output::Json | Output::Yaml => print_document(output, &v),
                Output::Table | Output::Wide => outln!("revoked token {name}"),
            }
        }
    }
    Ok(())
}

/// `token list` as a table.
pub fn table(list: &[TokenView]) -> String {
    let mut t = Table::new(&["NAME", "ROLE", "NODES", "CREATED", "EXPIRES", "BY"]);
    for token in list {
        t.row([
            token.name.clone(),
            token.role.to_string(),
            match (&token.nodes, token.consumers.is_empty()) {
                (Some(glob), false) => format!("{glob} in {}", token.consumers.join(",")),
                _ => opt(token.nodes.clone()),
            },
            timestamp(token.created_at),
            token
                .expires_at
                .map_or_else(|| "never".to_string(), timestamp),
            token.created_by.to_string(),
        ]);
    }
    t.render()
}
