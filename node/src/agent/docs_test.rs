//! Keeps the `convoy agent` section of docs/CLI.md in step with the flags clap knows.

use clap::{Args, Command};

use super::AgentArgs;

const DOC: &str = include_str!("../../../docs/CLI.md");

/// The text of the `## Agent` section.
fn section() -> &'static str {
    let start = DOC
        .find("\n## Agent")
        .expect("docs/CLI.md has an `## Agent` section");
    let rest = &DOC[start + 1..];
    let end = rest[1..].find("\n## ").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

#[test]
fn every_agent_flag_and_its_env_var_is_documented() {
    let cmd = AgentArgs::augment_args(Command::new("agent"));
    let doc = section();
    let mut missing = Vec::new();
    for arg in cmd.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        let flag = format!("`--{long}");
        if !doc.contains(&flag) {
            missing.push(flag);
        }
        if let Some(env) = arg.get_env() {
            let env = env.to_string_lossy().into_owned();
            if !doc.contains(&env) {
                missing.push(env);
            }
        }
    }
    assert!(cmd.get_arguments().count() > 10, "walked too few flags");
    assert!(
        missing.is_empty(),
        "docs/CLI.md's agent section lacks {missing:?}"
    );
}
