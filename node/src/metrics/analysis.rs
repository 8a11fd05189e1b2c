//! `convoy_analysis_measurements_total{result}`: the leader's analysis measurements on this server, by what
//! the query gave (`value`, `empty`, `nan`, `error`: four labels whatever the deployments and metrics).

use std::sync::OnceLock;

use convoy_actors::domain::analysis::run::Measured;
use prometheus::{IntCounterVec, Opts, Registry};

fn counter() -> &'static IntCounterVec {
    static C: OnceLock<IntCounterVec> = OnceLock::new();
    C.get_or_init(|| {
        IntCounterVec::new(
            Opts::new(
                "convoy_analysis_measurements_total",
                "Analysis measurements made by the leader on this server, by result (value, empty, nan, error).",
            ),
            &["result"],
        )
        .expect("valid counter")
    })
}

/// Registers the counter (with its four series at 0) in `registry`.
pub fn register(registry: &Registry) {
    let c = counter();
    for r in ["value", "empty", "nan", "error"] {
        c.with_label_values(&[r]);
    }
    registry
        .register(Box::new(c.clone()))
        .expect("metric names are unique");
}

/// Counts one measurement.
pub fn measured(m: &Measured) {
    let label = match m {
        Measured::Value(_) => "value",
        Measured::Empty => "empty",
        Measured::Nan => "nan",
        Measured::Error(_) => "error",
    };
    counter().with_label_values(&[label]).inc();
}

#[cfg(test)]
#[path = "analysis_test.rs"]
mod tests;
