//! `?offset=&limit=` on the list routes (issue 37 §2), as `GET /v1/nodes` has them: with either, the answer is
//! one page, `{"total", "offset", "limit", "<list>": [...], "next_offset"?}`; without, the bare array it always
//! was, cut at [`MAX_PAGE`] objects, with `X-Total-Count` and, when cut, a `Link: <...>; rel="next"` header to
//! the next page. Each page builds the views of its own objects only, on a copy of the state
//! ([`crate::replica::Replica::read_snapshot`]), so no list request holds the state or costs more than its
//! page, whatever the count of objects.

use actix_web::{HttpRequest, HttpResponse};
use convoy_actors::domain::Page;
use serde::Serialize;

use super::error::ApiError;

/// Objects on a page when `limit` is not given (with `offset`); also the most a show lists of a small inner
/// list (a consumer's subscriptions and holds).
pub const DEFAULT_PAGE: usize = convoy_actors::domain::DEFAULT_PAGE;
/// The most objects one answer holds, paged or not.
pub const MAX_PAGE: usize = 1_000;
/// The largest `offset` taken (far beyond any list; an offset past the end is an empty page).
pub const MAX_OFFSET: usize = 100_000_000;

/// Which part of a list to answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Objects skipped.
    pub offset: usize,
    /// Objects answered at most.
    pub limit: usize,
    /// `offset` or `limit` was given: answer a page object, not a bare array.
    pub paged: bool,
}

/// A whole number from `min` to `max`, or a 400 naming the parameter (the value quoted cut to 20 characters).
fn number(name: &str, raw: &str, min: usize, max: usize) -> Result<usize, ApiError> {
    match raw.parse::<usize>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => {
            let shown: String = raw.chars().take(20).collect();
            let cut = if shown.len() < raw.len() { "..." } else { "" };
            Err(ApiError::BadRequest(format!(
                "{name} {shown:?}{cut} is invalid: a whole number from {min} to {max}"
            )))
        }
    }
}

/// The window `offset` and `limit` ask for (each as the query string gave it, unparsed, so that a bad value is
/// refused naming its parameter): both absent is the unpaged answer, cut at [`MAX_PAGE`].
pub fn window(offset: Option<&str>, limit: Option<&str>) -> Result<Window, ApiError> {
    let paged = offset.is_some() || limit.is_some();
    let offset = offset.map_or(Ok(0), |o| number("offset", o, 0, MAX_OFFSET))?;
    let limit = match limit {
        Some(l) => number("limit", l, 1, MAX_PAGE)?,
        None if paged => DEFAULT_PAGE,
        None => MAX_PAGE,
    };
    Ok(Window {
        offset,
        limit,
        paged,
    })
}

/// The page as the list route answers it: a page object under `key` (paged), or the bare array with
/// `X-Total-Count` and, when objects are left out, a `Link` to the next page.
pub fn answer<T: Serialize>(
    req: &HttpRequest,
    key: &str,
    page: Page<T>,
    w: Window,
) -> Result<HttpResponse, ApiError> {
    let place = page.paging(w.offset, w.limit);
    let next = place.next_offset;
    if w.paged {
        let mut body = serde_json::Map::new();
        body.insert("total".into(), place.total.into());
        body.insert("offset".into(), place.offset.into());
        body.insert("limit".into(), place.limit.into());
        body.insert(
            key.into(),
            serde_json::to_value(&page.items).map_err(|e| ApiError::Internal(e.to_string()))?,
        );
        if let Some(next) = next {
            body.insert("next_offset".into(), next.into());
        }
        return Ok(HttpResponse::Ok().json(body));
    }
    let mut answer = HttpResponse::Ok();
    answer.insert_header(("X-Total-Count", page.total.to_string()));
    if let Some(next) = next {
        let query = req.query_string();
        let sep = if query.is_empty() { "" } else { "&" };
        answer.insert_header((
            "Link",
            format!(
                "<{}?{query}{sep}offset={next}&limit={MAX_PAGE}>; rel=\"next\"",
                req.path()
            ),
        ));
    }
    Ok(answer.json(page.items))
}

/// The query of a list route: `?consistent=` and the page.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Wait for a read barrier through the leader before reading.
    #[serde(default)]
    pub consistent: bool,
    /// Objects to skip (0 to 100,000,000); with it, or `limit`, the answer is a page object.
    #[serde(default)]
    #[param(value_type = Option<u64>)]
    pub offset: Option<String>,
    /// Objects on the page (1 to 1,000; default 100).
    #[serde(default)]
    #[param(value_type = Option<u64>)]
    pub limit: Option<String>,
}

impl ListQuery {
    /// The window it asks for, or a 400 naming the parameter.
    pub fn window(&self) -> Result<Window, ApiError> {
        window(self.offset.as_deref(), self.limit.as_deref())
    }
}

/// The query of a single-object show (`GET /v1/resources/{name}`, `GET /v1/consumers/{name}`): `?consistent=`
/// and the page of its big inner list (versions, nodes), with the list routes' bounds; the answer always
/// says where the page sits (`page`).
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ShowQuery {
    /// Wait for a read barrier through the leader before reading.
    #[serde(default)]
    pub consistent: bool,
    /// Versions or nodes to skip (0 to 100,000,000; default 0).
    #[serde(default)]
    #[param(value_type = Option<u64>)]
    pub offset: Option<String>,
    /// Versions or nodes on the page (1 to 1,000; default 100 with `offset`, else 1,000).
    #[serde(default)]
    #[param(value_type = Option<u64>)]
    pub limit: Option<String>,
}

impl ShowQuery {
    /// The window it asks for, or a 400 naming the parameter.
    pub fn window(&self) -> Result<Window, ApiError> {
        window(self.offset.as_deref(), self.limit.as_deref())
    }
}
