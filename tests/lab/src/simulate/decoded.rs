//! The snapshots a run has decoded, by their bytes: a restart (or an install) from bytes decoded before
//! clones the state they decoded to instead of decoding them again. Decoding is a pure function of the
//! bytes, so the result is the same; every distinct snapshot is still decoded once. Restarts are frequent
//! in a seed (crashes, power losses of the whole cluster, disks that fill) and most start from a snapshot
//! an earlier restart or another server already decoded: decoding was a tenth of a ten-minute seed.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io;

use convoy_actors::domain::ClusterState;
use convoy_node::machine::Machine;
use convoy_raft::StateMachine;

/// How many decoded snapshots a run keeps (the oldest goes first).
const KEPT: usize = 8;

struct Decoded {
    bytes: Vec<u8>,
    state: ClusterState,
}

thread_local! {
    static DECODED: RefCell<VecDeque<Decoded>> = const { RefCell::new(VecDeque::new()) };
    static DECODES: Cell<u64> = const { Cell::new(0) };
}

/// Forgets every decoded snapshot (at the start and end of a run).
pub fn forget() {
    DECODED.with(|d| d.borrow_mut().clear());
    DECODES.with(|n| n.set(0));
}

/// How many times this run really decoded a state (for tests).
pub fn decodes() -> u64 {
    DECODES.with(Cell::get)
}

/// The machine `bytes` hold (as [`Machine::snapshot_to`] wrote them), decoded once per run.
pub fn machine(bytes: &[u8]) -> io::Result<Machine> {
    let known = DECODED.with(|d| {
        d.borrow()
            .iter()
            .find(|k| k.bytes == bytes)
            .map(|k| k.state.clone())
    });
    if let Some(state) = known {
        return Ok(Machine::from_state(state));
    }
    let mut input = bytes;
    let machine = Machine::restore_from(&mut input).map_err(io::Error::other)?;
    DECODES.with(|n| n.set(n.get() + 1));
    DECODED.with(|d| {
        let mut d = d.borrow_mut();
        if d.len() == KEPT {
            d.pop_front();
        }
        d.push_back(Decoded {
            bytes: bytes.to_vec(),
            state: machine.state().clone(),
        });
    });
    Ok(machine)
}

#[cfg(test)]
#[path = "decoded_test.rs"]
mod tests;
