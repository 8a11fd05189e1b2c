//! DNS rebinding: a web page whose name an attacker points at this server's address makes the browser send
//! its requests here with `Host: <the attacker's name>`. So the `Host` of every request but `/healthz` and
//! `/readyz` must be one of this server's names: an IP literal (a rebinding page always uses a name, so an
//! address cannot be one), `localhost`, the host of this server's or a member's `http_addr`, or an
//! `allowed_hosts` entry (the names proxies and DNS give the cluster). Anything else is 403, auth on or off.

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::HOST;
use actix_web::middleware::Next;
use actix_web::{web, ResponseError};
use convoy_actors::domain::Permission;

use super::auth::table;
use super::error::ApiError;
use super::route::Routes;
use crate::replica::Replica;

/// Longest `allowed_hosts` entry (a DNS name with a port).
pub const MAX_HOST: usize = 260;

/// The names this server answers to besides IP literals, `localhost` and the members' `http_addr`s.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostPolicy {
    /// This server's `http_addr` (`host:port`).
    pub own: String,
    /// `allowed_hosts`: `name` (any port) or `name:port`, lower-case.
    pub allowed: Vec<String>,
}

/// A `Host` value split into its name and port: `example.com:80` → (`example.com`, `Some("80")`),
/// `[::1]:7700` → (`[::1]`, `Some("7700")`).
fn split(host: &str) -> (&str, Option<&str>) {
    if host.starts_with('[') {
        return match host.find(']') {
            Some(end) => {
                let port = host[end + 1..].strip_prefix(':');
                (&host[..=end], port)
            }
            None => (host, None),
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    }
}

/// Whether `name` (a `Host`'s name part) is an IPv4 or a bracketed IPv6 literal.
fn is_ip_literal(name: &str) -> bool {
    let bare = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(name);
    bare.parse::<std::net::IpAddr>().is_ok()
}

impl HostPolicy {
    /// Whether a request with `Host: host` is for this server; `members` are the members' `http_addr`s.
    pub fn accepts<'a>(&self, host: &str, members: impl IntoIterator<Item = &'a str>) -> bool {
        let host = host.trim().to_ascii_lowercase();
        let (name, port) = split(&host);
        if name.is_empty() || port.is_some_and(|p| p.parse::<u16>().is_err()) {
            return false;
        }
        if is_ip_literal(name) || name == "localhost" {
            return true;
        }
        let same_name = |addr: &str| split(addr).0.eq_ignore_ascii_case(name);
        if same_name(&self.own) || members.into_iter().any(same_name) {
            return true;
        }
        self.allowed.iter().any(|entry| match split(entry) {
            (allowed, None) => allowed == name,
            (_, Some(_)) => *entry == host,
        })
    }
}

/// An `allowed_hosts` entry, checked and lower-cased: a name, optionally with a port.
pub fn check_entry(entry: &str) -> Result<String, String> {
    let lower = entry.trim().to_ascii_lowercase();
    let (name, port) = split(&lower);
    let name_ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '[' | ']' | ':'));
    if lower.len() > MAX_HOST || !name_ok || port.is_some_and(|p| p.parse::<u16>().is_err()) {
        return Err(format!(
            "expected a host name, optionally with :port (at most {MAX_HOST} characters)"
        ));
    }
    Ok(lower)
}

/// The middleware (wrap the App with `actix_web::middleware::from_fn(host::check)`, outside
/// `auth::check`): 403 for a `Host` that is not this server's, before anything else looks at the request.
pub async fn check<B: MessageBody + 'static>(
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, actix_web::Error> {
    match refusal(&req) {
        None => Ok(next.call(req).await?.map_into_left_body()),
        Some(refused) => {
            let response = refused.error_response();
            Ok(req.into_response(response).map_into_right_body())
        }
    }
}

/// Why the request's `Host` is refused, if it is.
fn refusal(req: &ServiceRequest) -> Option<ApiError> {
    let policy = req.app_data::<web::Data<HostPolicy>>()?;
    let routes = Routes::of(req.request());
    let public = table::lookup(routes, req.method().as_str(), req.match_info().as_str())
        .is_some_and(|rule| rule.need == Permission::Public);
    // HTTP/1.0 may omit Host; browsers never do.
    let host = req.headers().get(HOST)?;
    if public {
        return None;
    }
    let text = host.to_str().unwrap_or("");
    let members = req
        .app_data::<web::Data<Replica>>()
        .map(|r| r.cluster_info().members)
        .unwrap_or_default();
    if policy.accepts(text, members.iter().map(|m| m.http_addr.as_str())) {
        return None;
    }
    let mut shown = text.len().min(100);
    while !text.is_char_boundary(shown) {
        shown -= 1;
    }
    Some(ApiError::Forbidden(format!(
        "Host {:?} is not a name of this server (an address, localhost, a member's http_addr or an \
         allowed_hosts entry): add it to allowed_hosts if a proxy or DNS name serves the cluster",
        &text[..shown]
    )))
}

#[cfg(test)]
#[path = "host_test.rs"]
mod tests;
