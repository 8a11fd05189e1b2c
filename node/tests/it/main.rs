//! convoy-node's one integration-test binary: the `convoy` binary's own start-up behaviour, run as a
//! process (`CARGO_BIN_EXE_convoy`). One binary per crate.

mod cli_help;
mod config_mistakes;
mod secret_files;
