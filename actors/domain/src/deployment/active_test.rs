use crate::deployment::clock::ActiveClock;

#[test]
fn the_clock_banks_what_ran_and_stands_still_while_stopped() {
    let mut c = ActiveClock::new(1_000, true);
    assert_eq!(c.at(1_400), 400);
    c.stop(1_400);
    assert_eq!(c.at(9_000), 400, "stopped: no time passes");
    assert_eq!(c.wall(1_000), None, "nothing is due while stopped");
    c.start(10_000);
    assert_eq!(c.at(10_100), 500);
    assert_eq!(
        c.wall(1_000),
        Some(10_600),
        "the 600 ms left, from the restart"
    );
    c.start(20_000);
    assert_eq!(c.at(10_100), 500, "a second start changes nothing");
}

#[test]
fn a_clock_made_stopped_starts_at_zero() {
    let mut c = ActiveClock::new(5, false);
    assert_eq!(c.wall(0), None, "stopped");
    assert_eq!(c.at(1_000), 0);
    c.start(2_000);
    assert_eq!(
        c.wall(0),
        Some(2_000),
        "a deadline already reached is due at once"
    );
    assert_eq!(c.at(2_250), 250);
}
