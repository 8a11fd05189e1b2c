//! convoy-lab: the developers' fault lab, outside the product (the `convoy` binary has none of it).
//! Seeded chaos against a real local cluster (`chaos/`), deterministic simulation of the whole
//! cluster in one thread (`simulate/`), network namespaces with nftables partitions
//! (`netns`), pauses and fault-layer partitions of local servers (`pause`, `partition`, which the
//! multi-process tests use too), and the comparisons with etcd and wrk (`compare/`). It builds on the
//! product's local-cluster launcher, `convoy_node::local`.

pub mod chaos;
pub mod compare;
pub mod netns;
pub mod partition;
pub mod pause;
pub mod simulate;

pub use partition::Partitions;
pub use pause::Pause;

/// The `convoy-lab` binary, for tests that run it: `$CONVOY_LAB_BIN`, else `convoy-lab` beside the
/// `convoy` binary the tests start servers from (`target/<profile>/`).
pub fn lab_bin() -> std::path::PathBuf {
    if let Ok(path) = std::env::var("CONVOY_LAB_BIN") {
        return path.into();
    }
    let bin = convoy_node::local::convoy_bin().with_file_name("convoy-lab");
    assert!(
        bin.exists(),
        "{} not found: build it first (`cargo build -p convoy-lab`) or set CONVOY_LAB_BIN",
        bin.display()
    );
    bin
}
