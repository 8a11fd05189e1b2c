//! `convoy_rollbacks_total{consumer, resource}`: the deployments that rolled back, by consumer and resource,
//! counted from the replicated state at each scrape, so every server reports the same numbers and a restart
//! or a failover loses none. Its label pairs are bounded: at most [`MAX_PAIRS`] pairs get their own series
//! (the first in name order), the rest are added up under `consumer="(other)", resource="(other)"`.

use std::collections::BTreeMap;

use convoy_actors::domain::{DeploymentSummary, Status};

/// At most this many (consumer, resource) pairs get their own series.
pub const MAX_PAIRS: usize = 1_000;

/// The label of both `consumer` and `resource` for the pairs beyond [`MAX_PAIRS`]: not a valid name, so it
/// never mixes with a real consumer's or resource's series.
pub const OTHER: &str = "(other)";

/// Whether a deployment in `status` rolled back: it is rolling back (or held while doing so) or rolled back.
/// A rollback that then failed ends `FAILED` and is no longer told apart from a forward failure.
pub fn rolled_back(status: Status) -> bool {
    matches!(
        status,
        Status::RollingBack
            | Status::RollBackPaused
            | Status::RollBackAwaitingPulse
            | Status::RolledBack
    )
}

/// Rollbacks by (consumer, resource): the first [`MAX_PAIRS`] pairs in name order, then [`OTHER`] for both.
pub fn count<'a>(
    deployments: impl IntoIterator<Item = &'a DeploymentSummary>,
) -> BTreeMap<(String, String), u64> {
    let mut by_pair: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    for d in deployments {
        if rolled_back(d.status) {
            *by_pair
                .entry((d.consumer.as_str(), d.resource.as_str()))
                .or_default() += 1;
        }
    }
    let mut out = BTreeMap::new();
    for (i, ((consumer, resource), n)) in by_pair.into_iter().enumerate() {
        let key = if i < MAX_PAIRS {
            (consumer.to_string(), resource.to_string())
        } else {
            (OTHER.to_string(), OTHER.to_string())
        };
        *out.entry(key).or_default() += n;
    }
    out
}

#[cfg(test)]
#[path = "rollbacks_test.rs"]
mod tests;
