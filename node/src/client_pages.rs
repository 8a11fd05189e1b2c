//! Every item of a paged answer, walked by `next_offset` (API.md "Lists are paged"): a list route's pages
//! (`next_offset` at the top) joined into the bare array it answers unpaged, and a show's inner list
//! (`GET /v1/resources/{name}`'s versions, `GET /v1/consumers/{name}`'s nodes: `page.next_offset`) joined
//! into the first page's object, so that a client shows or looks up the whole object whatever its size.
//! A consumer's subscriptions and holds, which its show cuts at 100, are filled from their own lists.

use serde_json::{Map, Value};

use crate::client::{ApiClient, ClientError};

/// Items asked for per page: the most a page holds.
pub const PAGE: u64 = 1_000;

/// What walking the pages of a route gave.
enum Walked {
    /// Not an object: a server from before pages answered the bare array.
    Bare(Value),
    /// The first page's object (without `key`) and every page's `key` items, in order.
    Pages {
        first: Map<String, Value>,
        rows: Vec<Value>,
    },
}

/// The offset of the page after `page`: `next_offset` (a list) or `page.next_offset` (a show).
fn next_offset(page: &Map<String, Value>) -> Option<u64> {
    page.get("next_offset")
        .or_else(|| page.get("page").and_then(|p| p.get("next_offset")))
        .and_then(Value::as_u64)
}

/// Walks `path`'s pages of `key` items, [`PAGE`] each, from offset 0 until there is no next one.
async fn walk(client: &ApiClient, path: &str, key: &str) -> Result<Walked, ClientError> {
    let sep = if path.contains('?') { '&' } else { '?' };
    let mut first: Option<Map<String, Value>> = None;
    let mut rows = Vec::new();
    let mut offset = 0u64;
    loop {
        let page: Value = client
            .get(&format!("{path}{sep}offset={offset}&limit={PAGE}"))
            .await?;
        let Value::Object(mut page) = page else {
            return Ok(Walked::Bare(page));
        };
        if let Some(Value::Array(items)) = page.remove(key) {
            rows.extend(items);
        }
        let next = next_offset(&page);
        let first = first.get_or_insert(page);
        match next {
            Some(next) if next > offset => offset = next,
            _ => {
                return Ok(Walked::Pages {
                    first: std::mem::take(first),
                    rows,
                })
            }
        }
    }
}

/// Every object of the list route `path`, as the bare array of its `key` objects (a server that answers
/// a bare array, one from before pages, is taken as it is).
pub async fn list(client: &ApiClient, path: &str, key: &str) -> Result<Value, ClientError> {
    Ok(match walk(client, path, key).await? {
        Walked::Bare(v) => v,
        Walked::Pages { rows, .. } => Value::Array(rows),
    })
}

/// The show `path` whole: its `key` list (versions, nodes) from every page, in the first page's object,
/// without `page` (a show from before pages, which had no `page`, is one page).
pub async fn show(client: &ApiClient, path: &str, key: &str) -> Result<Value, ClientError> {
    Ok(match walk(client, path, key).await? {
        Walked::Bare(v) => v,
        Walked::Pages { mut first, rows } => {
            first.remove("page");
            first.insert(key.into(), Value::Array(rows));
            Value::Object(first)
        }
    })
}

/// `GET /v1/consumers/{name}` whole (`name` already encoded for a path): every node, and every
/// subscription and hold when the show cut them (`subscriptions_total`, `holds_total` above those shown).
pub async fn consumer(client: &ApiClient, name: &str) -> Result<Value, ClientError> {
    let path = format!("/v1/consumers/{name}");
    let c = show(client, &path, "nodes").await?;
    fill(client, &path, c).await
}

/// `GET /v1/consumers/{name}` with one node only but every subscription and hold: what a client that
/// looks a subscription up needs, whatever the count of nodes.
pub async fn consumer_subscriptions(client: &ApiClient, name: &str) -> Result<Value, ClientError> {
    let path = format!("/v1/consumers/{name}");
    let c = client.get(&format!("{path}?limit=1")).await?;
    fill(client, &path, c).await
}

/// Whether the show `c` cut its `key` list: `<key>_total` is more than it holds.
fn cut(c: &Value, key: &str) -> bool {
    let shown = match &c[key] {
        Value::Object(m) => m.len(),
        Value::Array(a) => a.len(),
        _ => 0,
    };
    c[format!("{key}_total")]
        .as_u64()
        .is_some_and(|total| total > shown as u64)
}

/// The consumer show `c` (of `path`) with its subscriptions and holds from their own lists, if it cut them.
async fn fill(client: &ApiClient, path: &str, mut c: Value) -> Result<Value, ClientError> {
    if cut(&c, "subscriptions") {
        let all = list(client, &format!("{path}/subscriptions"), "subscriptions").await?;
        let by_resource: Map<String, Value> = all
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|entry| {
                let mut entry = entry.as_object()?.clone();
                let Some(Value::String(resource)) = entry.remove("resource") else {
                    return None;
                };
                Some((resource, Value::Object(entry)))
            })
            .collect();
        c["subscriptions"] = Value::Object(by_resource);
    }
    if cut(&c, "holds") {
        c["holds"] = list(client, &format!("{path}/holds"), "holds").await?;
    }
    Ok(c)
}

#[cfg(test)]
#[path = "client_pages_test.rs"]
mod tests;
