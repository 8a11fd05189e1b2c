//! Pages of the lists the API serves (issue 37 §2): `GET /v1/windows`, `/v1/tokens`, `/v1/consumers`,
//! `/v1/resources`, `/v1/deployments`, `/v1/groups`, `/v1/group-deployments`. Each page builds the views of its
//! own objects only (skipping to `offset` walks keys, never views), so what one request costs is bounded by
//! its `limit`, whatever the count of objects. Pages are in the list's own order (by name; deployments by id;
//! group deployments newest first), so consecutive offsets over an unchanged state give every object once.

use serde::{Deserialize, Serialize};

use crate::state::ClusterState;
use crate::values::ids::Timestamp;
use crate::views::windows::WindowView;
use crate::views::{
    ConsumerView, DeploymentFilter, DeploymentSummary, GroupDeploymentView, GroupView,
    ResourceView, StatusFilter, TokenView,
};

/// Objects on a page when no `limit` is given, and the most a show lists of a small inner list (a consumer's
/// subscriptions and holds, `views/shows.rs`).
pub const DEFAULT_PAGE: usize = 100;

/// Where a page sits in its list, as the API answers it: `{"total", "offset", "limit", "next_offset"?}`;
/// `next_offset`, the offset of the next page, is absent on the last one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Paging {
    /// Objects in the whole list (every page).
    pub total: usize,
    /// Objects skipped before this page.
    pub offset: usize,
    /// Objects a page holds at most.
    pub limit: usize,
    /// The `offset` of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

/// One page of a list: `items` are at most `limit` objects from `offset`; `total` counts every page.
#[derive(Clone, Debug, PartialEq)]
pub struct Page<T> {
    /// Objects in the whole list (every page).
    pub total: usize,
    /// This page's objects.
    pub items: Vec<T>,
}

impl<T> Page<T> {
    /// Where this page, taken from `offset` with `limit`, sits in its list: the next page starts after its
    /// objects, unless it reached the end (or is empty: past the end).
    pub fn paging(&self, offset: usize, limit: usize) -> Paging {
        let end = offset.saturating_add(self.items.len());
        Paging {
            total: self.total,
            offset,
            limit,
            next_offset: (end < self.total && !self.items.is_empty()).then_some(end),
        }
    }

    /// The page of `keys` (the whole list, in order) from `offset`, at most `limit`, each key's view built
    /// by `view` (a key whose view is `None` is left out).
    pub(crate) fn of<K>(
        total: usize,
        keys: impl Iterator<Item = K>,
        offset: usize,
        limit: usize,
        view: impl FnMut(K) -> Option<T>,
    ) -> Self {
        let items = keys.skip(offset).take(limit).filter_map(view).collect();
        Page { total, items }
    }
}

impl ClusterState {
    /// A page of [`ClusterState::windows`]: the deployments the windows hold are judged once for the page.
    pub fn windows_page(&self, now: Timestamp, offset: usize, limit: usize) -> Page<WindowView> {
        if offset >= self.window_map().len() {
            return Page {
                total: self.window_map().len(),
                items: Vec::new(),
            };
        }
        let held = self.held_by_windows(now);
        Page::of(
            self.window_map().len(),
            self.window_map().values(),
            offset,
            limit,
            |w| Some(self.window_view(w, now, &held)),
        )
    }

    /// A page of [`ClusterState::token_views`] (by name; never secrets or hashes).
    pub fn tokens_page(&self, offset: usize, limit: usize) -> Page<TokenView> {
        let names: Vec<&str> = self.tokens().iter().map(|t| t.name.as_str()).collect();
        Page::of(names.len(), names.into_iter(), offset, limit, |n| {
            self.token(n)
        })
    }

    /// A page of [`ClusterState::consumers`] (by name).
    pub fn consumers_page(&self, offset: usize, limit: usize) -> Page<ConsumerView> {
        Page::of(
            self.consumer_map().len(),
            self.consumer_map().keys(),
            offset,
            limit,
            |n| self.consumer(n),
        )
    }

    /// A page of [`ClusterState::resources`] (by name).
    pub fn resources_page(&self, offset: usize, limit: usize) -> Page<ResourceView> {
        Page::of(
            self.resource_map().len(),
            self.resource_map().keys(),
            offset,
            limit,
            |n| self.resource(n),
        )
    }

    /// A page of [`ClusterState::groups`] (by name).
    pub fn groups_page(&self, offset: usize, limit: usize) -> Page<GroupView> {
        Page::of(
            self.group_map().len(),
            self.group_map().keys(),
            offset,
            limit,
            |n| self.group(n),
        )
    }

    /// A page of [`ClusterState::group_deployments`] (newest first).
    pub fn group_deployments_page(&self, offset: usize, limit: usize) -> Page<GroupDeploymentView> {
        Page::of(
            self.group_deployment_map().len(),
            self.group_deployment_map().keys().rev(),
            offset,
            limit,
            |id| self.group_deployment(*id),
        )
    }

    /// A page of [`ClusterState::deployments`] (by id) of those `filter` keeps.
    pub fn deployments_page(
        &self,
        filter: &DeploymentFilter,
        offset: usize,
        limit: usize,
    ) -> Page<DeploymentSummary> {
        let ids: Vec<_> = self
            .deployment_map()
            .values()
            .filter(|d| filter.consumer.as_ref().is_none_or(|c| *c == d.consumer))
            .filter(|d| filter.resource.as_ref().is_none_or(|r| *r == d.resource))
            .filter(|d| match filter.status {
                None => true,
                Some(StatusFilter::Active) => d.status.is_active(),
                Some(StatusFilter::Terminal) => d.status.is_terminal(),
            })
            .map(|d| d.id)
            .collect();
        Page::of(ids.len(), ids.into_iter(), offset, limit, |id| {
            self.deployment_map()
                .get(&id)
                .map(crate::views::deployments::summary)
        })
    }
}
