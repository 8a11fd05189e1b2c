//! The `convoy` binary.
fn main() {}
