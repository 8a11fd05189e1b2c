//! The deployment rule with time passed in: one timer at the deadline, one tick in flight, no spin
//! on a deadline a tick left in place, a retry after a tick that did not commit.

use std::time::Duration;

use super::{DeploymentCore, Ticked, Timer, RETRY};
use crate::domain::{Command, DeploymentId};

#[test]
fn the_timer_is_armed_at_the_deadline_once_and_cancelled_without_one() {
    let mut core = DeploymentCore::new(DeploymentId(7));
    assert_eq!(
        core.arm(Some(1_500), 1_000),
        Timer::Arm {
            deadline: 1_500,
            delay: Duration::from_millis(500)
        }
    );
    assert_eq!(
        core.arm(Some(1_500), 1_200),
        Timer::Keep,
        "armed there already"
    );
    assert_eq!(core.armed(), Some(1_500));
    assert_eq!(core.arm(None, 1_200), Timer::Cancel);
    assert_eq!(core.armed(), None);
    assert_eq!(
        core.arm(Some(900), 1_200),
        Timer::Arm {
            deadline: 900,
            delay: Duration::ZERO
        },
        "a deadline already past fires at once"
    );
}

#[test]
fn one_tick_in_flight_and_no_spin_on_a_deadline_left_in_place() {
    let mut core = DeploymentCore::new(DeploymentId(7));
    core.arm(Some(1_000), 1_000);
    assert_eq!(
        core.fire(1_000),
        Some(Command::TickDeployment {
            id: DeploymentId(7)
        })
    );
    assert_eq!(core.armed(), None, "the timer fired");
    core.arm(Some(2_000), 1_000);
    assert_eq!(core.fire(2_000), None, "a tick is in flight");
    assert_eq!(core.ticked(1_000, Ok(())), Ticked::Reread);
    assert_eq!(
        core.arm(Some(1_000), 1_000),
        Timer::Arm {
            deadline: 1_000,
            delay: RETRY
        },
        "the tick left its deadline in place: wait before the next"
    );
}

#[test]
fn a_tick_that_did_not_commit_is_retried() {
    let mut core = DeploymentCore::new(DeploymentId(7));
    core.arm(Some(1_000), 1_000);
    core.fire(1_000);
    assert_eq!(
        core.ticked(1_000, Err("no leader".into())),
        Ticked::Retry {
            deadline: 1_000,
            delay: RETRY
        }
    );
    assert!(core.fire(1_000).is_some(), "the retry proposes again");
}
