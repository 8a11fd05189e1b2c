//! The seeded fault schedule of a chaos run and its injection into a local cluster: SIGKILL of the
//! leader or a follower, SIGSTOP pauses longer than an election timeout, minority, majority and
//! one-way partitions (in the transport, or with nftables between network namespaces), lossy, slow
//! and duplicating links, and a membership change under load.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use super::history::{now_ms, FaultRecord, History};
use crate::netns::NetLab;
use crate::pause::Pause;
use convoy_node::client::ApiClient;
use convoy_node::local::Cluster;

/// A kind of fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum FaultKind {
    /// SIGKILL the leader; restart it after the hold.
    KillLeader,
    /// SIGKILL a follower; restart it after the hold.
    KillFollower,
    /// SIGSTOP the leader for the hold (longer than an election timeout), then SIGCONT.
    PauseLeader,
    /// SIGSTOP a follower for the hold, then SIGCONT.
    PauseFollower,
    /// Cut one server off from the others, both ways.
    PartitionMinority,
    /// Cut the leader off from the others (the majority side elects a new one).
    PartitionLeader,
    /// One server cannot send to another (one-way).
    PartitionOneWay,
    /// Every link drops, delays and duplicates messages.
    LossyLinks,
    /// Add a fourth server, then remove it.
    Membership,
    /// Operator mistake: wipe a follower's data dir and restart it as it was; then bring it back
    /// through `replace-member` (module `mistakes`).
    WipeAndRestart,
    /// Operator mistake: restart a follower with another cluster's secret.
    OtherSecret,
    /// Operator mistake: restart a follower with a wrong id.
    WrongId,
    /// Operator mistake: restart a follower on another member's data dir.
    OtherDataDir,
}

impl FaultKind {
    /// Every kind, in schedule order.
    pub const ALL: [FaultKind; 9] = [
        FaultKind::KillLeader,
        FaultKind::KillFollower,
        FaultKind::PauseLeader,
        FaultKind::PauseFollower,
        FaultKind::PartitionMinority,
        FaultKind::PartitionLeader,
        FaultKind::PartitionOneWay,
        FaultKind::LossyLinks,
        FaultKind::Membership,
    ];

    /// The operator mistakes, chosen by name (`--faults wipe-and-restart,...`): not in [`Self::ALL`],
    /// so that the default schedules of a seed stay what they were.
    pub const MISTAKES: [FaultKind; 4] = [
        FaultKind::WipeAndRestart,
        FaultKind::OtherSecret,
        FaultKind::WrongId,
        FaultKind::OtherDataDir,
    ];
}

/// One planned fault.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    /// Offset from the start of the run.
    pub at: Duration,
    /// How long it lasts before it is healed.
    pub hold: Duration,
    /// Which fault to inject: a kill, a pause, a partition, lossy links or a membership change.
    pub kind: FaultKind,
    /// A random number choosing targets (which follower, which link).
    pub pick: u32,
}

/// The faults of one run: one after another, each held 1–2.5 s with 0.3–1.5 s of calm between,
/// drawn from `kinds` by `seed`. The same seed always gives the same plan.
pub fn schedule(seed: u64, duration: Duration, kinds: &[FaultKind]) -> Vec<Planned> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut at = Duration::from_millis(rng.gen_range(500..1_500));
    let mut plan = Vec::new();
    while !kinds.is_empty() {
        let hold = Duration::from_millis(rng.gen_range(1_000..2_500));
        if at + hold > duration {
            break;
        }
        let kind = kinds[rng.gen_range(0..kinds.len())];
        plan.push(Planned {
            at,
            hold,
            kind,
            pick: rng.gen(),
        });
        at += hold + Duration::from_millis(rng.gen_range(300..1_500));
    }
    plan
}

/// Injects and heals faults on a shared local cluster.
pub struct Injector {
    /// The local servers the faults hit, shared with the workload (kills restart servers in it).
    pub cluster: Arc<Mutex<Cluster>>,
    /// The cluster's network namespaces, with `--netns`: partitions cut links with nftables.
    pub netlab: Option<Arc<NetLab>>,
    /// Where faults are recorded.
    pub history: Arc<History>,
    /// The id the next joining server gets.
    pub next_id: u64,
}

async fn get_json(client: ApiClient, path: &str) -> anyhow::Result<Value> {
    let client = client.with_patience(Duration::from_millis(500));
    Ok(client.get::<Value>(path).await?)
}

async fn set_faults(client: ApiClient, body: Value) -> anyhow::Result<()> {
    let addr = client.servers()[0].clone();
    let client = client.with_patience(Duration::from_secs(2));
    client
        .post::<_, Value>("/v1/debug/faults", &body)
        .await
        .with_context(|| format!("setting faults on {addr}"))?;
    Ok(())
}

impl Injector {
    /// A client of the server at `addr` with the cluster's credentials.
    fn client(&self, addr: &str) -> ApiClient {
        self.cluster.lock().unwrap().client_of(addr)
    }

    fn members(&self) -> Vec<(u64, String)> {
        let cluster = self.cluster.lock().unwrap();
        cluster
            .servers
            .values()
            .filter(|s| s.is_running() && !s.is_paused())
            .map(|s| (s.id, s.http_addr.clone()))
            .collect()
    }

    /// The leader as the running servers see it.
    pub async fn leader(&self) -> Option<u64> {
        for (_, addr) in self.members() {
            if let Ok(c) = get_json(self.client(&addr), "/v1/cluster").await {
                if let Some(id) = c["leader_id"].as_u64() {
                    return Some(id);
                }
            }
        }
        None
    }

    /// Running servers other than the leader.
    async fn followers(&self) -> Vec<u64> {
        let leader = self.leader().await;
        self.members()
            .into_iter()
            .map(|(id, _)| id)
            .filter(|id| Some(*id) != leader)
            .collect()
    }

    /// Injects `fault`, holds it, heals it, and records it.
    pub async fn run(&mut self, fault: &Planned) -> anyhow::Result<()> {
        let start = now_ms();
        let (what, leader_kill) = match fault.kind {
            FaultKind::KillLeader | FaultKind::KillFollower => {
                let target = self.target(fault).await;
                let Some(id) = target else {
                    return Ok(());
                };
                self.with_server(id, |s| {
                    s.kill();
                    Ok(())
                })?;
                let killed = now_ms();
                tokio::time::sleep(fault.hold).await;
                self.cluster.lock().unwrap().restart(id)?;
                self.history.fault(FaultRecord {
                    at_ms: killed,
                    healed_ms: now_ms(),
                    what: format!("{:?} {id}", fault.kind),
                    leader_kill: fault.kind == FaultKind::KillLeader,
                });
                return Ok(());
            }
            FaultKind::PauseLeader | FaultKind::PauseFollower => {
                let Some(id) = self.target(fault).await else {
                    return Ok(());
                };
                self.with_server(id, |s| s.pause())?;
                tokio::time::sleep(fault.hold).await;
                self.with_server(id, |s| s.resume())?;
                (format!("{:?} {id}", fault.kind), false)
            }
            FaultKind::PartitionMinority | FaultKind::PartitionLeader => {
                let Some(id) = self.target(fault).await else {
                    return Ok(());
                };
                let ids: Vec<u64> = self.members().into_iter().map(|(i, _)| i).collect();
                if self.on_netlab(|lab| {
                    ids.iter()
                        .filter(|other| **other != id)
                        .try_for_each(|other| lab.cut(id, *other))
                })? {
                    tokio::time::sleep(fault.hold).await;
                    self.heal_links().await;
                    self.history.fault(FaultRecord {
                        at_ms: start,
                        healed_ms: now_ms(),
                        what: format!("{:?} isolating {id} (nftables)", fault.kind),
                        leader_kill: false,
                    });
                    return Ok(());
                }
                for (other, addr) in self.members() {
                    let blocked: Vec<u64> = if other == id {
                        ids.iter().copied().filter(|i| *i != id).collect()
                    } else {
                        vec![id]
                    };
                    set_faults(self.client(&addr), json!({"blocked": blocked})).await?;
                }
                tokio::time::sleep(fault.hold).await;
                self.heal_links().await;
                (format!("{:?} isolating {id}", fault.kind), false)
            }
            FaultKind::PartitionOneWay => {
                let members = self.members();
                if members.len() < 2 {
                    return Ok(());
                }
                let a = fault.pick as usize % members.len();
                let b = (a + 1 + (fault.pick as usize / 7) % (members.len() - 1)) % members.len();
                let (from, to) = (members[a].0, members[b].0);
                let real = self.on_netlab(|lab| lab.cut_one_way(from, to))?;
                if !real {
                    set_faults(self.client(&members[a].1), json!({"blocked": [to]})).await?;
                }
                tokio::time::sleep(fault.hold).await;
                self.heal_links().await;
                (
                    format!(
                        "one-way {from} -/-> {to}{}",
                        if real { " (nftables)" } else { "" }
                    ),
                    false,
                )
            }
            FaultKind::LossyLinks => {
                let members = self.members();
                for (id, addr) in &members {
                    let links: serde_json::Map<String, Value> = members
                        .iter()
                        .filter(|(peer, _)| peer != id)
                        .map(|(peer, _)| {
                            (
                                peer.to_string(),
                                json!({"drop_probability": 0.2, "delay_ms": 10, "jitter_ms": 40,
                                       "duplicate_probability": 0.1}),
                            )
                        })
                        .collect();
                    let body = json!({"links": links});
                    if set_faults(self.client(addr), body.clone()).await.is_err() {
                        // A server without duplication support: drops and delays only.
                        let mut plain = body;
                        for link in plain["links"].as_object_mut().into_iter().flatten() {
                            link.1
                                .as_object_mut()
                                .map(|l| l.remove("duplicate_probability"));
                        }
                        set_faults(self.client(addr), plain).await?;
                    }
                }
                tokio::time::sleep(fault.hold).await;
                self.heal_links().await;
                ("lossy links".to_string(), false)
            }
            FaultKind::WipeAndRestart
            | FaultKind::OtherSecret
            | FaultKind::WrongId
            | FaultKind::OtherDataDir => {
                let Some(id) = self.target(fault).await else {
                    return Ok(());
                };
                (super::mistakes::run(self, fault, id).await?, false)
            }
            FaultKind::Membership => {
                let id = self.next_id;
                self.next_id += 1;
                let (raft, http) = self.cluster.lock().unwrap().spawn_joiner(id)?;
                let api = self
                    .cluster
                    .lock()
                    .unwrap()
                    .api_client()
                    .with_patience(Duration::from_secs(10));
                let member = json!({"id": id, "raft_addr": raft, "http_addr": http});
                let added = api.post::<_, Value>("/v1/cluster/members", &member).await;
                tokio::time::sleep(fault.hold).await;
                let removed = api
                    .delete::<Value>(&format!("/v1/cluster/members/{id}"))
                    .await;
                self.cluster.lock().unwrap().forget(id);
                (
                    format!(
                        "member {id} added ({}) and removed ({})",
                        if added.is_ok() { "ok" } else { "failed" },
                        if removed.is_ok() { "ok" } else { "failed" }
                    ),
                    false,
                )
            }
        };
        self.history.fault(FaultRecord {
            at_ms: start,
            healed_ms: now_ms(),
            what,
            leader_kill,
        });
        Ok(())
    }

    async fn target(&self, fault: &Planned) -> Option<u64> {
        match fault.kind {
            FaultKind::KillLeader | FaultKind::PauseLeader | FaultKind::PartitionLeader => {
                self.leader().await
            }
            _ => {
                let followers = self.followers().await;
                (!followers.is_empty()).then(|| followers[fault.pick as usize % followers.len()])
            }
        }
    }

    fn with_server(
        &self,
        id: u64,
        f: impl FnOnce(&mut convoy_node::local::Server) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let mut cluster = self.cluster.lock().unwrap();
        let server = cluster
            .get_mut(id)
            .with_context(|| format!("no server {id}"))?;
        f(server)
    }

    /// Runs `f` on the cluster's network namespaces; `false` when it has none.
    fn on_netlab(&self, f: impl FnOnce(&NetLab) -> anyhow::Result<()>) -> anyhow::Result<bool> {
        match &self.netlab {
            Some(lab) => f(lab).map(|()| true),
            None => Ok(false),
        }
    }

    /// Clears every running server's link faults (and nftables cuts).
    pub async fn heal_links(&self) {
        if let Err(e) = self.on_netlab(|lab| lab.heal()) {
            tracing::warn!("healing nftables cuts: {e:#}");
        }
        for (_, addr) in self.members() {
            let _ = set_faults(self.client(&addr), json!({})).await;
        }
    }

    /// Undoes everything: resumes paused servers, restarts killed ones, clears link faults.
    pub async fn heal_all(&self) -> anyhow::Result<()> {
        let ids: Vec<(u64, bool, bool)> = {
            let cluster = self.cluster.lock().unwrap();
            cluster
                .servers
                .values()
                .map(|s| (s.id, s.is_running(), s.is_paused()))
                .collect()
        };
        for (id, running, paused) in ids {
            if paused {
                self.with_server(id, |s| s.resume())?;
            } else if !running {
                self.cluster.lock().unwrap().restart(id)?;
            }
        }
        self.heal_links().await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_plan_and_plans_fit_the_duration() {
        let d = Duration::from_secs(30);
        let a = schedule(7, d, &FaultKind::ALL);
        assert_eq!(a, schedule(7, d, &FaultKind::ALL));
        assert_ne!(a, schedule(8, d, &FaultKind::ALL));
        assert!(a.len() >= 5, "{a:?}");
        for pair in a.windows(2) {
            assert!(
                pair[1].at >= pair[0].at + pair[0].hold,
                "faults overlap: {pair:?}"
            );
        }
        assert!(a.iter().all(|p| p.at + p.hold <= d));
    }

    #[test]
    fn only_the_chosen_kinds_are_planned() {
        let plan = schedule(1, Duration::from_secs(60), &[FaultKind::KillLeader]);
        assert!(plan.iter().all(|p| p.kind == FaultKind::KillLeader));
        assert!(schedule(1, Duration::from_secs(60), &[]).is_empty());
    }
}
