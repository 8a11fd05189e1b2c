//! The deployment `deploy info`, `watch` and `why` show when given `CONSUMER/RESOURCE`: the pair's latest
//! deployment, active or ended (the acting verbs take the pair's active one, through the server's by-pair
//! routes).

use convoy_actors::domain::{DeploymentId, DeploymentSummary};

use super::body::query;
use super::deploy_args::DeploymentRef;
use super::error::CliError;
use crate::client::ApiClient;

/// The newest (highest id) of `list`.
pub fn latest(list: &[DeploymentSummary]) -> Option<DeploymentId> {
    list.iter().map(|d| d.id).max()
}

/// The id `target` names: an id as given, a pair's latest deployment asked of the cluster (after a read
/// barrier, so one just started through another server is seen).
pub async fn resolve(client: &ApiClient, target: &DeploymentRef) -> Result<String, CliError> {
    let (consumer, resource) = match target {
        DeploymentRef::Id(id) => return Ok(id.clone()),
        DeploymentRef::Pair { consumer, resource } => (consumer, resource),
    };
    let q = query(&[
        ("consumer", Some(consumer.as_str())),
        ("resource", Some(resource.as_str())),
        ("consistent", Some("true")),
    ]);
    let list: Vec<DeploymentSummary> = client.get(&format!("/v1/deployments{q}")).await?;
    latest(&list)
        .map(|id| id.to_string())
        .ok_or_else(|| CliError::NoDeployment {
            consumer: consumer.clone(),
            resource: resource.clone(),
        })
}

#[cfg(test)]
#[path = "latest_test.rs"]
mod tests;
