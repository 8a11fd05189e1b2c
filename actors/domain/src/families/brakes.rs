//! The brakes of weak subscriptions (DEPLOYMENTS.md §4, "the brake"): the failures a node report shows for
//! the first time are counted on each weak subscription whose selected version failed, and one more than its
//! brake tolerates within its window holds the version back there, by `brake`, in the same apply.
//!
//! Two steps, because the first reads the selection (every consumer) and the second changes consumers:
//! [`counted`] says which subscriptions count a failure, [`Brakes::count`] counts them and puts the holds.
//!
//! What is not counted: a node inside a deployment of the resource when its report came (also when that
//! very failure ended the deployment: it judged the node), a health restart of a version the node ran
//! done and healthy since before the brake's window, and a version older than one the brake already holds
//! on the consumer (no walk-back: a brake never holds the version before the one it held).

use crate::deployment::Deployment;
use crate::entities::membership::Membership;
use crate::entities::model::{Consumer, HoldOrigin, Mode};
use crate::families::selection::Selection;
use crate::families::subscriptions::Holds;
use crate::values::ids::{DeploymentId, Timestamp};
use convoy_collections::CowMap;

/// A version a node reported failed that its merged report did not show failed before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Failure {
    /// The node.
    pub node: String,
    /// The resource.
    pub resource: String,
    /// The version it failed.
    pub version: u64,
    /// The node was in a deployment of the resource when it reported (before the report was acted on).
    pub in_deployment: bool,
    /// Since when the node had run the version done and healthy before this failure, if it had.
    pub ok_since: Option<Timestamp>,
}

/// The failures a brake counts, each with the consumer that counts it: the node is outside any deployment
/// of the resource (a deployment judges its own nodes), and the consumer subscribes weakly and selects the
/// failed version.
pub(crate) fn counted(
    selection: Selection<'_>,
    deployments: &CowMap<DeploymentId, Deployment>,
    failures: Vec<Failure>,
) -> Vec<(String, Failure)> {
    let mut out = Vec::new();
    for f in failures {
        if f.in_deployment {
            continue;
        }
        let Some(ns) = selection.nodes.get(&f.node) else {
            continue;
        };
        if Membership::deployment_of(ns, &f.resource, deployments).is_some() {
            continue;
        }
        for cname in Membership::consumers_of(ns) {
            let weak = selection
                .consumers
                .get(cname)
                .and_then(|c| c.subscriptions.get(&f.resource))
                .is_some_and(|s| s.mode == Mode::Weak);
            if weak && selection.selected_version(cname, &f.resource) == Some(f.version) {
                out.push((cname.to_string(), f.clone()));
            }
        }
    }
    out
}

/// Counting failures on the brakes and holding back what trips one, over the consumers (their
/// subscriptions' records, their holds and events) and the deployments (which the hold family borrows).
pub(crate) struct Brakes<'a> {
    /// The consumers whose brakes count.
    pub consumers: &'a mut CowMap<String, Consumer>,
    /// The deployments, for [`Holds`].
    pub deployments: &'a mut CowMap<DeploymentId, Deployment>,
}

impl Brakes<'_> {
    /// Counts each failure at `at` on its consumer's brake; answers the message of each hold put.
    pub(crate) fn count(&mut self, counted: Vec<(String, Failure)>, at: Timestamp) -> Vec<String> {
        let mut held = Vec::new();
        for (cname, f) in counted {
            let Some(c) = self.consumers.get_mut(&cname) else {
                continue;
            };
            if c.held(&f.resource, f.version) {
                // Held earlier in this apply: the selection moved off the version.
                continue;
            }
            if newer_brake_hold(c, &f.resource, f.version) {
                // No walk-back: the brake already held a newer version; this one stays selectable.
                continue;
            }
            let nodes = c.nodes.len() as u32;
            let Some(sub) = c.subscriptions.get_mut(&f.resource) else {
                continue;
            };
            let brake = sub.policy.brake();
            if f.ok_since
                .is_some_and(|t| at.saturating_sub(t) >= brake.window_ms)
            {
                // A health restart of a version that succeeded before the window: not a rollout failure.
                continue;
            }
            let Some((trip, named)) = sub
                .brake_record
                .record(&brake, nodes, &f.node, f.version, at)
            else {
                continue;
            };
            let message = Holds {
                consumers: self.consumers,
                deployments: self.deployments,
            }
            .hold_by_brake(&cname, &f.resource, f.version, trip, &named, at);
            held.extend(message);
        }
        held
    }
}

/// The brake of `consumer` already holds a version of `resource` newer than `version`.
fn newer_brake_hold(consumer: &Consumer, resource: &str, version: u64) -> bool {
    consumer.holds.get(resource).is_some_and(|hs| {
        hs.range(version + 1..)
            .any(|(_, h)| matches!(h.origin, HoldOrigin::Brake(_)))
    })
}

#[cfg(test)]
#[path = "brakes_test.rs"]
mod tests;
