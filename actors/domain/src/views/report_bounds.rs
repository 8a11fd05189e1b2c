//! What one node report may cost: the bounds a report is checked against when it arrives (the API,
//! the consumer actor) and again before the log (`precheck`). A node may name only resources and
//! versions that exist, and its whole report stays within a byte budget; an `error` longer than [`MAX_ERROR_BYTES`] is cut (with a marker) where it arrives.

use crate::entities::model::NodeReport;
use crate::errors::{check_name, quote, DomainError};
use crate::state::ClusterState;
use crate::values::text;

/// Longest `error` of a version a node reports, in bytes (an event's message is capped alike).
pub const MAX_ERROR_BYTES: usize = 1024;
/// Longest `log` path of a resource a node reports, in bytes.
pub const MAX_LOG_PATH_BYTES: usize = 1024;
/// The most bytes one node's report may cost in the log (names, versions, errors: see [`report_cost`]).
pub const MAX_REPORT_BYTES: usize = 64 * 1024;
/// What the cost of each resource and each version in a report counts beside its text (its numbers and
/// flags as encoded).
const ENTRY_BYTES: usize = 16;

/// Ends a cut `error`; the text before it is the error's first bytes.
pub const CUT_MARKER: &str = " [cut: error longer than 1024 bytes]";

/// Cuts every `error` of `report` longer than [`MAX_ERROR_BYTES`] to that length, its end replaced by
/// [`CUT_MARKER`] (at a character boundary). Returns how many were cut.
pub fn cut_errors(report: &mut NodeReport) -> usize {
    let mut cut = 0;
    for resource in report.resources.values_mut() {
        for progress in resource.versions.values_mut() {
            if let Some(error) = progress.error.as_mut() {
                if error.len() > MAX_ERROR_BYTES {
                    let mut end = MAX_ERROR_BYTES - CUT_MARKER.len();
                    while !error.is_char_boundary(end) {
                        end -= 1;
                    }
                    error.truncate(end);
                    error.push_str(CUT_MARKER);
                    cut += 1;
                }
            }
        }
    }
    cut
}

/// What `report` costs in bytes, as counted against [`MAX_REPORT_BYTES`]: its node id, and per
/// resource its name and its log path plus [`ENTRY_BYTES`], per version [`ENTRY_BYTES`] plus its error's length.
pub fn report_cost(report: &NodeReport) -> usize {
    report.node.len()
        + report
            .resources
            .iter()
            .map(|(name, r)| {
                name.len()
                    + ENTRY_BYTES
                    + r.log.as_ref().map_or(0, String::len)
                    + r.versions
                        .values()
                        .map(|v| ENTRY_BYTES + v.error.as_ref().map_or(0, String::len))
                        .sum::<usize>()
            })
            .sum::<usize>()
}

/// Refuses `report` when it is out of bounds, judged against `state`: a bad node or resource name, an
/// `error` over [`MAX_ERROR_BYTES`], a cost over [`MAX_REPORT_BYTES`]; and for a node `state` knows, a
/// resource that does not exist, or a version (held or current) that was never published. A node `state` does not know is checked for shape only: its report is
/// answered and never written (see the leader's report routing).
pub fn check_report(state: &ClusterState, report: &NodeReport) -> Result<(), DomainError> {
    check_name("node", &report.node)?;
    for (name, r) in &report.resources {
        check_name("resource", name)?;
        if let Some(log) = &r.log {
            check_log_path(name, log)?;
        }
        for (version, progress) in &r.versions {
            if let Some(error) = &progress.error {
                if error.len() > MAX_ERROR_BYTES {
                    return Err(DomainError::invalid(
                        &format!("resources.{name}.versions.{version}.error"),
                        format!("{} bytes", error.len()),
                        &format!("at most {MAX_ERROR_BYTES} bytes"),
                    ));
                }
            }
        }
    }
    let cost = report_cost(report);
    if cost > MAX_REPORT_BYTES {
        return Err(DomainError::invalid(
            "report",
            format!("{cost} bytes for node {}", quote(&report.node)),
            &format!("a node's report may cost at most {MAX_REPORT_BYTES} bytes"),
        ));
    }
    if state.node_table().get(&report.node).is_none() {
        return Ok(());
    }
    let resources = state.resource_map();
    for (name, r) in &report.resources {
        // The rule was "what its consumers subscribe to, plus what it holds"; that refused
        // every fleet that reports what it runs before its consumer subscribes (the chaos workload,
        // the CLI and bad-request tests, a machine joining with a resource installed), so a node
        // names resources that exist: as bounded (an operator creates each), and the byte budget
        // above bounds the report whatever their number.
        let Some(published) = resources.get(name) else {
            return Err(DomainError::invalid(
                "resource",
                quote(name),
                &format!(
                    "node {} may report only resources that exist",
                    quote(&report.node)
                ),
            ));
        };
        let unknown = r
            .versions
            .keys()
            .copied()
            .chain(r.current)
            .find(|v| !published.versions.contains_key(v));
        if let Some(version) = unknown {
            return Err(DomainError::invalid(
                &format!("resources.{name}.versions"),
                version,
                "a node may report only versions that were published",
            ));
        }
    }
    Ok(())
}

/// Refuses the `log` path of resource `name` unless absolute and at most [`MAX_LOG_PATH_BYTES`] bytes
/// without a control, bidi or zero-width character ([`text::is_hidden`]); the error names the field and
/// the limit, never echoes a long path, and shows a hidden character only escaped.
fn check_log_path(name: &str, log: &str) -> Result<(), DomainError> {
    let field = format!("resources.{name}.log");
    if log.len() > MAX_LOG_PATH_BYTES {
        return Err(DomainError::invalid(
            &field,
            format!("{} bytes", log.len()),
            &format!("a log path has at most {MAX_LOG_PATH_BYTES} bytes"),
        ));
    }
    if !log.starts_with('/') || text::first_hidden(log).is_some() {
        return Err(DomainError::invalid(
            &field,
            quote(&text::escape(log)),
            "a log path is absolute (starts with '/') without control, bidi or zero-width characters",
        ));
    }
    Ok(())
}

/// The consumers of `node` in `state`, by name (empty for a node it does not know): what an agent
/// token bound to consumers is checked against.
pub fn node_consumers(state: &ClusterState, node: &str) -> Vec<String> {
    state
        .node_table()
        .get(node)
        .map(|n| n.consumers.iter().cloned().collect())
        .unwrap_or_default()
}

#[cfg(test)]
#[path = "report_bounds_test.rs"]
mod tests;
