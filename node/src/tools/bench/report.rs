//! Benchmark results: rows of (scenario, metric, value, unit, note), printed as they come, rendered as a
//! markdown table, and saved as JSON together with the machine they were measured on.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// One measured number.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Which scenario measured it (`throughput`, `ingest`, ...).
    pub scenario: String,
    /// What it is.
    pub metric: String,
    /// The number; `None` when it could not be measured.
    pub value: Option<f64>,
    /// The unit `value` is in, as printed: `ms`, `µs`, `ops/s`, `MiB`, `nodes`, ...
    pub unit: String,
    /// How it was measured, or why it is missing.
    pub note: String,
}

/// The machine the numbers come from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Online CPUs.
    pub cpus: usize,
    /// CPU model name.
    pub cpu_model: String,
    /// Total RAM, MiB.
    pub ram_mib: u64,
    /// Kernel release (`/proc/sys/kernel/osrelease`); empty when unreadable.
    pub kernel: String,
}

impl Machine {
    /// Reads `/proc` (Linux).
    pub fn detect() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        Self {
            cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
            cpu_model: proc_field(&cpuinfo, "model name").unwrap_or_default(),
            ram_mib: proc_field(&meminfo, "MemTotal")
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                .map_or(0, |kb| kb / 1024),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_string(),
        }
    }
}

/// The value of `key: value` (or `key<TAB>: value`) in a `/proc` text file.
pub fn proc_field(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

/// Everything a run saved.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Saved {
    /// The machine the rows were measured on.
    pub machine: Machine,
    /// Every measured number, in measurement order.
    pub rows: Vec<Row>,
}

/// Rows collected during a run.
#[derive(Debug, Default)]
pub struct Results {
    /// In measurement order.
    pub rows: Vec<Row>,
}

impl Results {
    /// Records a number and prints it at once (long runs show progress).
    pub fn add(
        &mut self,
        scenario: &str,
        metric: impl Into<String>,
        value: Option<f64>,
        unit: &str,
        note: impl Into<String>,
    ) {
        let row = Row {
            scenario: scenario.to_string(),
            metric: metric.into(),
            value,
            unit: unit.to_string(),
            note: note.into(),
        };
        println!(
            "[{}] {}: {} {}{}",
            row.scenario,
            row.metric,
            format_value(row.value),
            row.unit,
            if row.note.is_empty() {
                String::new()
            } else {
                format!(" ({})", row.note)
            }
        );
        self.rows.push(row);
    }

    /// The value of the first row named `metric`.
    pub fn value(&self, metric: &str) -> Option<f64> {
        self.rows
            .iter()
            .find(|r| r.metric == metric)
            .and_then(|r| r.value)
    }
}

/// `a / b` when both are known and `b` is not zero.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b != 0.0 => Some(a / b),
        _ => None,
    }
}

/// `-` when missing; integers with thousands separators from 100 up; two significant decimals below.
pub fn format_value(value: Option<f64>) -> String {
    let Some(v) = value else {
        return "-".to_string();
    };
    if !v.is_finite() {
        return v.to_string();
    }
    if v.abs() >= 100.0 {
        let n = v.round() as i64;
        let digits = n.unsigned_abs().to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        if n < 0 {
            out.insert(0, '-');
        }
        out
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A markdown table of the rows: scenario, metric, value, unit, note.
pub fn markdown_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| scenario | metric | value | unit | note |\n| --- | --- | ---: | --- | --- |\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            r.scenario,
            r.metric.replace('|', "/"),
            format_value(r.value),
            r.unit,
            r.note.replace('|', "/")
        ));
    }
    out
}

/// The saved rows with those of every scenario measured now replaced by the new ones (so scenarios can
/// be run one at a time into one file).
pub fn merge(saved: Vec<Row>, new: &[Row]) -> Vec<Row> {
    let fresh: std::collections::BTreeSet<&str> = new.iter().map(|r| r.scenario.as_str()).collect();
    saved
        .into_iter()
        .filter(|r| !fresh.contains(r.scenario.as_str()))
        .chain(new.iter().cloned())
        .collect()
}

/// Merges `rows` into the JSON file at `path` (created if missing) with this machine.
pub fn save(path: &Path, rows: &[Row]) -> anyhow::Result<Saved> {
    let old: Saved = std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    let saved = Saved {
        machine: Machine::detect(),
        rows: merge(old.rows, rows),
    };
    std::fs::write(path, serde_json::to_vec_pretty(&saved)?)?;
    Ok(saved)
}

#[cfg(test)]
#[path = "report_test.rs"]
mod tests;
