//! The system clock reads the operating system's clocks.

use super::*;

#[test]
fn the_system_clock_is_after_2020_and_monotonic() {
    let clock = system();
    // 2020-01-01T00:00:00Z.
    assert!(clock.wall_ms() > 1_577_836_800_000);
    let a = clock.now();
    let b = clock.now();
    assert!(b >= a);
}
