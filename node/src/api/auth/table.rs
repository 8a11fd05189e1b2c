//! The route table: every route the API serves, with the permission it needs. The auth middleware consults
//! it on every request (a path it does not list is 404) and the tests iterate it, so it is the one place
//! that says who may do what. Plain data over `convoy_actors` only: tests/tests/security_tokens.rs includes
//! this very file to drive a real cluster through every row.

/// One route: method, path pattern (`{x}` is one path segment) and what it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// HTTP method.
    pub method: &'static str,
    /// Path pattern as registered with actix-web.
    pub pattern: &'static str,
    /// What the caller's role must grant.
    pub need: Permission,
    /// The action in words, for 403 messages ("token ci (reader) may not <action>").
    pub action: &'static str,
}

const fn rule(
    method: &'static str,
    pattern: &'static str,
    need: Permission,
    action: &'static str,
) -> Rule {
    Rule {
        method,
        pattern,
        need,
        action,
    }
}

use convoy_actors::domain::Permission;
use Permission::{Admin, Authenticated, Operate, Public, Pulse, Read, ReadResources, Report};

/// Every served route. The first rule that matches decides (`.../pulse` before `.../{action}`).
pub const ROUTES: &[Rule] = &[
    rule("GET", "/healthz", Public, "check liveness"),
    rule("GET", "/readyz", Public, "check readiness"),
    // The dashboard's static files (node/src/api/ui.rs): public; the data they show needs a token.
    rule("GET", "/", Public, "open the dashboard"),
    rule("GET", "/ui/", Public, "open the dashboard"),
    rule("GET", "/ui/style.css", Public, "open the dashboard"),
    rule("GET", "/ui/app.js", Public, "open the dashboard"),
    rule("GET", "/ui/api.js", Public, "open the dashboard"),
    rule("GET", "/ui/views.js", Public, "open the dashboard"),
    rule("GET", "/ui/grid.js", Public, "open the dashboard"),
    // The API description and its docs page: public, like the dashboard's files (no secret in them).
    rule("GET", "/openapi.json", Public, "read the API description"),
    rule("GET", "/docs", Public, "open the API docs"),
    rule("GET", "/docs/docs.js", Public, "open the API docs"),
    rule("GET", "/docs/docs.css", Public, "open the API docs"),
    rule("GET", "/v1/whoami", Authenticated, "ask what it may do"),
    rule("GET", "/v1/watch", Read, "watch the cluster's changes"),
    rule("GET", "/v1/cluster", Read, "read the cluster"),
    rule("GET", "/metrics", Read, "read metrics"),
    rule("GET", "/v1/cluster/digest", Read, "read the state digest"),
    rule(
        "GET",
        "/v1/cluster/membership/{id}",
        Public,
        "ask whether a server is a member",
    ),
    rule("POST", "/v1/cluster/members", Admin, "add cluster members"),
    rule(
        "DELETE",
        "/v1/cluster/members/{id}",
        Admin,
        "remove cluster members",
    ),
    rule(
        "POST",
        "/v1/cluster/members/{id}/replace",
        Admin,
        "replace cluster members",
    ),
    rule("GET", "/v1/tokens", Admin, "list tokens"),
    rule("POST", "/v1/tokens", Admin, "create tokens"),
    rule("DELETE", "/v1/tokens/{name}", Admin, "revoke tokens"),
    rule("POST", "/v1/debug/faults", Admin, "inject faults"),
    rule("POST", "/v1/resources", Operate, "create resources"),
    rule("GET", "/v1/resources", ReadResources, "read resources"),
    rule(
        "GET",
        "/v1/resources/{name}",
        ReadResources,
        "read resources",
    ),
    rule(
        "POST",
        "/v1/resources/{name}/versions",
        Operate,
        "publish versions",
    ),
    rule(
        "POST",
        "/v1/resources/{name}/versions/{version}/retract",
        Operate,
        "retract versions",
    ),
    rule(
        "POST",
        "/v1/resources/{name}/versions/{version}/unretract",
        Operate,
        "retract versions",
    ),
    rule("POST", "/v1/consumers", Operate, "create consumers"),
    rule("GET", "/v1/consumers", Read, "read consumers"),
    rule("GET", "/v1/consumers/{name}", Read, "read consumers"),
    rule(
        "PUT",
        "/v1/consumers/{name}/nodes",
        Operate,
        "change consumer nodes",
    ),
    rule(
        "PUT",
        "/v1/consumers/{name}/subscriptions/{resource}",
        Operate,
        "change subscriptions",
    ),
    rule(
        "PATCH",
        "/v1/consumers/{name}/subscriptions/{resource}",
        Operate,
        "change subscriptions",
    ),
    rule(
        "DELETE",
        "/v1/consumers/{name}/holds/{resource}/{version}",
        Operate,
        "clear held-back versions",
    ),
    rule(
        "DELETE",
        "/v1/consumers/{name}/subscriptions/{resource}",
        Operate,
        "change subscriptions",
    ),
    rule(
        "DELETE",
        "/v1/consumers/{name}",
        Operate,
        "delete consumers",
    ),
    rule("POST", "/v1/nodes/reports", Report, "report for nodes"),
    rule("POST", "/v1/nodes/{id}/report", Report, "report for nodes"),
    rule("GET", "/v1/nodes", Read, "read nodes"),
    rule("GET", "/v1/nodes/{id}", Read, "read nodes"),
    rule("POST", "/v1/deployments", Operate, "start deployments"),
    rule("GET", "/v1/deployments", Read, "read deployments"),
    rule("GET", "/v1/deployments/{id}", Read, "read deployments"),
    rule(
        "GET",
        "/v1/deployments/{id}/summary",
        Read,
        "read deployments",
    ),
    rule(
        "GET",
        "/v1/deployments/{id}/watch",
        Read,
        "watch deployments",
    ),
    rule(
        "GET",
        "/v1/deployments/{id}/nodes/{node}",
        Read,
        "read deployments",
    ),
    rule(
        "POST",
        "/v1/deployments/{id}/pulse",
        Pulse,
        "pulse deployments",
    ),
    rule(
        "POST",
        "/v1/deployments/{id}/{action}",
        Operate,
        "steer deployments",
    ),
    rule("POST", "/v1/groups", Operate, "create groups"),
    rule("GET", "/v1/groups", Read, "read groups"),
    rule("GET", "/v1/groups/{name}", Read, "read groups"),
    rule("DELETE", "/v1/groups/{name}", Operate, "delete groups"),
    rule(
        "POST",
        "/v1/group-deployments",
        Operate,
        "start group deployments",
    ),
    rule(
        "GET",
        "/v1/group-deployments",
        Read,
        "read group deployments",
    ),
    rule(
        "GET",
        "/v1/group-deployments/{id}",
        Read,
        "read group deployments",
    ),
    rule(
        "POST",
        "/v1/group-deployments/{id}/abort",
        Operate,
        "abort group deployments",
    ),
];

/// The rule for `method` on `path` (as the router sees it: percent-decoded, no query), if any.
pub fn lookup(method: &str, path: &str) -> Option<&'static Rule> {
    ROUTES
        .iter()
        .find(|r| r.method == method && matches(r.pattern, path))
}

/// The methods the table serves on `path` (empty: the path is not served at all).
pub fn allowed(path: &str) -> Vec<&'static str> {
    let mut methods: Vec<&'static str> = ROUTES
        .iter()
        .filter(|r| matches(r.pattern, path))
        .map(|r| r.method)
        .collect();
    methods.sort_unstable();
    methods.dedup();
    methods
}

/// Whether `path` fits `pattern` segment by segment; `{x}` takes exactly one non-empty segment.
pub fn matches(pattern: &str, path: &str) -> bool {
    let mut want = pattern.split('/');
    let mut got = path.split('/');
    loop {
        match (want.next(), got.next()) {
            (None, None) => return true,
            (Some(w), Some(g)) if w.starts_with('{') && w.ends_with('}') => {
                if g.is_empty() {
                    return false;
                }
            }
            (Some(w), Some(g)) if w == g => {}
            _ => return false,
        }
    }
}
