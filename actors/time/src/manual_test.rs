//! The manual clock moves only when told, and its clones move together.

use super::*;

#[test]
fn a_manual_clock_stands_still_until_advanced_and_clones_share_it() {
    let clock = ManualClock::new(1_000);
    let seen_by_code = clock.clone();
    let start = seen_by_code.now();
    assert_eq!(seen_by_code.wall_ms(), 1_000);
    assert_eq!(seen_by_code.now(), start);
    clock.advance(Duration::from_millis(250));
    assert_eq!(seen_by_code.wall_ms(), 1_250);
    assert_eq!(seen_by_code.now() - start, Duration::from_millis(250));
    clock.set_wall_ms(500);
    assert_eq!(seen_by_code.wall_ms(), 500, "the wall clock may jump back");
    assert_eq!(seen_by_code.now() - start, Duration::from_millis(250));
}
