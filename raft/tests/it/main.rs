//! convoy-raft's one integration-test binary: a module per file, `common` (a transport test server and
//! its helpers) and `toy` (a key-value state machine on the real stores) shared by them. One binary per
//! crate links RocksDB once; its tests run as threads of one process (`transport_flood` starts a process of
//! its own). `frame_allocation`'s
//! recording allocator is this binary's global allocator (it only reads a thread-local high-water mark).

mod common;
mod frame_allocation;
mod membership_removed_leader;
mod storage_catchup;
mod storage_conformance;
mod storage_integrity;
mod storage_raft;
mod storage_recovery;
mod storage_replay;
mod storage_snapshot_pause;
mod storage_tuning;
mod storage_wal_dir;
mod toy;
mod transport_flood;
mod transport_fuzz;
mod transport_relay;
mod transport_tcp;
