//! `GET /v1/whoami`: the calling token's name and role, and every route of the route table its role may
//! call — what the dashboard reads to show only the buttons that would work.

use actix_web::{web, HttpResponse};
use convoy_actors::domain::Permission::Authenticated;
use convoy_actors::domain::Role;
use serde::Serialize;

use super::auth::{AuthMode, Caller};
use super::route::{Route, Routes};

/// This module's route.
pub fn routes() -> Vec<Route> {
    vec![
        Route::get("/v1/whoami", Authenticated, "ask what it may do")
            .summary("The caller's token and what it may do")
            .to(whoami)
            .json::<WhoAmI>(200, "Name, role and allowed routes."),
    ]
}

/// One route the caller may call.
#[derive(Debug, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Allowed {
    /// HTTP method.
    pub method: &'static str,
    /// Path pattern (`{x}` is one segment), as in the route table.
    pub pattern: &'static str,
    /// The action in words.
    pub action: &'static str,
}

/// The answer of `GET /v1/whoami`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct WhoAmI {
    /// The token's name (`user` with auth off), recorded as `by` on what it does.
    pub name: String,
    /// Its role (`admin` with auth off: every route is open).
    pub role: Role,
    /// `on` or `off`.
    pub auth: &'static str,
    /// Every route the role may call, in the table's order.
    pub allowed: Vec<Allowed>,
}

/// The routes of `routes` `role` may call, in the table's order.
pub fn allowed(routes: &[Route], role: Role) -> Vec<Allowed> {
    routes
        .iter()
        .filter(|r| role.grants(r.need))
        .map(|r| Allowed {
            method: r.method,
            pattern: r.pattern,
            action: r.action,
        })
        .collect()
}

/// What the caller is and may do among `routes`.
pub fn describe(routes: &[Route], caller: &Caller, mode: AuthMode) -> WhoAmI {
    let (name, role) = match caller {
        Caller::Token(t) => (t.name.clone(), t.role),
        Caller::Anonymous => (caller.actor().to_string(), Role::Admin),
    };
    WhoAmI {
        name,
        role,
        auth: mode.name(),
        allowed: allowed(routes, role),
    }
}

async fn whoami(
    caller: Caller,
    mode: Option<web::Data<AuthMode>>,
    routes: web::Data<Routes>,
) -> HttpResponse {
    let mode = mode.map_or(AuthMode::Off, |m| *m.get_ref());
    HttpResponse::Ok().json(describe(routes.0, &caller, mode))
}

#[cfg(test)]
#[path = "whoami_test.rs"]
mod tests;
