//! Shared pieces of read handlers: the `?consistent=true` flag and 404s that name the id.

use serde::Deserialize;

use super::error::ApiError;

/// `?consistent=true` asks for a linearizable read.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Consistency {
    /// Wait for a read barrier through the leader before reading.
    #[serde(default)]
    pub consistent: bool,
}

/// `Some(v)` → v; `None` → 404 naming the kind and the id.
pub fn found<T>(value: Option<T>, kind: &str, id: &str) -> Result<T, ApiError> {
    value.ok_or_else(|| ApiError::NotFound(format!("{kind} {id:?} does not exist")))
}
