//! A deployment's hooks into its metric analysis (DEPLOYMENTS.md "Analysis"): the per_batch gate admission
//! asks before the next batch or wave (and before completing), recording a measurement and acting on the
//! verdict (roll back, fail or pause), re-measuring after a resume, and which nodes a phase measures.

use crate::analysis::run::{AnalysisRun, Measured, Verdict};
use crate::analysis::spec::{AnalysisMode, OnFailure};
use crate::deployment::progress::Gate;
use crate::deployment::reasons::Wait;
use crate::deployment::{Deployment, EventKind, NodePhase};
use crate::values::ids::{Actor, Timestamp};
use crate::values::status::Status;
use crate::values::strategy::Plan;

impl Deployment {
    /// The run this deployment starts with, if its settings carry an analysis.
    pub(crate) fn new_analysis_run(&self, at: Timestamp) -> Option<AnalysisRun> {
        self.settings
            .analysis
            .as_ref()
            .map(|a| AnalysisRun::new(a, self.active_at(at)))
    }

    fn per_batch(&self) -> bool {
        self.settings
            .analysis
            .as_ref()
            .is_some_and(|a| a.mode == AnalysisMode::PerBatch)
    }

    /// Whether per_batch analysis holds the deployment after phase `phase` (batch or wave number from 1):
    /// it does until that phase's analysis passed, and starts measuring it on the first ask.
    pub(crate) fn analysis_holds(&mut self, phase: u32, at: Timestamp) -> bool {
        if !self.per_batch() || phase == 0 {
            return false;
        }
        let now = self.active_at(at);
        let Some(run) = self.analysis.as_mut() else {
            return false;
        };
        if run.passed >= phase {
            return false;
        }
        if run.phase != phase || run.measuring_since.is_none() {
            run.start_phase(phase, now);
            let msg = format!("analysis of batch {phase} started");
            self.push_event(at, EventKind::Analysis, None, Actor::System, Some(msg));
        }
        true
    }

    /// The rolling gate: at the end of each wave of `wave` nodes, wait for the wave to finish and its analysis
    /// to pass before admitting more.
    pub(crate) fn analysis_wave_holds(&mut self, wave: u32, at: Timestamp) -> bool {
        if !self.per_batch() || wave == 0 || wave == u32::MAX {
            return false;
        }
        let touched = self.touched.len() as u32;
        if touched == 0 || !touched.is_multiple_of(wave) {
            return false;
        }
        let phase = touched / wave;
        if self.analysis.as_ref().is_none_or(|r| r.passed >= phase) {
            return false;
        }
        let running = self.touched[(touched - wave) as usize..].iter().any(|&p| {
            matches!(
                self.nodes[p as usize].phase,
                NodePhase::Installing | NodePhase::Watching
            )
        });
        running || self.analysis_holds(phase, at)
    }

    /// Its own pacing holds admission: a bake runs, or a per_batch analysis measures a phase (the policies do
    /// not make it wait then: it is busy with itself, and its clock must run for the bake and the measurements).
    pub fn pacing_holds(&self) -> bool {
        self.pace.bake.is_some()
            || (self.per_batch()
                && self
                    .analysis
                    .as_ref()
                    .is_some_and(|r| r.measuring_since.is_some()))
    }

    /// Why the analysis does not let the deployment end by its quorum or its completion timeout (`None`: it
    /// may): per_batch, the last phase formed has not passed; background, a judged metric has no successful
    /// measurement (a run with none is never a success).
    pub(crate) fn analysis_unpassed(&self) -> Option<String> {
        let spec = self.settings.analysis.as_ref()?;
        let run = self.analysis.as_ref()?;
        match spec.mode {
            AnalysisMode::PerBatch => {
                let phase = self.analysis_last_phase();
                (phase > 0 && run.passed < phase)
                    .then(|| format!("analysis of batch {phase} has not passed"))
            }
            AnalysisMode::Background => spec
                .metrics
                .iter()
                .zip(&run.metrics)
                .any(|(m, r)| !m.dry_run && r.successes == 0)
                .then(|| "analysis has no successful measurement".to_string()),
        }
    }

    /// Why a background analysis keeps a deployment whose every node is done from ending (`None`: it does
    /// not): it rolls forward with nothing in its waits, a node succeeded, and a judged metric has no
    /// successful measurement yet. It stays ROLLING_FORWARD, measuring, until one comes; an inconclusive or
    /// failed verdict, or its completion timeout, ends the wait otherwise (DEPLOYMENTS.md §15).
    pub fn analysis_awaited(&self) -> Option<String> {
        if self.per_batch()
            || self.status != Status::RollingForward
            || !self.waits().is_empty()
            || self.tally.succeeded == 0
            || self.tally.ended() < self.nodes.len() as u32
        {
            return None;
        }
        self.analysis_unpassed()
            .map(|why| format!("every node is done; {why}: waiting for one before it ends"))
    }

    /// [`Self::analysis_awaited`] from the judgement: answers whether it waits, and says why in an event the
    /// first time (not again while the last analysis event says so).
    pub(crate) fn await_analysis(&mut self, at: Timestamp) -> bool {
        let Some(msg) = self.analysis_awaited() else {
            return false;
        };
        let said = self
            .events
            .iter()
            .rev()
            .find(|e| e.kind == EventKind::Analysis)
            .is_some_and(|e| e.message.as_deref() == Some(msg.as_str()));
        if !said {
            self.push_event(at, EventKind::Analysis, None, Actor::System, Some(msg));
        }
        true
    }

    /// The last phase formed: the batch count, the waves begun, or 1 for all at once (0 before any install).
    pub(crate) fn analysis_last_phase(&self) -> u32 {
        let touched = self.touched.len() as u32;
        match self.settings.strategy.admission().plan {
            Plan::Batches { .. } => self.batches.len() as u32,
            Plan::Windows { install, .. } if install == u32::MAX => u32::from(touched > 0),
            Plan::Windows { install, .. } => touched.div_ceil(install.max(1)),
        }
    }

    /// Positions of the nodes phase `phase` measures: its batch or wave (per_batch), every node admitted so far
    /// (background, phase 0).
    pub fn analysis_phase_nodes(&self, phase: u32) -> &[u32] {
        if phase == 0 {
            return &self.touched;
        }
        let k = phase as usize;
        let (start, end) = match self.settings.strategy.admission().plan {
            Plan::Batches { .. } => {
                let start: u32 = self.batches.iter().take(k - 1).sum();
                let len = self.batches.get(k - 1).copied().unwrap_or(0);
                (start as usize, (start + len) as usize)
            }
            Plan::Windows { install, .. } if install == u32::MAX => (0, self.touched.len()),
            Plan::Windows { install, .. } => {
                let w = install.max(1) as usize;
                ((k - 1) * w, k * w)
            }
        };
        let len = self.touched.len();
        &self.touched[start.min(len)..end.min(len)]
    }

    /// Records measurement `seq` of `metric` in `phase` (only while ROLLING_FORWARD, and only the one expected)
    /// and acts on the verdict: a per_batch phase that passed lets admission go on; a failed analysis takes
    /// `on_failure` (default: the deployment's failure path); an inconclusive one pauses, `paused_by =
    /// analysis`. Answers whether anything was recorded.
    pub(crate) fn record_measurement(
        &mut self,
        metric: &str,
        phase: u32,
        seq: u32,
        measured: Measured,
        at: Timestamp,
        gate: &mut dyn Gate,
    ) -> bool {
        if self.status != Status::RollingForward {
            return false;
        }
        let Some(spec) = self.settings.analysis.clone() else {
            return false;
        };
        let Some(run) = self.analysis.as_mut() else {
            return false;
        };
        let Some(verdict) = run.record(&spec, metric, phase, seq, measured, at) else {
            return false;
        };
        let reason = run.reason.clone().unwrap_or_default();
        match verdict {
            // A background success may let a quorum end the deployment (judgement.rs).
            Verdict::Running if spec.mode == AnalysisMode::Background => {
                self.advance(at, &Actor::System, gate)
            }
            Verdict::Running => {}
            Verdict::Successful => {
                run.measuring_since = None;
                if spec.mode == AnalysisMode::PerBatch {
                    run.passed = run.passed.max(phase);
                    let msg = format!("analysis of batch {phase} passed");
                    self.push_event(at, EventKind::Analysis, None, Actor::System, Some(msg));
                    // A quorum met meanwhile ends it now, before the next batch is admitted.
                    self.evaluate_forward(at);
                    self.advance(at, &Actor::System, gate);
                }
            }
            Verdict::Failed => {
                let msg = format!("analysis failed: {reason}");
                match spec.on_failure {
                    None => self.fail(at, msg),
                    Some(OnFailure::Rollback) => {
                        let _ = self.start_rollback(at, Actor::System, Some(msg));
                    }
                    Some(OnFailure::Fail) => {
                        let _ = self.transition(Status::Failed, at, Actor::System, Some(msg));
                    }
                    Some(OnFailure::Pause) => self.pause_by_analysis(at, msg),
                }
                self.advance(at, &Actor::System, gate);
            }
            Verdict::Inconclusive => {
                self.pause_by_analysis(at, format!("analysis inconclusive: {reason}"))
            }
        }
        true
    }

    fn pause_by_analysis(&mut self, at: Timestamp, msg: String) {
        self.hold(Wait::Analysis, at, Actor::System, Some(msg));
    }

    /// After a resume: a phase whose analysis paused it (inconclusive, or failed with `on_failure: pause`) is
    /// measured again from `at`, its counts from zero.
    pub(crate) fn analysis_resumed(&mut self, at: Timestamp) {
        let now = self.active_at(at);
        if let Some(run) = self.analysis.as_mut() {
            if matches!(run.verdict, Verdict::Inconclusive | Verdict::Failed)
                && run.measuring_since.is_some()
            {
                let phase = run.phase;
                run.start_phase(phase, now);
            }
        }
    }
}

#[cfg(test)]
#[path = "analysis_test.rs"]
mod tests;

#[cfg(test)]
#[path = "analysis_end_test.rs"]
mod end_tests;
