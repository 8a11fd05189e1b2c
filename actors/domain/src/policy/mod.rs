//! Fleet safety policies (issue 24): rules that span deployments, computed above them and handed to each
//! deployment's admission as a gate (`deployment/progress.rs`, `Gate`): disruption budgets per consumer
//! (`budget`), the unavailable nodes they count (`ledger`), and the pass that admits under them at the end
//! of every apply (`admission`), and maintenance windows (`windows`: cron schedules in time zones).

pub mod admission;
pub mod budget;
pub mod ledger;
pub mod windows;
