//! The web dashboard's static files, embedded in the binary (no build step, no CDN) and served at `/ui/`;
//! `GET /` redirects there; the API docs page is served at `/docs` the same way. The files are public: every piece of data they show comes from the API with the
//! token the page is given.

use actix_web::http::header;
use actix_web::HttpResponse;
use convoy_actors::domain::Permission::Public;

use super::route::Route;

/// One embedded file: the path it is served at, its media type and its bytes.
#[derive(Clone, Copy, Debug)]
pub struct Asset {
    /// The path, as listed in the route table.
    pub path: &'static str,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// The file.
    pub body: &'static str,
}

const fn asset(path: &'static str, content_type: &'static str, body: &'static str) -> Asset {
    Asset {
        path,
        content_type,
        body,
    }
}

const JS: &str = "text/javascript; charset=utf-8";

/// Every file of the dashboard (`ui/assets/` in the repository).
pub const ASSETS: &[Asset] = &[
    asset(
        "/ui/",
        "text/html; charset=utf-8",
        include_str!("../../../ui/assets/index.html"),
    ),
    asset(
        "/ui/style.css",
        "text/css; charset=utf-8",
        include_str!("../../../ui/assets/style.css"),
    ),
    asset("/ui/app.js", JS, include_str!("../../../ui/assets/app.js")),
    asset("/ui/api.js", JS, include_str!("../../../ui/assets/api.js")),
    asset(
        "/ui/views.js",
        JS,
        include_str!("../../../ui/assets/views.js"),
    ),
    asset(
        "/ui/grid.js",
        JS,
        include_str!("../../../ui/assets/grid.js"),
    ),
    asset(
        "/ui/clock.js",
        JS,
        include_str!("../../../ui/assets/clock.js"),
    ),
    asset(
        "/ui/rules.js",
        JS,
        include_str!("../../../ui/assets/rules.js"),
    ),
    // The API docs page: renders /openapi.json (see node/src/api/openapi/).
    asset(
        "/docs",
        "text/html; charset=utf-8",
        include_str!("../../../ui/assets/docs.html"),
    ),
    asset(
        "/docs/docs.js",
        JS,
        include_str!("../../../ui/assets/docs.js"),
    ),
    asset(
        "/docs/docs.css",
        "text/css; charset=utf-8",
        include_str!("../../../ui/assets/docs.css"),
    ),
];

/// The page may load its own files only, and talk to any cluster member (it moves to another when its
/// server goes away; the members' CORS answer decides which origins may read).
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self' http: https:; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// `/` and every asset: public, like the data-free files they are.
pub fn routes() -> Vec<Route> {
    let root = Route::get("/", Public, "open the dashboard")
        .summary("Redirect to the dashboard")
        .to(root)
        .text(302, "Location: /ui/", None);
    let assets = ASSETS.iter().map(|asset| {
        let (action, summary) = if asset.path.starts_with("/docs") {
            ("open the API docs", "The API docs page")
        } else {
            ("open the dashboard", "The dashboard")
        };
        Route::get(asset.path, Public, action)
            .summary(summary)
            .to(move || serve(asset))
            .text(200, "The embedded file.", Some(asset.content_type))
    });
    std::iter::once(root).chain(assets).collect()
}

async fn root() -> HttpResponse {
    HttpResponse::Found()
        .insert_header((header::LOCATION, "/ui/"))
        .finish()
}

async fn serve(asset: &'static Asset) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, asset.content_type))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .body(asset.body)
}

#[cfg(test)]
#[path = "ui_test.rs"]
mod tests;
