//! The middleware that counts every HTTP request by method, route pattern and status, and times it.
//! Routes are named by their pattern in the route table (`/v1/deployments/{id}`), never by the raw
//! path, so a scan of random paths adds one series (`route="unmatched"`), not one per path.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;

use crate::api::auth::table;
use crate::api::route::{Route, Routes};

/// The label for a request's route: its pattern in the route table `routes`, or `unmatched`.
pub fn route_label(routes: &[Route], method: &str, path: &str) -> &'static str {
    table::lookup(routes, method, path).map_or("unmatched", |r| r.pattern)
}

/// The method as a label: one of the methods the API serves, else `other`.
pub fn method_label(method: &str) -> &'static str {
    match method {
        "GET" => "GET",
        "POST" => "POST",
        "PUT" => "PUT",
        "PATCH" => "PATCH",
        "DELETE" => "DELETE",
        "HEAD" => "HEAD",
        _ => "other",
    }
}

/// Wrap the App with `actix_web::middleware::from_fn(metrics::http::record)`, outermost, so refusals
/// (401, 403, 404, 415) are counted too.
pub async fn record<B: MessageBody + 'static>(
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<B>, actix_web::Error> {
    let started = Instant::now();
    let method = method_label(req.method().as_str());
    let route = route_label(Routes::of(req.request()), req.method().as_str(), req.path());
    let answer = next.call(req).await;
    let status = match &answer {
        Ok(res) => res.status().as_u16(),
        Err(e) => e.as_response_error().status_code().as_u16(),
    };
    let m = super::metrics();
    m.http_requests
        .with_label_values(&[method, route, status_label(status)])
        .inc();
    m.http_latency
        .with_label_values(&[method, route])
        .observe(started.elapsed().as_secs_f64());
    if status == 503 {
        m.unavailable.with_label_values(&[route]).inc();
    }
    answer
}

/// A status code as a label without allocating for the common ones.
fn status_label(status: u16) -> &'static str {
    match status {
        200 => "200",
        201 => "201",
        204 => "204",
        400 => "400",
        401 => "401",
        403 => "403",
        404 => "404",
        405 => "405",
        408 => "408",
        409 => "409",
        413 => "413",
        415 => "415",
        429 => "429",
        500 => "500",
        503 => "503",
        s if s < 300 => "2xx",
        s if s < 400 => "3xx",
        s if s < 500 => "4xx",
        _ => "5xx",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::routes;

    #[test]
    fn routes_are_labelled_by_pattern_and_unknown_paths_share_one_label() {
        assert_eq!(
            route_label(routes(), "GET", "/v1/deployments/d-17"),
            "/v1/deployments/{id}"
        );
        assert_eq!(
            route_label(routes(), "POST", "/v1/deployments/d-3/pulse"),
            "/v1/deployments/{id}/pulse"
        );
        assert_eq!(route_label(routes(), "GET", "/metrics"), "/metrics");
        assert_eq!(route_label(routes(), "GET", "/wp-admin/x.php"), "unmatched");
        assert_eq!(
            route_label(routes(), "GET", "/v1/deployments/a/b/c/d"),
            "unmatched"
        );
        assert_eq!(method_label("BREW"), "other");
        assert_eq!(status_label(418), "4xx");
    }
}
