use std::path::Path;

use clap::Parser;

use super::*;
use crate::cli::ClientCommand;

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    command: ClientCommand,
}

/// The client flags of `convoy <line>` (no `CONVOY_*` variable of this environment taken).
fn global(line: &str) -> GlobalOpts {
    let args = std::iter::once("convoy").chain(line.split_whitespace());
    let cli = Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{line}: {e}"));
    let mut global = cli.command.global().expect("a client command").clone();
    let from_flags = |value: &mut Option<String>, flag: &str| {
        if !line.contains(flag) {
            *value = None;
        }
    };
    from_flags(&mut global.server, "--server");
    from_flags(&mut global.context, "--context");
    from_flags(&mut global.token, "--token ");
    if !line.contains("--token-file") {
        global.token_file = None;
    }
    if !line.contains("--ca-file") {
        global.ca_file = None;
    }
    global
}

fn file() -> ConfigFile {
    let mut file = ConfigFile::default();
    let path = Path::new("/cfg");
    file.insert(
        "prod",
        Context {
            server: "p1:8081,p2:8081".into(),
            token: Some("prod-secret".into()),
            ca_file: Some("/prod-ca.pem".into()),
        },
        path,
    )
    .unwrap();
    file.insert(
        "lab",
        Context {
            server: "lab:8081".into(),
            token: Some("lab-secret".into()),
            ca_file: None,
        },
        path,
    )
    .unwrap();
    file.current = Some("prod".into());
    file
}

fn target(line: &str, file: &ConfigFile) -> Result<Target, CliError> {
    resolve(&global(line), file, Path::new("/cfg"))
}

#[test]
fn the_current_context_gives_what_no_flag_gives() {
    let t = target("deploy list", &file()).unwrap();
    assert_eq!(
        t,
        Target {
            server: "p1:8081,p2:8081".into(),
            token: Some("prod-secret".into()),
            ca_file: Some("/prod-ca.pem".into()),
        }
    );
    let t = target("deploy list --context lab", &file()).unwrap();
    assert_eq!(
        (t.server.as_str(), t.token.as_deref(), t.ca_file),
        ("lab:8081", Some("lab-secret"), None)
    );
    // Without a context: the default server and no token.
    let t = target("deploy list", &ConfigFile::default()).unwrap();
    assert_eq!((t.server.as_str(), t.token), (DEFAULT_SERVER, None));
}

#[test]
fn flags_win_field_by_field() {
    let t = target("deploy list --token flag-secret", &file()).unwrap();
    assert_eq!(
        (t.server.as_str(), t.token.as_deref()),
        ("p1:8081,p2:8081", Some("flag-secret"))
    );
    // The same servers in another order are the context's: its token goes with them.
    let t = target("deploy list --server p2:8081,p1:8081", &file()).unwrap();
    assert_eq!(t.token.as_deref(), Some("prod-secret"));
}

#[test]
fn one_of_the_contexts_own_servers_keeps_its_token() {
    for server in ["p2:8081", "http://p1:8081/"] {
        let t = target(&format!("deploy list --server {server}"), &file()).unwrap();
        assert_eq!(
            (t.server.as_str(), t.token.as_deref(), t.ca_file.as_deref()),
            (server, Some("prod-secret"), Some(Path::new("/prod-ca.pem"))),
            "{server}"
        );
    }
    // One of its servers with another is not the context's.
    let t = target("deploy list --server p1:8081,elsewhere:8081", &file()).unwrap();
    assert_eq!(t.token, None);
    let t = target("deploy list --server https://p1:8081", &file()).unwrap();
    assert_eq!(t.token, None);
}

#[test]
fn a_contexts_token_never_goes_to_other_servers() {
    let t = target("deploy list --server elsewhere:8081", &file()).unwrap();
    assert_eq!(
        t,
        Target {
            server: "elsewhere:8081".into(),
            token: None,
            ca_file: None,
        }
    );
}

#[test]
fn an_unknown_context_names_the_known_ones() {
    let err = target("deploy list --context staging", &file())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("\"staging\"") && err.contains("lab, prod"),
        "{err}"
    );
}
