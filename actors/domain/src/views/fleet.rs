//! Fleet views for operators (`GET /v1/nodes`, `convoy node list|show`): each node's version per
//! resource and its phase in every active deployment that holds it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::deployment::NodePhase;
use crate::state::ClusterState;
use crate::values::ids::DeploymentId;

/// One node as `GET /v1/nodes` lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct NodeLine {
    /// The node's id, as it reports it and consumers list it.
    pub id: String,
    /// Reporting (not marked inactive).
    pub active: bool,
    /// Consumers it belongs to.
    pub consumers: Vec<String>,
    /// The version it runs now, per resource it reported (`null`: none yet).
    pub versions: BTreeMap<String, Option<u64>>,
    /// Its phase in each active deployment that holds it.
    pub phases: BTreeMap<DeploymentId, NodePhase>,
}

/// A page of the fleet's nodes (`GET /v1/nodes`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FleetPage {
    /// Nodes matching the filter (all pages).
    pub total: usize,
    /// At most `limit` nodes from `offset`, in id order (a consumer's nodes: in ordinal order).
    pub nodes: Vec<NodeLine>,
}

impl ClusterState {
    /// The nodes in id order (a consumer's: in ordinal order), `limit` of them from `offset`.
    pub fn node_page(&self, consumer: Option<&str>, offset: usize, limit: usize) -> FleetPage {
        let ids: Vec<&String> = match consumer {
            Some(c) => self
                .consumer_map()
                .get(c)
                .map(|c| c.nodes.iter().collect())
                .unwrap_or_default(),
            None => self.node_table().iter().map(|(id, _)| id).collect(),
        };
        let nodes = ids
            .iter()
            .skip(offset)
            .take(limit)
            .filter_map(|id| self.node_line(id))
            .collect();
        FleetPage {
            total: ids.len(),
            nodes,
        }
    }

    /// One node's line; `None` for a node the state does not know.
    pub fn node_line(&self, id: &str) -> Option<NodeLine> {
        let n = self.node_table().get(id)?;
        let phases = n
            .deployments
            .iter()
            .filter_map(|(d, pos)| {
                let phase = self
                    .deployment_map()
                    .get(d)?
                    .nodes
                    .get(*pos as usize)?
                    .phase;
                Some((*d, phase))
            })
            .collect();
        Some(NodeLine {
            id: id.to_string(),
            active: n.active,
            consumers: n.consumers.iter().cloned().collect(),
            versions: n
                .resources
                .iter()
                .map(|(r, nr)| (r.clone(), nr.current))
                .collect(),
            phases,
        })
    }
}

#[cfg(test)]
#[path = "fleet_test.rs"]
mod fleet_test;
