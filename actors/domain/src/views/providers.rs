//! Whether the analyses a request carries name providers the receiving server knows (DEPLOYMENTS.md §15):
//! an unknown provider is refused at creation, naming it, instead of failing its measurements later.

use crate::analysis::spec::{Analysis, AnalysisInvalid};
use crate::command::Command;
use crate::entities::policy::Change;
use crate::errors::DomainError;

/// The analyses `command` sets: a deployment's, a subscription's (put or patched) and a group start's
/// overrides.
fn analyses(command: &Command) -> Vec<&Analysis> {
    match command {
        Command::StartDeployment(spec) => spec.analysis.iter().collect(),
        Command::Subscribe { policy, .. } => policy.analysis.iter().collect(),
        Command::PatchSubscription { policy, .. } => match &policy.analysis {
            Change::Set(a) => vec![a],
            _ => Vec::new(),
        },
        Command::StartGroupDeployment { overrides, .. } => overrides
            .values()
            .filter_map(|p| p.analysis.as_ref())
            .collect(),
        _ => Vec::new(),
    }
}

/// Refuses `command` when an analysis it sets names a provider not in `known` (the receiving server's
/// `[[analysis_provider]]` names): `analysis.provider = "promm" is invalid: no [[analysis_provider]] of
/// that name in this server's config (it has: prom)`.
pub fn check_providers(command: &Command, known: &[String]) -> Result<(), DomainError> {
    for a in analyses(command) {
        if !known.contains(&a.provider) {
            let has = if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            };
            let why = format!(
                "no [[analysis_provider]] of that name in this server's config (it has: {has})"
            );
            let e = AnalysisInvalid::unknown_provider(&a.provider, &why);
            return Err(crate::values::invalid::Invalid::from(e).into());
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "providers_test.rs"]
mod tests;
