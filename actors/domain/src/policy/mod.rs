//! Fleet safety policies (issue 24): rules that span deployments, computed above them and handed to each
//! deployment's admission as a gate (`deployment/progress.rs`, `Gate`): disruption budgets per consumer
//! (`budget`), the unavailable nodes they count (`ledger`), and the pass that admits under them at the end
//! of every apply (`admission`), and maintenance windows (`windows`: cron schedules in time zones), the
//! fleet-wide limits on installs and downloads at once (`limits`), and the gate combining budgets and
//! limits (`gate`); the windows' clock (`window_clock`: each schedule parsed once, its state kept until it
//! changes); the weak subscriptions the windows hold, judged in the replicated apply and read by their nodes'
//! targets (`weak`), and their slots under the budgets and limits (`weak_slots`).

pub mod admission;
pub mod budget;
pub mod gate;
pub mod ledger;
pub mod limits;
pub mod weak;
pub mod weak_jitter;
pub mod weak_slots;
pub mod window_clock;
pub mod windows;
