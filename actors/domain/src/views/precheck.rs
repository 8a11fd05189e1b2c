//! What a server checks before it proposes a command: shape and bounded cost. A refused request
//! must cost nothing on the replicas, so the size of every name, message, list and range is checked
//! on the server that receives it, against its applied state, before anything reaches the log. `apply`
//! runs the same checks again (it must stay total: a command checked against a slightly older state
//! may still be refused there), so this module only ever refuses earlier, never differently.

use crate::command::{Command, DeploymentSpec};
use crate::entities::tokens::{check_token_consumers, Role};
use crate::errors::ranges::parse_ranges;
use crate::errors::{check_message, check_name, quote, DomainError};
use crate::state::ClusterState;
use crate::views::report_bounds::check_report;

/// Most node ids one command may name (a consumer's creation or one change of its nodes).
pub const MAX_NODES_PER_COMMAND: usize = 100_000;
/// Most metadata entries on a version.
pub const MAX_METADATA_ENTRIES: usize = 64;
/// Longest metadata key or value, and longest artifact URL or digest, in bytes.
pub const MAX_FIELD_BYTES: usize = 2048;
/// Most members of a group, and most dependencies of a version.
pub const MAX_LINKS: usize = 256;

/// Refuses `command` if its shape or cost is out of bounds, judged against `state` (this server's
/// applied state). Every variant is named: a new command does not compile until it is checked here.
pub fn precheck(state: &ClusterState, command: &Command) -> Result<(), DomainError> {
    match command {
        Command::CreateResource { name } => check_name("resource", name),
        Command::PublishVersion {
            resource,
            label,
            artifact,
            metadata,
            depends_on,
            health_port: _,
        } => {
            check_name("resource", resource)?;
            check_message(label.as_deref())?;
            if let Some(a) = artifact {
                check_field("artifact.url", &a.url)?;
                if let Some(sha) = &a.sha256 {
                    check_sha256(sha)?;
                }
            }
            check_count("metadata", metadata.len(), MAX_METADATA_ENTRIES)?;
            for (k, v) in metadata {
                check_field("metadata key", k)?;
                check_field("metadata value", v)?;
            }
            check_count("depends_on", depends_on.len(), MAX_LINKS)?;
            depends_on
                .iter()
                .try_for_each(|d| check_name("resource", &d.resource))
        }
        Command::CreateConsumer { name, nodes } => {
            check_name("consumer", name)?;
            check_nodes(nodes)
        }
        Command::UpdateConsumerNodes { name, add, remove } => {
            check_name("consumer", name)?;
            check_nodes(add)?;
            check_nodes(remove)
        }
        Command::Subscribe {
            consumer,
            resource,
            policy,
            ..
        } => {
            check_analysis(policy.analysis.as_ref())?;
            check_name("consumer", consumer)?;
            check_name("resource", resource)
        }
        Command::PatchSubscription {
            consumer,
            resource,
            policy,
            ..
        } => {
            if let crate::entities::policy::Change::Set(a) = &policy.analysis {
                check_analysis(Some(a))?;
            }
            check_name("consumer", consumer)?;
            check_name("resource", resource)
        }
        Command::ClearHold {
            consumer, resource, ..
        } => {
            check_name("consumer", consumer)?;
            check_name("resource", resource)
        }
        Command::RetractVersion {
            resource, message, ..
        } => {
            check_name("resource", resource)?;
            check_message(message.as_deref())
        }
        Command::UnretractVersion { resource, .. } => check_name("resource", resource),
        Command::Unsubscribe { consumer, resource } => {
            check_name("consumer", consumer)?;
            check_name("resource", resource)
        }
        Command::DeleteConsumer { name } => check_name("consumer", name),
        Command::DeleteGroup { name } => check_name("group", name),
        Command::ReportNodes(reports) => {
            check_count("reports", reports.len(), MAX_NODES_PER_COMMAND)?;
            reports.iter().try_for_each(|r| check_report(state, r))
        }
        Command::MarkInactive { nodes } => check_nodes(nodes),
        Command::StartDeployment(spec) => check_spec(state, spec),
        Command::Pause { message, .. }
        | Command::Resume { message, .. }
        | Command::Abort { message, .. }
        | Command::Rollback { message, .. }
        | Command::Confirm { message, .. }
        | Command::HardPause { message, .. } => check_message(message.as_deref()),
        Command::Pulse { .. } | Command::AbortGroupDeployment { .. } | Command::Tick => Ok(()),
        Command::Prune { .. } | Command::TickDeployment { .. } => Ok(()),
        Command::RecordMeasurement {
            metric, measured, ..
        } => {
            if !crate::analysis::spec::is_metric_name(metric) {
                return Err(DomainError::invalid(
                    "metric",
                    quote(metric),
                    "a metric name is 1 to 64 letters, digits, '-', '_' or '.'",
                ));
            }
            match measured {
                crate::analysis::run::Measured::Error(e)
                    if e.len() > 4 * crate::analysis::run::MAX_ERROR =>
                {
                    Err(DomainError::invalid(
                        "measured.error",
                        format!("{} bytes", e.len()),
                        "an error text is at most 800 bytes",
                    ))
                }
                _ => Ok(()),
            }
        }
        Command::ForgetNodes { nodes } => check_nodes(nodes),
        Command::CreateGroup { name, members } => {
            check_name("group", name)?;
            check_count("members", members.len(), MAX_LINKS)?;
            members.iter().try_for_each(|m| {
                check_name("consumer", &m.consumer)?;
                check_name("resource", &m.resource)
            })
        }
        Command::CreateToken { name, nodes, .. } => {
            check_name("token", name)?;
            nodes
                .as_deref()
                .map_or(Ok(()), |glob| check_field("nodes", glob))
        }
        Command::CreateTokenWithTtl {
            name,
            nodes,
            ttl_ms,
            ..
        } => {
            check_name("token", name)?;
            crate::entities::tokens::check_token_ttl(*ttl_ms)?;
            nodes
                .as_deref()
                .map_or(Ok(()), |glob| check_field("nodes", glob))
        }
        Command::CreateBoundToken {
            name,
            nodes,
            consumers,
            ttl_ms,
            ..
        } => {
            check_name("token", name)?;
            check_token_consumers(Role::Agent, consumers)?;
            if let Some(ttl_ms) = ttl_ms {
                crate::entities::tokens::check_token_ttl(*ttl_ms)?;
            }
            check_field("nodes", nodes)
        }
        Command::RevokeToken { name, .. } => check_name("token", name),
        Command::BootstrapToken { .. } => Ok(()),
        Command::StartGroupDeployment {
            group,
            versions,
            overrides,
        } => {
            check_name("group", group)?;
            let versions = versions.as_ref().map_or(0, |v| v.len());
            check_count("versions", versions, MAX_LINKS)?;
            check_count("overrides", overrides.len(), MAX_LINKS)?;
            overrides
                .values()
                .try_for_each(|p| check_analysis(p.analysis.as_ref()))?;
            overrides
                .keys()
                .try_for_each(|resource| check_name("resource", resource))
        }
        Command::SetBudget { consumer, budget } => {
            check_name("consumer", consumer)?;
            budget.validate()
        }
        Command::DeleteBudget { consumer } => check_name("consumer", consumer),
        Command::CreateWindow(window) => window.validate().map(|_| ()),
        Command::DeleteWindow { name } => check_name("window", name),
        Command::SetFleetLimits { limits, .. } => limits.validate(),
    }
}

/// A deployment's names and message, and its node ranges against the consumer's size (the ranges'
/// cost is bounded by the consumer's node count, whatever their text says).
fn check_spec(state: &ClusterState, spec: &DeploymentSpec) -> Result<(), DomainError> {
    check_name("consumer", &spec.consumer)?;
    check_name("resource", &spec.resource)?;
    check_message(spec.message.as_deref())?;
    check_analysis(spec.analysis.as_ref())?;
    if let (Some(ranges), Some(consumer)) = (&spec.nodes, state.consumer_map().get(&spec.consumer))
    {
        parse_ranges(ranges, &spec.consumer, consumer.nodes.len())?;
    }
    Ok(())
}

/// An analysis' bounds (metrics, names, query and condition lengths, intervals, limits), before the log.
fn check_analysis(analysis: Option<&crate::analysis::spec::Analysis>) -> Result<(), DomainError> {
    match analysis {
        Some(a) => Ok(a
            .validate()
            .map_err(crate::values::invalid::Invalid::from)?),
        None => Ok(()),
    }
}

fn check_nodes(nodes: &[String]) -> Result<(), DomainError> {
    check_count("nodes", nodes.len(), MAX_NODES_PER_COMMAND)?;
    nodes.iter().try_for_each(|n| check_name("node", n))
}

fn check_count(field: &str, count: usize, max: usize) -> Result<(), DomainError> {
    if count > max {
        return Err(DomainError::invalid(
            field,
            format!("{count} entries"),
            &format!("at most {max} are allowed in one request"),
        ));
    }
    Ok(())
}

/// A sha256 is 64 hex digits (either case).
pub fn check_sha256(sha: &str) -> Result<(), DomainError> {
    if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(DomainError::invalid(
            "artifact.sha256",
            quote(sha),
            "expected 64 hex digits",
        ));
    }
    Ok(())
}

fn check_field(field: &str, value: &str) -> Result<(), DomainError> {
    if value.len() > MAX_FIELD_BYTES || value.chars().any(char::is_control) {
        return Err(DomainError::invalid(
            field,
            quote(value),
            &format!("at most {MAX_FIELD_BYTES} bytes, no control characters"),
        ));
    }
    Ok(())
}

#[cfg(test)]
#[path = "precheck_test.rs"]
mod tests;
