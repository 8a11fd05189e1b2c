//! `convoy login` and `convoy context list|use|current|delete`: named contexts in the CLI's config file
//! (config_file.rs), and how a command finds its servers, token and CA. Precedence, field by field:
//! the flag, then its `CONVOY_*` variable, then the context (`--context`/`CONVOY_CONTEXT`, else the
//! file's current one), then the default (`127.0.0.1:8081`, no token). A context's token and CA go only
//! to its own servers: with `--server`/`CONVOY_SERVER` naming others, the context is not used at all.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use super::args::{GlobalOpts, Output};
use super::config_file::{self, ConfigFile, Context};
use super::error::CliError;
use super::output::print_document;
use super::table::Table;
use crate::client::ApiClient;
use crate::common::token_file;

/// The servers when neither a flag, a variable nor a context names any.
pub const DEFAULT_SERVER: &str = "127.0.0.1:8081";

/// `convoy login`.
#[derive(Debug, Clone, Args)]
pub struct LoginArgs {
    /// The cluster's servers, comma-separated (`https://` for TLS).
    #[arg(long, value_name = "HOST:PORT[,HOST:PORT...]")]
    pub server: String,
    /// A file holding the API token's secret; the secret is copied into the config file.
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// The context's name.
    #[arg(long, default_value = "default", value_name = "NAME")]
    pub name: String,
    /// A PEM CA to trust for `https://` servers.
    #[arg(long, value_name = "PATH")]
    pub ca_file: Option<PathBuf>,
    /// Save the context without asking the cluster who the token is.
    #[arg(long)]
    pub no_check: bool,
}

/// `convoy context ...`.
#[derive(Debug, Clone, Subcommand)]
pub enum ContextCommand {
    /// List the contexts of the config file (never their tokens); `*` marks the current one.
    List,
    /// Make a context the current one.
    Use {
        /// The context's name.
        name: String,
    },
    /// Print the current context's name and servers.
    Current,
    /// Delete a context.
    Delete {
        /// The context's name.
        name: String,
    },
}

/// Where a command's servers and credentials come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The servers, comma-separated.
    pub server: String,
    /// The token's secret.
    pub token: Option<String>,
    /// The CA file.
    pub ca_file: Option<PathBuf>,
}

/// The target of a command with `global`'s flags and variables, given the config file `file` (at `path`).
/// Pure: the precedence of the module doc.
pub fn resolve(global: &GlobalOpts, file: &ConfigFile, path: &Path) -> Result<Target, CliError> {
    let flag_token = super::token::caller_secret(global)?;
    let name = global.context.clone().or_else(|| file.current.clone());
    let context = match &name {
        Some(name) => Some(file.context(name, path)?),
        None => None,
    };
    // A context's secrets stay with its own servers.
    let context = context.filter(|c| {
        global
            .server
            .as_ref()
            .is_none_or(|s| among_servers(s, &c.server))
    });
    Ok(Target {
        server: global
            .server
            .clone()
            .or_else(|| context.map(|c| c.server.clone()))
            .unwrap_or_else(|| DEFAULT_SERVER.to_string()),
        token: flag_token.or_else(|| context.and_then(|c| c.token.clone())),
        ca_file: global
            .ca_file
            .clone()
            .or_else(|| context.and_then(|c| c.ca_file.clone())),
    })
}

/// Whether every server of the `--server` value `some` is one of `context`'s (order, spaces, a
/// trailing `/` and an `http://` aside; `https://` is another server than the bare address).
fn among_servers(some: &str, context: &str) -> bool {
    let set = |s: &str| -> Vec<String> {
        s.split(',')
            .map(|x| {
                let x = x.trim().trim_end_matches('/');
                x.strip_prefix("http://").unwrap_or(x).to_string()
            })
            .filter(|x| !x.is_empty())
            .collect()
    };
    let theirs = set(context);
    let ours = set(some);
    !ours.is_empty() && ours.iter().all(|s| theirs.contains(s))
}

/// The target of a command: its flags and variables over the config file's context.
pub fn target(global: &GlobalOpts) -> Result<Target, CliError> {
    // Without a context to read, a missing HOME is no reason to fail.
    let path = match config_file::path() {
        Ok(path) => path,
        Err(e) if global.context.is_some() => return Err(e.into()),
        Err(_) => return resolve(global, &ConfigFile::default(), Path::new("")),
    };
    let file = ConfigFile::load(&path)?;
    resolve(global, &file, &path)
}

/// `convoy login`: checks the token against the cluster (unless `--no-check`), saves the context and
/// makes it current. Never prints the secret.
pub async fn login(args: LoginArgs, output: Output) -> Result<(), CliError> {
    config_file::check_name(&args.name)?;
    let path = config_file::path()?;
    let mut file = ConfigFile::load(&path)?;
    let token = args
        .token_file
        .as_deref()
        .map(token_file::read_file)
        .transpose()
        .map_err(|e| CliError::Invalid {
            flag: "--token-file".into(),
            value: args
                .token_file
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            reason: e.to_string(),
        })?;
    if args.server.trim().is_empty() || args.server.len() > config_file::MAX_SERVER_LEN {
        return Err(CliError::invalid(
            "--server",
            args.server.chars().take(100).collect::<String>(),
            format!(
                "1-{} bytes of HOST:PORT[,HOST:PORT...]",
                config_file::MAX_SERVER_LEN
            ),
        ));
    }
    let who = if args.no_check {
        None
    } else {
        let client = ApiClient::new(&args.server)?
            .with_fail_fast()
            .with_token(token.as_deref())
            .with_tls(args.ca_file.as_deref(), None)
            .map_err(|e| CliError::invalid("--ca-file", display(&args.ca_file), e.to_string()))?;
        let who: Value = client.get("/v1/whoami").await?;
        Some(who)
    };
    let existed = file.contexts.contains_key(&args.name);
    file.insert(
        &args.name,
        Context {
            server: args.server.trim().to_string(),
            token,
            ca_file: args.ca_file.clone(),
        },
        &path,
    )?;
    file.current = Some(args.name.clone());
    file.save(&path)?;
    let answer = json!({
        "context": args.name,
        "server": args.server.trim(),
        "path": path.display().to_string(),
        "created": !existed,
        "token": who.as_ref().map(|w| json!({"name": w["name"], "role": w["role"]})),
    });
    if output.is_table() {
        let as_who = who
            .map(|w| {
                format!(
                    " as token {} ({})",
                    w["name"].as_str().unwrap_or("?"),
                    w["role"].as_str().unwrap_or("?")
                )
            })
            .unwrap_or_default();
        outln!(
            "logged in to {}{as_who}: context {} {} in {} and now current",
            args.server.trim(),
            args.name,
            if existed { "updated" } else { "saved" },
            path.display()
        );
    } else {
        print_document(output, &answer);
    }
    Ok(())
}

fn display(path: &Option<PathBuf>) -> String {
    path.as_deref()
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// One context as `context list` and `context current` show it: never the secret, only whether there is one.
fn describe(name: &str, c: &Context, current: bool) -> Value {
    json!({
        "name": name,
        "current": current,
        "server": c.server,
        "token": c.token.is_some(),
        "ca_file": c.ca_file.as_deref().map(|p| p.display().to_string()),
    })
}

/// Carries out `convoy context ...`.
pub fn run(command: ContextCommand, output: Output) -> Result<(), CliError> {
    let path = config_file::path()?;
    let mut file = ConfigFile::load(&path)?;
    match command {
        ContextCommand::List => {
            let list: Vec<Value> = file
                .contexts
                .iter()
                .map(|(n, c)| describe(n, c, file.current.as_deref() == Some(n)))
                .collect();
            if output.is_table() {
                let mut t = Table::new(&["CURRENT", "NAME", "SERVER", "TOKEN", "CA"]);
                for c in &list {
                    t.row([
                        if c["current"] == true { "*" } else { "" }.to_string(),
                        c["name"].as_str().unwrap_or("?").to_string(),
                        c["server"].as_str().unwrap_or("?").to_string(),
                        if c["token"] == true { "set" } else { "none" }.to_string(),
                        c["ca_file"].as_str().unwrap_or("-").to_string(),
                    ]);
                }
                out!("{}", t.render());
            } else {
                print_document(output, &Value::Array(list));
            }
        }
        ContextCommand::Use { name } => {
            file.context(&name, &path)?;
            file.current = Some(name.clone());
            file.save(&path)?;
            if output.is_table() {
                outln!("context {name} is now current");
            } else {
                print_document(output, &json!({"current": name}));
            }
        }
        ContextCommand::Current => {
            let name = file.current.clone().ok_or_else(|| CliError::NoContext {
                path: path.display().to_string(),
            })?;
            let c = file.context(&name, &path)?;
            if output.is_table() {
                outln!("{name} ({})", c.server);
            } else {
                print_document(output, &describe(&name, c, true));
            }
        }
        ContextCommand::Delete { name } => {
            file.context(&name, &path)?;
            file.contexts.remove(&name);
            if file.current.as_deref() == Some(name.as_str()) {
                file.current = None;
            }
            file.save(&path)?;
            if output.is_table() {
                outln!("deleted context {name}");
            } else {
                print_document(output, &json!({"deleted": name}));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "context_test.rs"]
mod tests;
