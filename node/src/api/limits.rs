//! The fleet-wide limits (issue 24 §3, DEPLOYMENTS.md §16): `GET /v1/cluster/limits` shows the limits in
//! force (replicated), what counts against them now and this server's own config; `PUT` sets them for the
//! whole cluster (from then on no server's config changes them). [`spawn`] proposes this server's config
//! (`max_concurrent_downloads`, `max_concurrent_installs`) when it leads, the replicated limits differ from
//! it and no one set them by the API: the config is the startup value, and with servers whose configs
//! disagree the last leader's applies, which the answer shows (`config_differs`) and the leader logs.

use std::time::Duration;

use actix_web::{web, HttpRequest, HttpResponse};
use convoy_actors::domain::limits::{FleetLimitsView, LimitsAnswer};
use convoy_actors::domain::Permission::{Admin, Read};
use convoy_actors::domain::{Command, FleetLimits, LimitSource};
use openraft::async_runtime::WatchReceiver;
use openraft::ServerState;

use super::error::ApiError;
use super::read::Consistency;
use super::route::Route;
use crate::replica::Replica;

/// The limits' route.
const LIMITS: &str = "/v1/cluster/limits";

/// This server's configured limits (app data; absent: none configured).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConfiguredLimits(pub FleetLimits);

/// This module's routes.
pub fn routes() -> Vec<Route> {
    vec![
        Route::get(LIMITS, Read, "read the fleet-wide limits")
            .summary("The fleet-wide limits on installs and downloads at once")
            .to(show)
            .query::<Consistency>()
            .json::<LimitsAnswer>(
                200,
                "The limits in force, their use and this server's config.",
            )
            .errors(&[400]),
        Route::put(LIMITS, Admin, "change the fleet-wide limits")
            .summary("Set the fleet-wide limits (over every server's config)")
            .to(put)
            .body::<FleetLimits>()
            .json::<LimitsAnswer>(200, "The limits in force after the change.")
            .errors(&[400]),
    ]
}

fn configured(req: &HttpRequest) -> FleetLimits {
    req.app_data::<web::Data<ConfiguredLimits>>()
        .map(|c| c.0)
        .unwrap_or_default()
}

fn answer(in_force: FleetLimitsView, config: FleetLimits) -> LimitsAnswer {
    LimitsAnswer::new(in_force, config)
}

async fn show(
    req: HttpRequest,
    replica: web::Data<Replica>,
    q: web::Query<Consistency>,
) -> Result<HttpResponse, ApiError> {
    let view = replica
        .read(q.consistent, |s| s.fleet_limits_view())
        .await?;
    Ok(HttpResponse::Ok().json(answer(view, configured(&req))))
}

async fn put(
    req: HttpRequest,
    replica: web::Data<Replica>,
    body: web::Json<FleetLimits>,
) -> Result<HttpResponse, ApiError> {
    replica
        .propose(Command::SetFleetLimits {
            limits: body.into_inner(),
            source: LimitSource::Api,
        })
        .await?;
    let view = replica.read_written(|s| s.fleet_limits_view()).await?;
    Ok(HttpResponse::Ok().json(answer(view, configured(&req))))
}

/// What a leader with `config` should propose, given the replicated setting: its config, unless the API set
/// the limits or they already are its config.
pub fn to_propose(
    config: FleetLimits,
    replicated: Option<convoy_actors::domain::FleetSetting>,
) -> Option<FleetLimits> {
    match replicated {
        Some(s) if s.source == LimitSource::Api => None,
        Some(s) if s.limits == config => None,
        None if config.is_off() => None,
        _ => Some(config),
    }
}

/// Watches leadership on the raft runtime `rt`; while this server leads, proposes its configured limits
/// when [`to_propose`] says so (once per election: apply ignores a config proposal once the API set them).
pub fn spawn(replica: Replica, rt: &tokio::runtime::Handle, config: FleetLimits) {
    let mut metrics = replica.node().metrics();
    rt.spawn(async move {
        loop {
            let leading = metrics.borrow_and_update().state == ServerState::Leader;
            if leading {
                let replicated = replica.node().read(|m| m.state().fleet_setting());
                if let Some(s) = replicated.filter(|s| s.source == LimitSource::Api) {
                    if s.limits != config {
                        tracing::warn!(
                            in_force = ?s.limits,
                            config = ?config,
                            "the fleet-wide limits were set by the API and differ from this server's config; the API's apply"
                        );
                    }
                }
                if let Some(limits) = to_propose(config, replicated) {
                    let cmd = Command::SetFleetLimits {
                        limits,
                        source: LimitSource::Config,
                    };
                    match replica.propose(cmd).await {
                        Ok(_) => tracing::info!(?limits, "fleet-wide limits proposed from this server's config"),
                        Err(e) => {
                            tracing::warn!(error = %e, "cannot propose the configured fleet-wide limits yet; retrying");
                            tokio::time::sleep(Duration::from_millis(500)).await;
                            continue;
                        }
                    }
                }
            }
            if metrics.changed().await.is_err() {
                break;
            }
        }
    });
}

#[cfg(test)]
#[path = "limits_test.rs"]
mod tests;
