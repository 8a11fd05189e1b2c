//! The command handlers, one file per family: a struct of `&mut` borrows of only the maps a family changes,
//! whose methods report what happened; the read-only rules they consult (`selection`, `reconverge`); and what
//! the partway families settle as they go (`settle`).

pub mod brakes;
pub mod forget;
pub mod group;
pub mod group_abort;
pub mod lifecycle;
pub mod reached;
pub mod reconverge;
pub mod registry;
pub mod removal;
pub mod reports;
pub mod retention;
pub mod retract;
pub mod selection;
pub mod settle;
pub mod starts;
pub mod subscriptions;
