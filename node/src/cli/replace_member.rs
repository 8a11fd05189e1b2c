//! `convoy cluster replace-member ID`: a server whose data dir was lost rejoins as itself.

use serde_json::{json, Value};

use super::error::CliError;
use crate::client::ApiClient;

/// Asks the cluster to replace member `id` (`POST /v1/cluster/members/{id}/replace`); the cluster
/// after the change.
pub(super) async fn run(client: &ApiClient, id: u64) -> Result<Value, CliError> {
    Ok(client
        .post(&format!("/v1/cluster/members/{id}/replace"), &json!({}))
        .await?)
}
