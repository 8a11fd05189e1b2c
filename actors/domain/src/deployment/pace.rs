//! A deployment's pacing state (DEPLOYMENTS.md §14), as data: the end of the bake and of the progress
//! deadline and each node's deadline, all in active time (`active.rs`: they stand still while it waits); the
//! confirmation gates passed; and the summary's view of them. The rules that use them are in `pacing.rs`, `bake.rs`, `deadlines.rs` and `gates.rs`.

use crate::values::ids::Timestamp;
use convoy_collections::CowMap;
use serde::{Deserialize, Serialize};

/// Which deadline a node is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeClock {
    /// Admitted to install without the version: it must hold it by `download_deadline_ms`.
    Download,
    /// Installing (it holds the version) or watching: it must succeed by `healthy_deadline_ms`.
    Healthy,
}

/// The pacing state of one deployment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pace {
    /// Rolling waves formed so far (rolling with a bake or gates between waves).
    pub waves: u32,
    /// When (active ms) the bake before the next batch or wave ends, once the previous one finished.
    pub bake: Option<u64>,
    /// Batches or waves whose bake is over: the group of this index may form.
    pub baked: u32,
    /// When (active ms) the progress deadline (`progress_deadline_ms`) runs out, when set.
    pub progress: Option<u64>,
    /// The group (0: the first batch or wave) a confirmation gate holds back now.
    pub waiting: Option<u32>,
    /// The last group a confirmation let go: gates before it and before every earlier group are passed.
    pub confirmed: Option<u32>,
    /// Node deadlines by active ms, then position.
    pub due: CowMap<(u64, u32), NodeClock>,
    /// Each node's deadline (active ms), by position (the other side of `due`).
    pub nodes: CowMap<u32, (u64, NodeClock)>,
}

/// What a summary shows of a deployment's pace: the bake under way, the gate it waits at, its progress
/// deadline. Absent from the summary when there is none of these.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PaceView {
    /// A bake runs until then (leader-stamped ms): the next batch or wave waits for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baking_until: Option<Timestamp>,
    /// A bake is frozen (the deployment is held) with this many ms left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bake_left_ms: Option<u64>,
    /// It waits at a confirmation gate before this batch or wave (1: before the start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaiting_confirm_before: Option<u32>,
    /// Past this time without a node succeeding, it takes the failure path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_deadline: Option<Timestamp>,
}
