//! Developer tools, not needed to run convoy in production: a local cluster of real server processes
//! (the one harness of the demo, chaos, the benchmarks and the multi-process tests), network
//! namespaces for real partitions, the demo, the chaos runner, the benchmarks and the offline replay.

pub mod bench;
pub mod chaos;
pub mod demo;
pub mod devmode;
pub mod harness;
pub mod netns;
pub mod process;
pub mod replay;
