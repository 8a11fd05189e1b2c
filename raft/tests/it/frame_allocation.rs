//! Memory a frame costs before it is valid: a length prefix (under or over the cap) must not
//! reserve the announced size, and a body must not make the codec reserve what it claims.
//! Measured with a global allocator that records this thread's largest single allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use convoy_raft::codec;
use convoy_raft::network::frame::{read_frame, FrameError, MAX_FRAME_BYTES};
use convoy_raft::network::{ClientRequest, RpcRequest};

struct Recording;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn record(size: usize) {
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
}

unsafe impl GlobalAlloc for Recording {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOCATOR: Recording = Recording;

/// The largest single allocation `f` makes on this thread.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|l| l.set(0));
    let out = f();
    (out, LARGEST.with(Cell::get))
}

fn framed(len: u32, body: &[u8]) -> Vec<u8> {
    let mut bytes = len.to_be_bytes().to_vec();
    bytes.extend_from_slice(body);
    bytes
}

fn read(wire: &[u8]) -> Result<RpcRequest, FrameError> {
    futures::executor::block_on(read_frame::<RpcRequest, _>(&mut &*wire, MAX_FRAME_BYTES))
}

const KIB: usize = 1024;

#[test]
fn four_gib_prefix_allocates_nothing_for_the_body() {
    let wire = framed(u32::MAX, &[1, 2, 3]);
    let (result, largest) = largest_allocation(|| read(&wire));
    assert!(
        matches!(result, Err(FrameError::TooLarge { .. })),
        "{result:?}"
    );
    assert!(largest < KIB, "{largest} bytes allocated");
}

#[test]
fn prefix_just_under_the_cap_with_ten_bytes_behind_it_does_not_reserve_64_mib() {
    // Regression: the body buffer was allocated at the announced length up front, so 4 bytes
    // from an authenticated peer cost 64 MiB per connection (16 GiB over 256 connections).
    let wire = framed(MAX_FRAME_BYTES, &[7; 10]);
    let (result, largest) = largest_allocation(|| read(&wire));
    assert!(matches!(result, Err(FrameError::Io(_))), "{result:?}");
    assert!(
        largest <= 64 * KIB,
        "{largest} bytes allocated for 10 bytes received"
    );
}

#[test]
fn memory_follows_the_bytes_that_arrive() {
    // 1 MiB announced, 300 KiB sent: the buffer stays within twice what arrived.
    let sent = vec![0u8; 300 * KIB];
    let wire = framed(1024 * 1024, &sent);
    let (result, largest) = largest_allocation(|| read(&wire));
    assert!(matches!(result, Err(FrameError::Io(_))), "{result:?}");
    assert!(
        largest <= 2 * sent.len(),
        "{largest} bytes allocated for {} received",
        sent.len()
    );
}

#[test]
fn counts_claimed_in_the_body_are_not_preallocated() {
    // A proposal claiming 60 million bytes, and a vec-of-entries count of u64::MAX, in a few
    // bytes: decoding fails without reserving what was claimed.
    let proposal = codec::encode(&ClientRequest::Propose(vec![1, 2, 3])).unwrap();
    let mut claims_60m = proposal[..1].to_vec();
    claims_60m.push(252); // bincode varint: a u32 follows
    claims_60m.extend_from_slice(&60_000_000u32.to_le_bytes());
    claims_60m.extend_from_slice(&[9; 16]);
    let mut claims_max = proposal[..1].to_vec();
    claims_max.push(253); // a u64 follows
    claims_max.extend_from_slice(&u64::MAX.to_le_bytes());
    for body in [claims_60m, claims_max] {
        let (result, largest) = largest_allocation(|| codec::decode::<ClientRequest>(&body));
        assert!(result.is_err(), "{result:?}");
        assert!(
            largest <= 2 * 1024 * KIB,
            "{largest} bytes allocated for {} bytes",
            body.len()
        );
    }
}
