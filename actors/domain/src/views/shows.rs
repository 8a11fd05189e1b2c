//! The single-object shows, paged (issue 37 §2): `GET /v1/resources/{name}` answers one page of the
//! resource's versions and `GET /v1/consumers/{name}` one page of its nodes, each with where the page sits
//! (`page`); a consumer's subscriptions and holds, small lists that can still be large, are cut at
//! [`DEFAULT_PAGE`] with their counts (`subscriptions_total`, `holds_total`). What one show builds is bounded
//! by its `limit`, not by the object's size. The pages are taken by the lists' own [`Page`].

use serde::{Deserialize, Serialize};

use crate::state::ClusterState;
use crate::views::pages::{Page, Paging, DEFAULT_PAGE};
use crate::views::{
    hold_views, version_view, ConsumerView, HoldView, SubscriptionView, VersionView,
};

/// `GET /v1/resources/{name}`: the resource with one page of its versions (oldest first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ResourceShow {
    /// The resource's name.
    pub name: String,
    /// The page's versions, oldest first.
    pub versions: Vec<VersionView>,
    /// Where the page sits among the resource's versions.
    pub page: Paging,
}

/// `GET /v1/consumers/{name}`: the consumer with one page of its nodes (by ordinal), its first
/// [`DEFAULT_PAGE`] subscriptions (by resource) and holds, and how many there are of each.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ConsumerShow {
    /// The consumer: `nodes` is the page's, `subscriptions` and `holds` the first 100.
    #[serde(flatten)]
    pub consumer: ConsumerView,
    /// Where the page sits among the consumer's nodes.
    pub page: Paging,
    /// Its subscriptions (those shown are the first 100 by resource).
    pub subscriptions_total: usize,
    /// Its held-back versions (those shown are the first 100).
    pub holds_total: usize,
}

/// A subscription in `GET /v1/consumers/{name}/subscriptions`: its resource beside it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SubscriptionEntry {
    /// The resource subscribed to.
    pub resource: String,
    /// The subscription as the consumer shows it.
    #[serde(flatten)]
    pub subscription: SubscriptionView,
}

impl ClusterState {
    /// A resource with its versions from `offset`, at most `limit`.
    pub fn resource_show(&self, name: &str, offset: usize, limit: usize) -> Option<ResourceShow> {
        let r = self.resource_map().get(name)?;
        let page = Page::of(r.versions.len(), r.versions.values(), offset, limit, |v| {
            Some(version_view(v))
        });
        Some(ResourceShow {
            name: r.name.clone(),
            page: page.paging(offset, limit),
            versions: page.items,
        })
    }

    /// A consumer with its nodes from `offset`, at most `limit` (found by position, not walked to).
    pub fn consumer_show(&self, name: &str, offset: usize, limit: usize) -> Option<ConsumerShow> {
        let c = self.consumer_map().get(name)?;
        let nodes = Page::of(c.nodes.len(), c.nodes.iter_from(offset), 0, limit, |n| {
            Some(n.clone())
        });
        let holds_total = c.holds.values().map(|vs| vs.len()).sum();
        Some(ConsumerShow {
            page: nodes.paging(offset, limit),
            subscriptions_total: c.subscriptions.len(),
            holds_total,
            consumer: ConsumerView {
                name: c.name.clone(),
                nodes: nodes.items,
                subscriptions: self.subscription_views(c).take(DEFAULT_PAGE).collect(),
                holds: hold_views(c).take(DEFAULT_PAGE).collect(),
                events: c.events.clone(),
                budget: self.budget(name),
            },
        })
    }
}

impl ClusterState {
    /// A page of a consumer's subscriptions (by resource), or `None` without the consumer.
    pub fn subscriptions_page(
        &self,
        name: &str,
        offset: usize,
        limit: usize,
    ) -> Option<Page<SubscriptionEntry>> {
        let c = self.consumer_map().get(name)?;
        Some(Page::of(
            c.subscriptions.len(),
            self.subscription_views(c),
            offset,
            limit,
            |(resource, subscription)| {
                Some(SubscriptionEntry {
                    resource,
                    subscription,
                })
            },
        ))
    }

    /// A page of a consumer's held-back versions (by resource, then version), or `None` without it.
    pub fn holds_page(&self, name: &str, offset: usize, limit: usize) -> Option<Page<HoldView>> {
        let c = self.consumer_map().get(name)?;
        let total = c.holds.values().map(|vs| vs.len()).sum();
        Some(Page::of(total, hold_views(c), offset, limit, Some))
    }
}

#[cfg(test)]
#[path = "shows_test.rs"]
mod tests;
