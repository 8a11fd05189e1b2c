//! Keeps docs/CLI.md in step with the commands: every subcommand and every flag clap knows must be in it.

use clap::{Command, Subcommand};

use super::ClientCommand;

const DOC: &str = include_str!("../../../docs/CLI.md");

/// Every command path (`convoy deploy start`) with its long flags.
fn walk(cmd: &Command, prefix: &str, out: &mut Vec<(String, Vec<String>)>) {
    for sub in cmd.get_subcommands() {
        let path = format!("{prefix} {}", sub.get_name());
        let flags = sub
            .get_arguments()
            .filter_map(|a| a.get_long())
            .map(|l| format!("--{l}"))
            .collect();
        out.push((path.clone(), flags));
        walk(sub, &path, out);
    }
}

fn commands() -> Vec<(String, Vec<String>)> {
    let root = ClientCommand::augment_subcommands(Command::new("convoy"));
    let mut out = Vec::new();
    walk(&root, "convoy", &mut out);
    out
}

#[test]
fn every_subcommand_is_documented() {
    let all = commands();
    assert!(all.len() > 30, "walked only {} commands", all.len());
    let missing: Vec<&str> = all
        .iter()
        .map(|(path, _)| path.as_str())
        .filter(|path| !DOC.contains(&format!("`{path}")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/CLI.md does not mention: {missing:?}"
    );
}

/// `flag` appears as a whole word (`--nodes` does not count for `--nodes-x`, nor inside `--no-nodes`).
fn mentions(flag: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    DOC.match_indices(flag).any(|(at, _)| {
        let before = DOC[..at].chars().next_back();
        let after = DOC[at + flag.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

#[test]
fn every_flag_is_documented() {
    let mut missing = Vec::new();
    for (path, flags) in commands() {
        for flag in flags {
            if !mentions(&flag) {
                missing.push(format!("{path} {flag}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/CLI.md does not mention flags: {missing:?}"
    );
}
