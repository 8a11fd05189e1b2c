//! The actix shell of one consumer's report ingestion (`consumer.rs`): it hands its messages to
//! the ingestion, proposes the batches it gives through the host and runs its pacing wait.

use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;

use super::consumer::{ConsumerCore, Flush};
use super::host::Host;
use super::messages::{Report, ReportBatch, ReportRejected, Stop};
use crate::domain::Command;

/// Ingests one consumer's reports on the leader.
pub struct ConsumerActor {
    core: ConsumerCore,
    host: Arc<dyn Host>,
}

impl ConsumerActor {
    /// An actor for consumer `name`.
    pub fn new(name: String, host: Arc<dyn Host>) -> Self {
        Self {
            core: ConsumerCore::new(name, host.clone()),
            host,
        }
    }

    /// Like [`ConsumerActor::new`] with a custom error byte rate (tests).
    #[cfg(test)]
    pub fn with_byte_rate(name: String, host: Arc<dyn Host>, bytes_per_sec: usize) -> Self {
        Self {
            core: ConsumerCore::with_byte_rate(name, host.clone(), bytes_per_sec),
            host,
        }
    }

    /// Like [`ConsumerActor::new`] with a custom bound on a batch's error bytes (tests).
    #[cfg(test)]
    pub fn with_batch_error_bytes(name: String, host: Arc<dyn Host>, bytes: usize) -> Self {
        Self {
            core: ConsumerCore::with_batch_error_bytes(name, host.clone(), bytes),
            host,
        }
    }

    /// Like [`ConsumerActor::new`] with a custom queue bound (tests).
    #[cfg(test)]
    pub fn with_limit(name: String, host: Arc<dyn Host>, limit: usize) -> Self {
        Self {
            core: ConsumerCore::with_limit(name, host.clone(), limit),
            host,
        }
    }

    fn flush(&mut self, ctx: &mut Context<Self>) {
        match self.core.flush(Instant::now()) {
            Flush::Idle => {}
            Flush::Wait(delay) => {
                ctx.run_later(delay, |act, ctx| {
                    act.core.paced_over();
                    act.flush(ctx);
                });
            }
            Flush::Propose(batch) => {
                let fut = self.host.propose(Command::ReportNodes(batch));
                ctx.spawn(fut.into_actor(self).map(|result, act, ctx| {
                    act.core.proposed(result);
                    act.flush(ctx);
                }));
            }
        }
    }
}

impl Actor for ConsumerActor {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Self::Context) {
        self.core.stopped();
    }
}

impl Handler<Report> for ConsumerActor {
    type Result = Result<(), ReportRejected>;

    fn handle(&mut self, Report(report): Report, ctx: &mut Self::Context) -> Self::Result {
        let taken = self.core.ingest(vec![report], Instant::now()).pop();
        self.flush(ctx);
        taken.unwrap_or(Err(ReportRejected::NotLeader))
    }
}

impl Handler<ReportBatch> for ConsumerActor {
    type Result = Vec<Result<(), ReportRejected>>;

    fn handle(
        &mut self,
        ReportBatch(reports): ReportBatch,
        ctx: &mut Self::Context,
    ) -> Self::Result {
        let taken = self.core.ingest(reports, Instant::now());
        self.flush(ctx);
        taken
    }
}

impl Handler<Stop> for ConsumerActor {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Self::Context) {
        ctx.stop();
    }
}

#[cfg(test)]
#[path = "consumer_test.rs"]
mod tests;
