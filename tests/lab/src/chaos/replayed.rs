//! The state checkers over every state a chaos run's servers went through: after the run each stopped
//! server's data dir is replayed offline (`convoy replay`'s code: its snapshot, then every committed entry of
//! its log through the pure domain), and `check_state` judges the state after each entry. The servers run
//! real processes the harness cannot look inside while they run; their logs are the record of every state.

use std::collections::BTreeMap;
use std::path::Path;

use convoy_actors::domain::ClusterState;
use convoy_node::machine::Machine;
use convoy_raft::replay::replay;

use super::check::Violation;
use super::check_state;

/// What the replays checked and found.
#[derive(Debug, Default)]
pub struct Replayed {
    /// States judged, over every server replayed (the snapshot's own and one per committed entry after it).
    pub states: usize,
    /// Each distinct violation once, with the first server and log index that showed it.
    pub violations: Vec<Violation>,
}

/// Replays the data dir of each server in `ids` (under `dir/data/<id>`, as `convoy_node::local` lays
/// them out) and checks every state. A data dir that does not replay is a violation too: `convoy replay`
/// must read every stopped server's dir.
pub async fn check(dir: &Path, ids: &[u64]) -> Replayed {
    let mut states = 0;
    // (rule, detail) -> where it was first seen; one violation that lasts many entries is reported once.
    let mut seen: BTreeMap<(&'static str, String), (u64, u64)> = BTreeMap::new();
    let mut failed = Vec::new();
    for &id in ids {
        let data_dir = dir.join("data").join(id.to_string());
        if !data_dir.is_dir() {
            failed.push(Violation {
                rule: "replay-failed",
                detail: format!(
                    "server {id} ran but has no data dir at {}",
                    data_dir.display()
                ),
            });
            continue;
        }
        let mut judge = |index: u64, state: &ClusterState, all: bool| {
            states += 1;
            for (deployment, v) in check_state::violations(state, all) {
                let detail = match deployment {
                    Some(d) => format!("{d}: {}", v.detail),
                    None => v.detail,
                };
                seen.entry((v.rule, detail)).or_insert((id, index));
            }
        };
        // The last state (a cheap copy: the state's maps are copy-on-write) is judged again with every
        // deployment it keeps, terminal ones too, as the simulator judges its final states.
        let mut last: Option<(u64, ClusterState)> = None;
        let replayed = replay::<Machine>(&data_dir, |step| {
            judge(step.index, step.state.state(), false);
            last = Some((step.index, step.state.state().clone()));
        })
        .await;
        if let Some((index, state)) = &last {
            judge(*index, state, true);
        }
        match replayed {
            Ok(r) => tracing::debug!(server = id, commands = r.commands, "replayed"),
            Err(e) => failed.push(Violation {
                rule: "replay-failed",
                detail: format!("server {id}'s data dir does not replay: {e}"),
            }),
        }
    }
    let mut violations: Vec<Violation> = seen
        .into_iter()
        .map(|((rule, detail), (server, index))| Violation {
            rule,
            detail: format!("s{server} at index {index}: {detail}"),
        })
        .collect();
    violations.extend(failed);
    Replayed { states, violations }
}
