//! Fleet-wide rate limits (DEPLOYMENTS.md §16): at most `max_concurrent_installs` nodes installing and
//! `max_concurrent_downloads` downloading at once across every deployment of the cluster. The limits are
//! replicated (`Command::SetFleetLimits`); [`Fleet`] counts what is in flight from the replicated state at the
//! start of the policies' pass and takes a slot for each admission, so every server decides alike and a new
//! leader goes on from the same counts.

use crate::deployment::seen::Fact;
use crate::deployment::{Deployment, NodePhase};
use crate::errors::DomainError;
use crate::values::ids::DeploymentId;
use convoy_collections::CowMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The largest limit accepted (a million nodes in flight is no limit at all).
pub const MAX_FLEET_LIMIT: u32 = 1_000_000;

/// The fleet-wide limits; `None`: no limit of that kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FleetLimits {
    /// At most this many nodes downloading at once, over every deployment (told to download, or admitted to
    /// install without the version yet).
    #[serde(default)]
    pub max_concurrent_downloads: Option<u32>,
    /// At most this many nodes installing at once, over every deployment: from their admission until they
    /// succeed or fail (their `min_healthy` watch included, as a deployment's own install window counts
    /// them), and while they roll back.
    #[serde(default)]
    pub max_concurrent_installs: Option<u32>,
}

impl FleetLimits {
    /// Refuses a limit over [`MAX_FLEET_LIMIT`].
    pub fn validate(&self) -> Result<(), DomainError> {
        for (key, v) in [
            ("max_concurrent_downloads", self.max_concurrent_downloads),
            ("max_concurrent_installs", self.max_concurrent_installs),
        ] {
            if let Some(v) = v.filter(|v| *v > MAX_FLEET_LIMIT) {
                return Err(DomainError::invalid(
                    key,
                    v,
                    "a fleet limit is at most 1000000",
                ));
            }
        }
        Ok(())
    }

    /// Neither limit set.
    pub fn is_off(&self) -> bool {
        self.max_concurrent_downloads.is_none() && self.max_concurrent_installs.is_none()
    }
}

/// Where the limits in force came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LimitSource {
    /// Proposed by a leader from its server config (`max_concurrent_*`), while no one set them by the API.
    #[default]
    Config,
    /// Set by `PUT /v1/cluster/limits`: a server's config no longer changes them.
    Api,
}

/// The limits in force and where they came from (replicated).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FleetSetting {
    /// The limits.
    pub limits: FleetLimits,
    /// Who set them.
    pub source: LimitSource,
}

/// The phases of a node installing, for the fleet's count (a watching node may retry its install).
pub fn installing(phase: NodePhase) -> bool {
    matches!(
        phase,
        NodePhase::Installing | NodePhase::Watching | NodePhase::RollingBack
    )
}

/// What is in flight over the active deployments: nodes installing, nodes downloading.
pub fn in_flight(
    deployments: &CowMap<DeploymentId, Deployment>,
    active: &BTreeSet<DeploymentId>,
) -> (u32, u32) {
    let (mut installs, mut downloads) = (0u32, 0u32);
    for d in active.iter().filter_map(|id| deployments.get(id)) {
        for p in d.touched.iter() {
            let Some(n) = d.nodes.get(*p as usize) else {
                continue;
            };
            if installing(n.phase) {
                installs += 1;
                if n.phase == NodePhase::Installing
                    && d.status.is_forward()
                    && !n.seen.has(Fact::Have)
                {
                    downloads += 1;
                }
            }
        }
        let (from, to) = (d.forward.install_cursor, d.forward.download_cursor);
        for p in from..to.max(from) {
            if d.nodes
                .get(p as usize)
                .is_some_and(|n| n.phase == NodePhase::Downloading)
            {
                downloads += 1;
            }
        }
    }
    (installs, downloads)
}

/// The fleet's slots during one policies' pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fleet {
    /// The limits.
    pub limits: FleetLimits,
    /// Nodes installing now (admissions of this pass included).
    pub installs: u32,
    /// Nodes downloading now (admissions of this pass included).
    pub downloads: u32,
}

impl Fleet {
    /// The fleet now, under `limits`: O(nodes admitted by the active deployments) when a limit is set;
    /// `weak` is what the weak subscriptions' slots have in flight (`WeakSlots::in_flight`).
    pub(crate) fn build(
        limits: FleetLimits,
        deployments: &CowMap<DeploymentId, Deployment>,
        active: &BTreeSet<DeploymentId>,
        weak: (u32, u32),
    ) -> Fleet {
        if limits.is_off() {
            return Fleet::default();
        }
        let (installs, downloads) = in_flight(deployments, active);
        let (installs, downloads) = (installs + weak.0, downloads + weak.1);
        Fleet {
            limits,
            installs,
            downloads,
        }
    }

    /// Whether one more install may start (`fetch`: the node does not hold the version yet, so it downloads
    /// too).
    pub fn would_install(&self, fetch: bool) -> bool {
        self.limits
            .max_concurrent_installs
            .is_none_or(|m| self.installs < m)
            && (!fetch || self.would_download())
    }

    /// Whether one more download may start.
    pub fn would_download(&self) -> bool {
        self.limits
            .max_concurrent_downloads
            .is_none_or(|m| self.downloads < m)
    }

    /// Takes an install slot (and a download slot with `fetch`), or refuses.
    pub(crate) fn take_install(&mut self, fetch: bool) -> bool {
        if !self.would_install(fetch) {
            return false;
        }
        self.installs += 1;
        self.downloads += u32::from(fetch);
        true
    }

    /// Takes a download slot, or refuses.
    pub(crate) fn take_download(&mut self) -> bool {
        if !self.would_download() {
            return false;
        }
        self.downloads += 1;
        true
    }
}

#[cfg(test)]
#[path = "limits_test.rs"]
mod tests;
