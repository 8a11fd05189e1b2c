//! Cluster endpoints: `GET /v1/cluster`, membership changes, the state digest, `/healthz` and `/readyz`.

use actix_web::{web, HttpResponse};
use convoy_raft::Member;
use serde::Deserialize;

use convoy_actors::domain::Permission::{Admin, Public, Read};

use super::auth::AuthMode;
use super::error::ApiError;
use super::openapi::answers::{ClusterAnswer, DigestAnswer, StatusAnswer};
use super::route::Route;
use crate::membership::MembershipAnswer;
use crate::replica::Replica;

/// This module's routes.
pub fn routes() -> Vec<Route> {
    vec![
        Route::get("/healthz", Public, "check liveness")
            .summary("Liveness")
            .to(healthz)
            .json::<StatusAnswer>(200, "The process serves HTTP."),
        Route::get("/readyz", Public, "check readiness")
            .summary("Readiness")
            .to(readyz)
            .json::<StatusAnswer>(200, "A member with a leader, caught up."),
        Route::get("/v1/cluster", Read, "read the cluster")
            .summary("The cluster as this server sees it")
            .to(cluster)
            .json::<ClusterAnswer>(200, "Members, leader, term, auth mode, version."),
        Route::get("/v1/cluster/digest", Read, "read the state digest")
            .summary("Digest of the applied state")
            .to(digest)
            .json::<DigestAnswer>(200, "sha256 of the snapshot bytes at an index."),
        Route::get(
            "/v1/cluster/membership/{id}",
            Public,
            "ask whether a server is a member",
        )
        .summary("Whether a server id is a member")
        .numbers(&["id"])
        .to(membership)
        .json::<MembershipAnswer>(200, "The answer.")
        .errors(&[400]),
        Route::post("/v1/cluster/members", Admin, "add cluster members")
            .summary("Add a server")
            .to(add_member)
            .body::<AddMember>()
            .json::<ClusterAnswer>(200, "The cluster after the change.")
            .errors(&[400]),
        Route::delete("/v1/cluster/members/{id}", Admin, "remove cluster members")
            .summary("Remove a server")
            .numbers(&["id"])
            .to(remove_member)
            .json::<ClusterAnswer>(200, "The cluster after the change.")
            .errors(&[400]),
        Route::post(
            "/v1/cluster/members/{id}/replace",
            Admin,
            "replace cluster members",
        )
        .summary("Replace a server whose data dir was lost")
        .numbers(&["id"])
        .to(replace_member)
        .json::<ClusterAnswer>(200, "The cluster after the change.")
        .errors(&[400]),
    ]
}

/// The cluster, and whether this server checks tokens (`"auth": "on"` or `"off"`).
async fn cluster(replica: web::Data<Replica>, mode: Option<web::Data<AuthMode>>) -> HttpResponse {
    let mut info = serde_json::to_value(replica.cluster_info()).unwrap_or_default();
    let mode = mode.map_or(AuthMode::Off, |m| *m.get_ref());
    if let Some(fields) = info.as_object_mut() {
        fields.insert("auth".into(), mode.name().into());
        fields.insert("version".into(), crate::VERSION.into());
    }
    HttpResponse::Ok().json(info)
}

/// `POST /v1/cluster/members` body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AddMember {
    id: u64,
    raft_addr: String,
    http_addr: String,
}

async fn add_member(
    replica: web::Data<Replica>,
    body: web::Json<AddMember>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    if body.id == 0 {
        return Err(ApiError::BadRequest(
            "member id 0 is invalid: ids start at 1".into(),
        ));
    }
    let member = Member {
        raft_addr: body.raft_addr,
        http_addr: body.http_addr,
    };
    replica.add_member(body.id, member).await?;
    Ok(HttpResponse::Ok().json(replica.cluster_info()))
}

async fn remove_member(
    replica: web::Data<Replica>,
    id: web::Path<u64>,
) -> Result<HttpResponse, ApiError> {
    replica.remove_member(id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(replica.cluster_info()))
}

/// Replaces a member whose data dir was lost: removed, then added back at the same addresses as a
/// learner and promoted once caught up (the server runs on its new data dir as `existing`).
async fn replace_member(
    replica: web::Data<Replica>,
    id: web::Path<u64>,
) -> Result<HttpResponse, ApiError> {
    replica.replace_member(id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(replica.cluster_info()))
}

/// The sha256 of this server's applied state (its snapshot bytes) and the index it reflects: two
/// servers at the same index must agree, which is how the chaos checker compares replicas.
async fn digest(replica: web::Data<Replica>) -> HttpResponse {
    use sha2::Digest;
    let (index, bytes) = replica
        .node()
        .applied()
        .read_at(|m| m.state().snapshot_bytes());
    let sha = hex::encode(sha2::Sha256::digest(&bytes));
    HttpResponse::Ok().json(DigestAnswer {
        id: replica.node().id(),
        last_applied: index,
        sha256: sha,
        bytes: bytes.len() as u64,
    })
}

/// Whether a server id is a member, as this server sees it: what a removed server asks the leader
/// (see `crate::membership`).
async fn membership(replica: web::Data<Replica>, id: web::Path<u64>) -> HttpResponse {
    HttpResponse::Ok().json(replica.membership_of(id.into_inner()))
}

async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(StatusAnswer { status: "ok" })
}

async fn readyz(replica: web::Data<Replica>) -> HttpResponse {
    match replica.readiness() {
        Ok(()) => HttpResponse::Ok().json(StatusAnswer { status: "ready" }),
        Err(reason) => HttpResponse::ServiceUnavailable().json(serde_json::json!({
            "error": {"code": reason.code(), "message": reason.to_string()}
        })),
    }
}
