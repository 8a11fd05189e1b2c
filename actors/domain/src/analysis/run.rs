//! A deployment's analysis run, replicated: per metric the measurements of the current phase (successes,
//! failures, inconclusive, errors, consecutive errors) and its last 10 measurements, the phase measured and
//! since when (so any leader derives when the next measurement is due), and the verdict rules.

use crate::analysis::condition::Condition;
use crate::analysis::spec::{Analysis, AnalysisMode, MetricSpec, OnOdd};
use serde::{Deserialize, Serialize};

/// Measurements kept per metric.
pub const KEPT: usize = 10;
/// The longest wait (active ms) before a query that errored is made again: an error is retried after
/// `min(interval, 10 s)`, within the metric's `consecutive_error_limit` (Argo Rollouts' 10 s).
pub const ERROR_RETRY_MS: u64 = 10_000;
/// Longest error text kept, in characters.
pub const MAX_ERROR: usize = 200;

/// What one query gave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Measured {
    /// A scalar (never NaN: that is [`Measured::Nan`]).
    Value(f64),
    /// The query returned no series.
    Empty,
    /// The query returned NaN.
    Nan,
    /// The query could not be made or answered (timeout, HTTP error, bad JSON, not a scalar).
    Error(String),
}

impl Measured {
    /// A value (NaN as [`Measured::Nan`], ±Inf as ±`f64::MAX`); an error's text clipped to [`MAX_ERROR`] characters.
    pub fn normalized(self) -> Measured {
        match self {
            Measured::Value(v) if v.is_nan() => Measured::Nan,
            // JSON has no infinity: ±Inf is kept as the largest finite value, which compares the same.
            Measured::Value(v) if v.is_infinite() => Measured::Value(f64::MAX.copysign(v)),
            Measured::Error(e) if e.chars().count() > MAX_ERROR => {
                Measured::Error(e.chars().take(MAX_ERROR).collect())
            }
            m => m,
        }
    }
}

/// How one measurement counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Judged {
    /// The success condition held (or the failure condition did not).
    Success,
    /// The failure condition held (or the success condition did not, with no failure condition).
    Failure,
    /// Neither condition decided, or an empty result or NaN counted so.
    Inconclusive,
    /// No value: counts toward the consecutive-error limit only.
    Error,
}

/// One recorded measurement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Measurement {
    /// When it was recorded (leader-stamped ms).
    pub at: u64,
    /// The phase it measured (per_batch: the batch or wave number, from 1; background: 0).
    pub phase: u32,
    /// What the query gave.
    pub measured: Measured,
    /// How it counted.
    pub judged: Judged,
}

/// A metric's counts in the current phase and its last measurements.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MetricRun {
    /// The metric's name.
    pub name: String,
    /// Queries made in this phase, errors included (what the next one's due time and number derive from).
    pub attempts: u32,
    /// Measurements with a value or an empty result (errors excluded): what `count` counts.
    pub taken: u32,
    /// Successful measurements in this phase.
    pub successes: u32,
    /// Failed measurements in this phase.
    pub failures: u32,
    /// Inconclusive measurements in this phase.
    pub inconclusive: u32,
    /// Errors in this phase.
    pub errors: u32,
    /// Errors in a row (reset by any answer).
    pub consecutive_errors: u32,
    /// Every measurement recorded for this metric in the deployment, all phases.
    pub total: u32,
    /// The last [`KEPT`] measurements, oldest first.
    pub last: Vec<Measurement>,
}

/// Where an analysis (or one phase of it) stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Still measuring (or waiting for its phase).
    #[default]
    Running,
    /// Every judged metric took its count with at least one success and within its limits.
    Successful,
    /// A metric had more failures than its `failure_limit`.
    Failed,
    /// A metric had more inconclusive measurements or consecutive errors than tolerated, or ended its count
    /// without a success.
    Inconclusive,
}

/// A deployment's analysis run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AnalysisRun {
    /// The phase measured or last measured (per_batch: batch or wave number from 1; background: 0).
    pub phase: u32,
    /// When (active ms of its deployment, `deployment/active.rs`) the current phase's measuring began; `None`
    /// while nothing is measured. Measurements are due from it in active time, so a wait spaces none of them.
    pub measuring_since: Option<u64>,
    /// The highest per_batch phase whose analysis passed.
    pub passed: u32,
    /// The verdict of the current phase.
    pub verdict: Verdict,
    /// Why, when it is not running or successful.
    pub reason: Option<String>,
    /// One per metric of the spec, in its order.
    pub metrics: Vec<MetricRun>,
}

/// How measurement `measured` of metric `m` counts.
pub fn judge(m: &MetricSpec, measured: &Measured) -> Judged {
    let odd = |o: OnOdd| match o {
        OnOdd::Inconclusive => Judged::Inconclusive,
        OnOdd::Failure => Judged::Failure,
    };
    let cond = |c: &Option<String>| c.as_deref().map(Condition::parse);
    match measured {
        Measured::Error(_) => Judged::Error,
        Measured::Empty => odd(m.on_empty),
        Measured::Nan => odd(m.on_nan),
        Measured::Value(x) if x.is_nan() => odd(m.on_nan),
        Measured::Value(x) => match (cond(&m.success), cond(&m.failure)) {
            (Some(Err(_)), _) | (_, Some(Err(_))) => Judged::Error,
            (_, Some(Ok(f))) if f.holds(*x) => Judged::Failure,
            (Some(Ok(s)), failure) => {
                if s.holds(*x) {
                    Judged::Success
                } else if failure.is_some() {
                    Judged::Inconclusive
                } else {
                    Judged::Failure
                }
            }
            (None, _) => Judged::Success,
        },
    }
}

/// One metric's verdict in the phase, and why.
pub fn metric_verdict(spec: &MetricSpec, run: &MetricRun, mode: AnalysisMode) -> (Verdict, String) {
    let name = &spec.name;
    if run.failures > spec.failure_limit {
        let why = format!(
            "metric {name}: {} failed measurements, {} tolerated",
            run.failures, spec.failure_limit
        );
        return (Verdict::Failed, why);
    }
    if run.consecutive_errors > spec.consecutive_error_limit {
        let last = run.last.last().and_then(|m| match &m.measured {
            Measured::Error(e) => Some(e.as_str()),
            _ => None,
        });
        let why = format!(
            "metric {name}: {} consecutive errors, {} tolerated (last: {})",
            run.consecutive_errors,
            spec.consecutive_error_limit,
            last.unwrap_or("?")
        );
        return (Verdict::Inconclusive, why);
    }
    if run.inconclusive > spec.inconclusive_limit {
        let why = format!(
            "metric {name}: {} inconclusive measurements, {} tolerated",
            run.inconclusive, spec.inconclusive_limit
        );
        return (Verdict::Inconclusive, why);
    }
    if let Some(count) = spec.count_in(mode) {
        if run.taken >= count {
            if run.successes == 0 {
                let why = format!("metric {name}: {count} measurements and none successful");
                return (Verdict::Inconclusive, why);
            }
            return (Verdict::Successful, String::new());
        }
    }
    (Verdict::Running, String::new())
}

impl AnalysisRun {
    /// A run for `spec`: a background analysis measures from `at` (active ms), a per_batch one waits for its
    /// first phase.
    pub fn new(spec: &Analysis, at: u64) -> AnalysisRun {
        let metrics = spec
            .metrics
            .iter()
            .map(|m| MetricRun {
                name: m.name.clone(),
                ..MetricRun::default()
            })
            .collect();
        AnalysisRun {
            measuring_since: (spec.mode == AnalysisMode::Background).then_some(at),
            metrics,
            ..AnalysisRun::default()
        }
    }

    /// Begins measuring `phase` at `at` (active ms), its counts from zero (the last measurements stay).
    pub fn start_phase(&mut self, phase: u32, at: u64) {
        self.phase = phase;
        self.measuring_since = Some(at);
        self.verdict = Verdict::Running;
        self.reason = None;
        for m in &mut self.metrics {
            *m = MetricRun {
                name: std::mem::take(&mut m.name),
                total: m.total,
                last: std::mem::take(&mut m.last),
                ..MetricRun::default()
            };
        }
    }

    /// When (active ms) metric `i`'s next measurement is due (an interval after an answer, at most
    /// [`ERROR_RETRY_MS`] after an error) (and its number in the phase), or `None` when the phase
    /// is not being measured, has a verdict, or the metric took its count.
    pub fn due(&self, spec: &Analysis, i: usize) -> Option<(u32, u64)> {
        let since = self.measuring_since?;
        if self.verdict != Verdict::Running {
            return None;
        }
        let (m, run) = (spec.metrics.get(i)?, self.metrics.get(i)?);
        if spec.count_in(i).is_some_and(|c| run.taken >= c) {
            return None;
        }
        // Each answer waits the interval, each error only `min(interval, ERROR_RETRY_MS)` (Argo Rollouts'
        // error retry): the sum of the phase's gaps, from its replicated counts.
        let retry = m.interval_ms.min(ERROR_RETRY_MS);
        let at = since
            .saturating_add(m.initial_delay_ms)
            .saturating_add(u64::from(run.taken).saturating_mul(m.interval_ms))
            .saturating_add(u64::from(run.errors).saturating_mul(retry));
        Some((run.attempts, at))
    }

    /// Records measurement number `seq` of metric `name` in `phase` at `at` and answers the phase's verdict
    /// after it; `None` (nothing changed) when it is not the measurement expected now: another phase, an
    /// unknown metric, a number already recorded, or a phase that already has a verdict.
    pub fn record(
        &mut self,
        spec: &Analysis,
        name: &str,
        phase: u32,
        seq: u32,
        measured: Measured,
        at: u64,
    ) -> Option<Verdict> {
        if self.measuring_since.is_none() || self.verdict != Verdict::Running || phase != self.phase
        {
            return None;
        }
        let i = spec.metrics.iter().position(|m| m.name == name)?;
        let (m, run) = (&spec.metrics[i], self.metrics.get_mut(i)?);
        if run.attempts != seq || spec.count_in(i).is_some_and(|c| run.taken >= c) {
            return None;
        }
        let measured = measured.normalized();
        let judged = judge(m, &measured);
        run.attempts += 1;
        run.total += 1;
        match judged {
            Judged::Error => {
                run.errors += 1;
                run.consecutive_errors += 1;
            }
            j => {
                run.taken += 1;
                run.consecutive_errors = 0;
                match j {
                    Judged::Success => run.successes += 1,
                    Judged::Failure => run.failures += 1,
                    _ => run.inconclusive += 1,
                }
            }
        }
        if run.last.len() >= KEPT {
            run.last.remove(0);
        }
        run.last.push(Measurement {
            at,
            phase,
            measured,
            judged,
        });
        let (verdict, reason) = self.verdict_of(spec);
        self.verdict = verdict;
        self.reason = (!reason.is_empty()).then_some(reason);
        Some(verdict)
    }

    /// The phase's verdict: failed if a judged metric failed, else inconclusive if one is, else successful once
    /// every judged metric is. Dry-run metrics never block nor decide: beside judged metrics they are only
    /// shown; with only those (per_batch), the phase passes once each took its count or went past its own
    /// limits (a dry-run metric whose queries all error holds it no longer than its error limit).
    pub fn verdict_of(&self, spec: &Analysis) -> (Verdict, String) {
        let mut inconclusive = None;
        let mut all_done = true;
        let mut dry_done = spec.mode == AnalysisMode::PerBatch;
        for (m, run) in spec.metrics.iter().zip(&self.metrics) {
            let (v, why) = metric_verdict(m, run, spec.mode);
            if m.dry_run {
                dry_done &= v != Verdict::Running;
                continue;
            }
            match v {
                Verdict::Failed => return (Verdict::Failed, why),
                Verdict::Inconclusive => inconclusive = inconclusive.or(Some(why)),
                Verdict::Running => all_done = false,
                Verdict::Successful => {}
            }
        }
        let judged = spec.metrics.iter().any(|m| !m.dry_run);
        match inconclusive {
            Some(why) => (Verdict::Inconclusive, why),
            None if all_done && (judged || dry_done) => (Verdict::Successful, String::new()),
            None => (Verdict::Running, String::new()),
        }
    }
}

impl Analysis {
    /// Metric `i`'s count under this analysis' mode.
    pub fn count_in(&self, i: usize) -> Option<u32> {
        self.metrics.get(i).and_then(|m| m.count_in(self.mode))
    }
}

#[cfg(test)]
#[path = "run_test.rs"]
mod tests;
