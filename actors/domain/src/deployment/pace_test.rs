use crate::deployment::pace::Clock;

#[test]
fn a_clock_keeps_what_is_left_while_frozen() {
    let c = Clock::Until(1_000).freeze(400);
    assert_eq!(c, Clock::Frozen(600));
    assert_eq!(c.until(), None);
    assert_eq!(c.thaw(5_000), Clock::Until(5_600));
    assert_eq!(
        Clock::Until(7).thaw(100),
        Clock::Until(7),
        "running: unchanged"
    );
}
