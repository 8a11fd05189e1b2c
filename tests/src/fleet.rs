//! The end-to-end tests' fleet: `convoy sim`'s simulated nodes (`convoy_node::sim`) with quick work,
//! chosen failures, installs that take time even when switching back, and every span recorded, so a
//! test can check the windows and the rollback order from the nodes' side.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use convoy_node::client::ApiClient;
use convoy_node::sim::{Behaviour, FleetPlan};

pub use convoy_node::sim::{max_overlap, Fleet, Phase, Span};

/// Wall-clock milliseconds, the unit of the servers' event times and of [`Span`]s.
pub fn now_ms() -> u64 {
    convoy_time::Clock::wall_ms(&convoy_time::SystemClock)
}

/// How the fleet behaves.
#[derive(Clone, Debug)]
pub struct FleetConfig {
    /// The resource the nodes run.
    pub resource: String,
    /// Time to download a version.
    pub download: Duration,
    /// Time to install a version (and to switch back to one installed before).
    pub install: Duration,
    /// Report period while idle.
    pub interval: Duration,
    /// Installs that fail: (node id, version).
    pub fail: BTreeSet<(String, u64)>,
}

impl FleetConfig {
    /// A fleet running `resource` with quick work and no failures.
    pub fn new(resource: &str) -> Self {
        Self {
            resource: resource.to_string(),
            download: Duration::from_millis(50),
            install: Duration::from_millis(150),
            interval: Duration::from_millis(50),
            fail: BTreeSet::new(),
        }
    }

    /// Makes `node`'s install of `version` fail.
    pub fn failing(mut self, node: &str, version: u64) -> Self {
        self.fail.insert((node.to_string(), version));
        self
    }

    /// Starts one simulated node per id, each already running `running` (if any), reporting to
    /// `servers` (`host:port`; each report tries every server once before the node waits an interval).
    pub fn start(self, servers: &[String], nodes: &[String], running: Option<u64>) -> Fleet {
        let client = ApiClient::new(&servers.join(","))
            .expect("server addresses")
            .with_patience(Duration::ZERO);
        let behaviour = Behaviour {
            download: self.download,
            install: self.install,
            fail_rate: 0.0,
        };
        let plan = FleetPlan {
            failing: self.fail,
            switch_back: self.install,
            record_spans: true,
            ..FleetPlan::default()
        };
        Fleet::spawn_with(
            Arc::new(client),
            nodes.to_vec(),
            behaviour,
            self.interval,
            running.map(|v| (self.resource, v)),
            plan,
        )
    }
}
