//! Running the `convoy` CLI in the tests: with its config under a home of the test's own and no
//! `CONVOY_*` of this environment, so that nothing of the machine running the tests leaks in.

use std::path::Path;
use std::process::{Command, Output};

use crate::convoy_bin;

/// `convoy ARGS` with its config under `home` (XDG_CONFIG_HOME and HOME) and no `CONVOY_*` of this
/// environment; `env` adds variables.
pub fn command(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(convoy_bin());
    c.args(args)
        .env("XDG_CONFIG_HOME", home)
        .env("HOME", home)
        .env_remove("CONVOY_SERVER")
        .env_remove("CONVOY_TOKEN")
        .env_remove("CONVOY_TOKEN_FILE")
        .env_remove("CONVOY_CONTEXT")
        .env_remove("CONVOY_CA_FILE");
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// [`command`], run to its end.
pub fn run(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    command(home, args, env).output().expect("run convoy")
}
