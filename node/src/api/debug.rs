//! Test-only fault injection: `POST /v1/debug/faults` sets this server's outgoing transport
//! faults (blocked peers, drops, duplicates, delays). Served only with `enable_fault_injection = true`.

use std::collections::BTreeMap;
use std::time::Duration;

use actix_web::{web, HttpResponse};
use convoy_actors::domain::Permission::Admin;
use convoy_raft::network::fault::FaultRule;
use serde::Deserialize;

use super::error::ApiError;
use super::openapi::answers::StatusAnswer;
use super::route::Route;
use crate::replica::Replica;

/// The one route of this module, registered only on a server started with faults on.
pub const FAULTS: &str = "/v1/debug/faults";

/// This module's route.
pub fn routes() -> Vec<Route> {
    vec![Route::post(FAULTS, Admin, "inject faults")
        .summary("Inject transport faults (servers started with faults on)")
        .to(set_faults)
        .json::<StatusAnswer>(200, "Applied.")
        .errors(&[400, 404])]
}

/// A lossy, repetitive or slow link to one peer.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Link {
    #[serde(default)]
    drop_probability: f64,
    #[serde(default)]
    duplicate_probability: f64,
    #[serde(default)]
    delay_ms: u64,
    #[serde(default)]
    jitter_ms: u64,
}

/// The whole fault policy of this server; it replaces the previous one.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Faults {
    /// Peers this server cannot send to (a one-way partition).
    #[serde(default)]
    blocked: Vec<u64>,
    /// Lossy or slow links by peer id.
    #[serde(default)]
    links: BTreeMap<u64, Link>,
}

/// Refuses probabilities outside `[0, 1]`, naming the link and the field.
fn validate(faults: &Faults) -> Result<(), ApiError> {
    for (peer, link) in &faults.links {
        for (field, p) in [
            ("drop_probability", link.drop_probability),
            ("duplicate_probability", link.duplicate_probability),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(ApiError::BadRequest(format!(
                    "links.{peer}.{field} = {p} is not in [0, 1]"
                )));
            }
        }
    }
    Ok(())
}

async fn set_faults(
    replica: web::Data<Replica>,
    body: web::Json<Faults>,
) -> Result<HttpResponse, ApiError> {
    let faults = body.into_inner();
    validate(&faults)?;
    let shared = replica.node().network().fault_policy();
    let mut policy = shared
        .write()
        .map_err(|_| ApiError::Internal("fault policy lock poisoned".into()))?;
    policy.clear_all();
    for (peer, link) in faults.links {
        policy.set(
            peer,
            FaultRule {
                blocked: false,
                drop_probability: link.drop_probability,
                duplicate_probability: link.duplicate_probability,
                delay: Duration::from_millis(link.delay_ms),
                jitter: Duration::from_millis(link.jitter_ms),
            },
        );
    }
    for peer in faults.blocked {
        policy.block(peer);
    }
    tracing::warn!(policy = ?*policy, "fault injection policy changed");
    Ok(HttpResponse::Ok().json(StatusAnswer { status: "ok" }))
}

#[cfg(test)]
#[path = "debug_test.rs"]
mod tests;
