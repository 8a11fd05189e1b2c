//! What the fleet-wide limits and a deployment's start jitter say, read-only: the limits in force and what
//! is in flight (`GET /v1/cluster/limits`), whether a deployment waits for them (`waiting_for:
//! "fleet_limit"` or `"start_jitter"` in its summary) and why a node waits (`deploy why`).

use crate::deployment::{Deployment, NodePhase};
use crate::policy::admission::{may_admit, next_waiting};
use crate::policy::limits::{in_flight, Fleet, FleetLimits, LimitSource};
use crate::state::ClusterState;
use crate::values::ids::Timestamp;
use crate::values::status::Status;
use serde::{Deserialize, Serialize};

/// The fleet-wide limits in force and what counts against them now.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FleetLimitsView {
    /// At most this many nodes downloading at once (absent: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent_downloads: Option<u32>,
    /// At most this many nodes installing at once (absent: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent_installs: Option<u32>,
    /// Who set them: `config` (a leader's server config) or `api` (`PUT /v1/cluster/limits`); absent: never
    /// set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<LimitSource>,
    /// Nodes installing now, over every active deployment (watching and rolling back included).
    pub installing: u32,
    /// Nodes downloading now (told to prefetch, or installing without the version).
    pub downloading: u32,
}

/// `GET /v1/cluster/limits`: the limits in force, their use, and the answering server's config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LimitsAnswer {
    /// The replicated limits and what counts against them now.
    pub in_force: FleetLimitsView,
    /// The answering server's `max_concurrent_*` config (the startup value it proposes when it leads).
    pub this_server_config: FleetLimits,
    /// The limits in force are not this server's config (set by the API, or by a leader configured
    /// otherwise).
    pub config_differs: bool,
}

impl LimitsAnswer {
    /// The answer of a server configured with `config`.
    pub fn new(in_force: FleetLimitsView, config: FleetLimits) -> LimitsAnswer {
        let replicated = FleetLimits {
            max_concurrent_downloads: in_force.max_concurrent_downloads,
            max_concurrent_installs: in_force.max_concurrent_installs,
        };
        LimitsAnswer {
            in_force,
            this_server_config: config,
            config_differs: replicated != config,
        }
    }
}

impl ClusterState {
    /// The fleet-wide limits and their use now.
    pub fn fleet_limits_view(&self) -> FleetLimitsView {
        let (installing, downloading) = in_flight(self.deployment_map(), self.active_set());
        let weak = self.weak_slots().in_flight(self.node_table());
        let (installing, downloading) = (installing + weak.0, downloading + weak.1);
        let setting = self.fleet_setting();
        let limits = self.fleet_limits();
        FleetLimitsView {
            max_concurrent_downloads: limits.max_concurrent_downloads,
            max_concurrent_installs: limits.max_concurrent_installs,
            source: setting.map(|s| s.source),
            installing,
            downloading,
        }
    }

    fn fleet_now(&self) -> Fleet {
        Fleet::build(
            self.fleet_limits(),
            self.deployment_map(),
            self.active_set(),
            self.weak_slots().in_flight(self.node_table()),
        )
    }

    /// Whether deployment `d` waits for a fleet-wide limit: its own windows would admit its next node, the
    /// fleet's limits would not.
    pub(crate) fn fleet_wait(&self, d: &Deployment) -> bool {
        if self.fleet_limits() == FleetLimits::default() || !may_admit(d, |_, _| true) {
            return false;
        }
        let fleet = self.fleet_now();
        !may_admit(d, |_, fetch| fleet.would_install(fetch))
    }

    /// Whether `d` waits for its start jitter: rolling forward, its next node not due yet.
    pub(crate) fn jitter_wait(&self, d: &Deployment, now: Timestamp) -> bool {
        d.status == Status::RollingForward
            && next_waiting(d).is_some_and(|n| {
                n.phase == NodePhase::Pending && d.jitter_wait(&n.id, now).is_some()
            })
    }

    /// Why `node`, the next node `d` would admit, waits for a fleet-wide limit or the start jitter, in words
    /// (`deploy why`).
    pub(crate) fn limit_hold(&self, d: &Deployment, node: &str) -> Option<String> {
        let next = next_waiting(d)?;
        if next.id != node {
            return None;
        }
        if self.fleet_wait(d) {
            let v = self.fleet_limits_view();
            let shown = |m: Option<u32>| m.map_or("no limit".to_string(), |m| m.to_string());
            return Some(format!(
                "held: the fleet-wide limit is reached: {} installing (max_concurrent_installs {}), {} \
                 downloading (max_concurrent_downloads {})",
                v.installing,
                shown(v.max_concurrent_installs),
                v.downloading,
                shown(v.max_concurrent_downloads)
            ));
        }
        let due = d
            .jitter_at
            .filter(|t| d.status == Status::RollingForward && d.jitter_start(node) == *t)?;
        Some(format!(
            "held: its start jitter lets it in at {due} (ms since the epoch; start_jitter_ms {})",
            d.settings.start_jitter_ms
        ))
    }
}
