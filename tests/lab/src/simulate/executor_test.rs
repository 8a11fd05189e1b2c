//! The virtual executor: time jumps to the next timer, tasks run in wake order, a crash drops an
//! owner's tasks, a stall is reported.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use super::executor::{self, Stall};

#[test]
fn time_jumps_to_the_next_timer_in_order() {
    executor::reset();
    let seen = Rc::new(RefCell::new(Vec::new()));
    for (owner, ms) in [(1, 300u64), (2, 100), (3, 200)] {
        let seen = seen.clone();
        executor::spawn_owned(owner, async move {
            executor::sleep(Duration::from_millis(ms)).await;
            seen.borrow_mut().push((owner, executor::now_ms()));
        });
    }
    let out = executor::block_on(async {
        executor::sleep(Duration::from_secs(1)).await;
        executor::now_ms()
    });
    assert_eq!(out, Ok(1_000));
    assert_eq!(*seen.borrow(), vec![(2, 100), (3, 200), (1, 300)]);
}

#[test]
fn killing_an_owner_drops_its_tasks_and_their_timers() {
    executor::reset();
    let ran = Rc::new(RefCell::new(false));
    let flag = ran.clone();
    executor::spawn_owned(5, async move {
        executor::sleep(Duration::from_millis(500)).await;
        *flag.borrow_mut() = true;
    });
    let out = executor::block_on(async {
        executor::sleep(Duration::from_millis(100)).await;
        executor::kill_owner(5);
        executor::sleep(Duration::from_secs(1)).await;
    });
    assert_eq!(out, Ok(()));
    assert!(!*ran.borrow(), "a killed task must not run again");
}

#[test]
fn waiting_on_nothing_is_a_stall() {
    executor::reset();
    let out = executor::block_on(std::future::pending::<()>());
    assert_eq!(out, Err(Stall::Deadlock { at_ms: 0 }));
}
