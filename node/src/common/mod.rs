//! What several sides of the binary share (server, CLI, agent, simulator), below all of them: it
//! imports nothing else of this crate.

pub mod private_file;
pub mod token_file;
