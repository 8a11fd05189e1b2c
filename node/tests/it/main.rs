//! convoy-node's one integration-test binary: the `convoy` binary's own start-up behaviour, run as a
//! process (`CARGO_BIN_EXE_convoy`). One binary per crate; nextest still runs each test in its own process.

mod cli_help;
mod config_mistakes;
