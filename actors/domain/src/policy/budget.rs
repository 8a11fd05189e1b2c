//! A consumer's disruption budget: how many of its nodes may be unavailable at once (`max_unavailable`) or
//! must stay available (`min_available`), a count or a percentage of its active nodes.

use crate::errors::DomainError;
use crate::values::threshold::FailedNodes;
use serde::{Deserialize, Serialize};

/// A disruption budget: exactly one of its two limits is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// At most this many of the consumer's nodes unavailable at once; a percentage of its active nodes is
    /// rounded down, to at least 1 (but `0%` is none, as `0` is).
    #[serde(default)]
    pub max_unavailable: Option<FailedNodes>,
    /// At least this many of the consumer's active nodes available at once; a percentage is rounded up.
    #[serde(default)]
    pub min_available: Option<FailedNodes>,
}

impl Budget {
    /// Refuses both limits or neither, and a percentage over 100.
    pub fn validate(&self) -> Result<(), DomainError> {
        let shown = |t: Option<FailedNodes>| t.map_or("none".to_string(), |t| t.to_string());
        match (self.max_unavailable, self.min_available) {
            (Some(_), Some(_)) | (None, None) => Err(DomainError::invalid(
                "budget",
                format!(
                    "max_unavailable {}, min_available {}",
                    shown(self.max_unavailable),
                    shown(self.min_available)
                ),
                "a budget sets exactly one of max_unavailable and min_available",
            )),
            (Some(t), None) | (None, Some(t)) => match t {
                FailedNodes::Percent(p) if p > 100 => Err(DomainError::invalid(
                    "budget",
                    format!("{p}%"),
                    "a percentage is at most 100%",
                )),
                _ => Ok(()),
            },
        }
    }

    /// How many nodes may be unavailable at once on a consumer with `active` active nodes (Kubernetes'
    /// rounding: `max_unavailable` as a percentage down, to at least 1, but `0%` admits none as `0` does;
    /// `min_available` up).
    pub fn disruptions(&self, active: u32) -> u32 {
        let of = |p: u32, up: bool| {
            let x = u64::from(active) * u64::from(p);
            (if up { x.div_ceil(100) } else { x / 100 }) as u32
        };
        match (self.max_unavailable, self.min_available) {
            (Some(FailedNodes::Count(n)), _) => n,
            (Some(FailedNodes::Percent(0)), _) => 0,
            (Some(FailedNodes::Percent(p)), _) => of(p, false).max(1),
            (None, Some(FailedNodes::Count(n))) => active.saturating_sub(n),
            (None, Some(FailedNodes::Percent(p))) => active.saturating_sub(of(p, true)),
            (None, None) => u32::MAX,
        }
    }
}

#[cfg(test)]
#[path = "budget_test.rs"]
mod tests;
