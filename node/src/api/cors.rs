//! CORS for the dashboard's failover: a page loaded from one member may call the API of the others. Only
//! the `http://` or `https://` origin of a current member's `http_addr` is allowed; credentials (cookies) are
//! never allowed, the token travels in the `Authorization` header. Any other origin gets no CORS header, and
//! its preflight is refused, so a foreign page still cannot send JSON writes (see `auth::check_content_type`).

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::{web, HttpResponse, ResponseError};

use super::error::ApiError;
use crate::replica::Replica;

/// Methods a member's page may use.
pub const ALLOW_METHODS: &str = "GET, POST, PUT, PATCH, DELETE";
/// Request headers a member's page may send.
pub const ALLOW_HEADERS: &str = "authorization, content-type";
/// How long a browser may cache a preflight answer, in seconds.
pub const MAX_AGE_SECS: u32 = 600;

/// Whether `origin` (`scheme://host:port`) is the origin of one of the members' `http_addr`s.
pub fn is_member_origin<'a>(origin: &str, members: impl IntoIterator<Item = &'a str>) -> bool {
    let Some(authority) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    !authority.is_empty()
        && members
            .into_iter()
            .any(|addr| addr.eq_ignore_ascii_case(authority))
}

/// The middleware (wrap the App with `actix_web::middleware::from_fn(cors::cors)`, outside `auth::check`):
/// answers preflights itself and adds `Access-Control-Allow-Origin` for member origins.
pub async fn cors<B: MessageBody + 'static>(
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, actix_web::Error> {
    let origin = req.headers().get(header::ORIGIN).cloned();
    let allowed = origin.as_ref().is_some_and(|o| member_origin(&req, o));
    let preflight = req.method() == Method::OPTIONS
        && req
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    if preflight {
        let response = match (&origin, allowed) {
            (Some(origin), true) => HttpResponse::NoContent()
                .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone()))
                .insert_header((header::ACCESS_CONTROL_ALLOW_METHODS, ALLOW_METHODS))
                .insert_header((header::ACCESS_CONTROL_ALLOW_HEADERS, ALLOW_HEADERS))
                .insert_header((header::ACCESS_CONTROL_MAX_AGE, MAX_AGE_SECS.to_string()))
                .insert_header((header::VARY, "Origin"))
                .finish(),
            _ => ApiError::Forbidden(
                "cross-origin requests are allowed only from the cluster's own members".into(),
            )
            .error_response(),
        };
        return Ok(req.into_response(response).map_into_right_body());
    }
    let mut response = next.call(req).await?.map_into_left_body();
    if let (Some(origin), true) = (origin, allowed) {
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(header::VARY, HeaderValue::from_static("Origin"));
    }
    Ok(response)
}

/// Whether the request's `Origin` is a member's, as this server's applied membership says.
fn member_origin(req: &ServiceRequest, origin: &HeaderValue) -> bool {
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let Some(replica) = req.app_data::<web::Data<Replica>>() else {
        return false;
    };
    let info = replica.cluster_info();
    is_member_origin(origin, info.members.iter().map(|m| m.http_addr.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_members_http_origins_are_allowed() {
        let members = ["127.0.0.1:7001", "127.0.0.1:7002"];
        assert!(is_member_origin("http://127.0.0.1:7001", members));
        assert!(is_member_origin("https://127.0.0.1:7002", members));
        for refused in [
            "http://127.0.0.1:7003",
            "http://127.0.0.1:70011",
            "http://evil.example",
            "null",
            "http://",
            "file://127.0.0.1:7001",
            "http://127.0.0.1:7001/",
            "http://user@127.0.0.1:7001",
        ] {
            assert!(!is_member_origin(refused, members), "{refused}");
        }
    }
}
