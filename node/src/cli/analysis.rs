//! How `deploy why` and `deploy info` print a deployment's metric analysis: the phase, the verdict and why,
//! then per metric its counts and newest measurements.

use convoy_actors::domain::analysis::run::{AnalysisRun, Measured};
use serde::Serialize;

use super::table::Table;

/// A value's JSON name (`"successful"`, `"failure"`).
fn name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "?".into(),
    }
}

/// A deployment's metric analysis: the phase and verdict (with why), then per metric its counts and its last
/// measurements (`deploy why`).
pub fn analysis(run: &AnalysisRun) -> String {
    let verdict = name(&run.verdict);
    let mut out = format!(
        "analysis: phase {}, {verdict}{}, {} phase(s) passed\n",
        run.phase,
        run.reason
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default(),
        run.passed
    );
    let mut t = Table::new(&["METRIC", "OK", "FAILED", "INCONCLUSIVE", "ERRORS", "LAST"]);
    for m in &run.metrics {
        let last: Vec<String> = m
            .last
            .iter()
            .rev()
            .take(3)
            .map(|x| match &x.measured {
                Measured::Value(v) => format!("{v} {}", name(&x.judged)),
                Measured::Empty => "empty".into(),
                Measured::Nan => "NaN".into(),
                Measured::Error(e) => format!("error: {e}"),
            })
            .collect();
        t.row([
            m.name.clone(),
            m.successes.to_string(),
            m.failures.to_string(),
            m.inconclusive.to_string(),
            m.errors.to_string(),
            last.join("; "),
        ]);
    }
    out += &t.render();
    out
}

#[cfg(test)]
#[path = "analysis_test.rs"]
mod tests;
