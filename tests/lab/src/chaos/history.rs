//! What a chaos run records: acknowledged writes, pulses, deployment observations (with the wall-clock
//! window of each read), injected faults, and the final state of every server.

use std::sync::Mutex;

use convoy_actors::domain::DeploymentView;

/// Wall-clock milliseconds since the Unix epoch (the unit of leader-stamped event times).
pub fn now_ms() -> u64 {
    convoy_time::Clock::wall_ms(&convoy_time::SystemClock)
}

/// A write the cluster acknowledged: its effect must be in the final state of every server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Acked {
    /// `POST /v1/resources` answered 201 (or 409: it exists).
    Resource {
        name: String,
        sent_ms: u64,
        acked_ms: u64,
    },
    /// `POST /v1/resources/{name}/versions` answered 201 with `version`.
    Version {
        resource: String,
        version: u64,
        sent_ms: u64,
        acked_ms: u64,
    },
}

impl Acked {
    /// When the request was sent.
    pub fn sent_ms(&self) -> u64 {
        match self {
            Acked::Resource { sent_ms, .. } | Acked::Version { sent_ms, .. } => *sent_ms,
        }
    }

    /// When the answer arrived.
    pub fn acked_ms(&self) -> u64 {
        match self {
            Acked::Resource { acked_ms, .. } | Acked::Version { acked_ms, .. } => *acked_ms,
        }
    }
}

/// One pulse sent to a coordinated deployment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pulse {
    /// Id of the coordinated deployment pulsed (`d-N`).
    pub deployment: String,
    /// When it was sent.
    pub sent_ms: u64,
    /// The latest time its leader stamp can carry: the answer's arrival, or for a request that
    /// failed, the failure plus the servers' request timeout (it may still have been applied).
    pub latest_ms: u64,
}

/// One read of a deployment and the wall-clock window it happened in.
#[derive(Clone, Debug)]
pub struct Observation {
    /// When the read was sent: wall-clock ms since the Unix epoch ([`now_ms`]).
    pub start_ms: u64,
    /// When the answer arrived (wall-clock ms); the state read is from somewhere in between.
    pub end_ms: u64,
    /// Read with `?consistent=true` (linearizable).
    pub consistent: bool,
    /// The server that answered.
    pub server: String,
    /// What it said.
    pub view: DeploymentView,
}

/// A node's targets read while a deployment containing it was active (in that same read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetSample {
    /// Id of the node whose targets were read.
    pub node: String,
    /// The active deployment.
    pub deployment: String,
    /// The version the active deployment rolls out.
    pub version: u64,
    /// The node's version before it.
    pub from_version: Option<u64>,
    /// The version the node was targeted at.
    pub target: u64,
}

/// A version no node may be sent after `from_ms` (until `until_ms`, if it was lifted): retracted
/// everywhere, or held back on one consumer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ban {
    /// The resource the banned version belongs to.
    pub resource: String,
    /// The banned version's number.
    pub version: u64,
    /// The consumer it is held back on; `None`: retracted, on every consumer.
    pub consumer: Option<String>,
    /// When it took effect: the retraction acknowledged, or the hold's leader-stamped time.
    pub from_ms: u64,
    /// When a request lifting it (unretract) was sent, if one was.
    pub until_ms: Option<u64>,
}

/// A node's target for one resource, read (linearizably) outside any deployment of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeTarget {
    /// Id of the node whose target was read.
    pub node: String,
    /// Its consumers in that read.
    pub consumers: Vec<String>,
    /// The resource the target is for.
    pub resource: String,
    /// The version it is targeted at.
    pub version: u64,
    /// The target moves it (download or install of a version it does not run).
    pub moving: bool,
    /// When the read was sent.
    pub start_ms: u64,
}

/// A node report the cluster answered 200 to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportAck {
    /// Id of the node the report was for.
    pub node: String,
    /// When it was sent.
    pub sent_ms: u64,
    /// When the answer arrived.
    pub acked_ms: u64,
}

/// A linearizable read of a node's `active` flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LivenessRead {
    /// Id of the node whose flag was read.
    pub node: String,
    /// When the read was sent.
    pub start_ms: u64,
    /// What it said.
    pub active: bool,
}

/// One injected fault.
#[derive(Clone, Debug)]
pub struct FaultRecord {
    /// When it began.
    pub at_ms: u64,
    /// When it was healed.
    pub healed_ms: u64,
    /// What it was.
    pub what: String,
    /// It was a SIGKILL of the leader.
    pub leader_kill: bool,
}

/// Everything recorded during one run; shared by the workload tasks.
#[derive(Debug, Default)]
pub struct History {
    /// Writes the cluster acknowledged, in the order recorded; each must be in every server's
    /// final state.
    pub acked: Mutex<Vec<Acked>>,
    /// Every pulse sent to a coordinated deployment, answered or not.
    pub pulses: Mutex<Vec<Pulse>>,
    /// Deployment reads that got an answer, with their wall-clock windows.
    pub observations: Mutex<Vec<Observation>>,
    /// Every fault injected, recorded once it is healed.
    pub faults: Mutex<Vec<FaultRecord>>,
    /// Node targets sampled during deployments.
    pub targets: Mutex<Vec<TargetSample>>,
    /// Operations attempted (writes, pulses, steering), for the summary.
    pub operations: Mutex<u64>,
    /// Retracted and held-back versions.
    pub bans: Mutex<Vec<Ban>>,
    /// Node targets read outside deployments.
    pub node_targets: Mutex<Vec<NodeTarget>>,
    /// Acknowledged node reports.
    pub reports: Mutex<Vec<ReportAck>>,
    /// Reads of nodes' `active` flag.
    pub liveness: Mutex<Vec<LivenessRead>>,
}

impl History {
    /// Records an acknowledged write.
    pub fn ack(&self, acked: Acked) {
        self.acked.lock().unwrap().push(acked);
    }

    /// Records a pulse.
    pub fn pulse(&self, pulse: Pulse) {
        self.pulses.lock().unwrap().push(pulse);
    }

    /// Records a read.
    pub fn observe(&self, observation: Observation) {
        self.observations.lock().unwrap().push(observation);
    }

    /// Records a fault.
    pub fn fault(&self, fault: FaultRecord) {
        self.faults.lock().unwrap().push(fault);
    }

    /// Counts an attempted operation.
    pub fn operation(&self) {
        *self.operations.lock().unwrap() += 1;
    }
}
