//! Every operation of the API: the handler's query, body and answer types, per route of the role table.
//! A new route adds one entry here (the test beside mod.rs fails until every row of the table has one).

use convoy_actors::domain::{
    ConsumerView, DeploymentPlan, DeploymentSummary, DeploymentView, GroupDeploymentView,
    GroupView, NodeHistory, NodePhase, ResourceView, StatusFilter, SummaryView, TokenView,
};

use utoipa::openapi::schema::{ObjectBuilder, Type};

use super::answers::*;
use super::Spec;
use crate::api::{
    cluster, consumers, deployments, groups, nodes, read::Consistency, reports, resources, tokens,
    ui, whoami,
};
use crate::membership::MembershipAnswer;

const SSE: Option<&str> = Some("text/event-stream");

/// Adds every operation to `spec`.
pub fn describe(spec: &mut Spec) {
    basics(spec);
    cluster_ops(spec);
    resource_ops(spec);
    consumer_ops(spec);
    node_ops(spec);
    deployment_ops(spec);
    group_ops(spec);
    // Query parameters refer to these by name (their `IntoParams` derives do not register them).
    spec.schema::<StatusFilter>();
    spec.schema::<NodePhase>();
}

fn basics(spec: &mut Spec) {
    spec.op("GET", "/healthz", "Liveness")
        .json::<StatusAnswer>(200, "The process serves HTTP.")
        .errors(&[]);
    spec.op("GET", "/readyz", "Readiness")
        .json::<StatusAnswer>(200, "A member with a leader, caught up.")
        .errors(&[]);
    spec.op("GET", "/", "Redirect to the dashboard")
        .text(302, "Location: /ui/", None)
        .errors(&[]);
    for asset in ui::ASSETS {
        let what = if asset.path.starts_with("/docs") {
            "The API docs page"
        } else {
            "The dashboard"
        };
        spec.op("GET", asset.path, what)
            .text(200, "The embedded file.", Some(asset.content_type))
            .errors(&[]);
    }
    spec.op("GET", "/openapi.json", "This document")
        .answers(
            200,
            "The OpenAPI 3.1 document.",
            ObjectBuilder::new().schema_type(Type::Object).into(),
        )
        .errors(&[]);
    spec.op("GET", "/v1/whoami", "The caller's token and what it may do")
        .json::<whoami::WhoAmI>(200, "Name, role and allowed routes.")
        .errors(&[]);
    spec.op("GET", "/v1/watch", "Change feed of the whole cluster (SSE)")
        .text(
            200,
            "Server-sent events as this server's applied index moves.",
            SSE,
        )
        .errors(&[]);
    spec.op("GET", "/metrics", "Prometheus metrics")
        .text(
            200,
            "Prometheus text format.",
            Some("text/plain; version=0.0.4"),
        )
        .errors(&[]);
    spec.op(
        "POST",
        "/v1/debug/faults",
        "Inject transport faults (servers started with faults on)",
    )
    .json::<StatusAnswer>(200, "Applied.")
    .errors(&[400, 404]);
}

fn cluster_ops(spec: &mut Spec) {
    spec.op("GET", "/v1/cluster", "The cluster as this server sees it")
        .json::<ClusterAnswer>(200, "Members, leader, term, auth mode, version.")
        .errors(&[]);
    spec.op("GET", "/v1/cluster/digest", "Digest of the applied state")
        .json::<DigestAnswer>(200, "sha256 of the snapshot bytes at an index.")
        .errors(&[]);
    spec.op(
        "GET",
        "/v1/cluster/membership/{id}",
        "Whether a server id is a member",
    )
    .json::<MembershipAnswer>(200, "The answer.")
    .errors(&[400]);
    spec.op("POST", "/v1/cluster/members", "Add a server")
        .body::<cluster::AddMember>()
        .json::<ClusterAnswer>(200, "The cluster after the change.")
        .errors(&[400]);
    spec.op("DELETE", "/v1/cluster/members/{id}", "Remove a server")
        .json::<ClusterAnswer>(200, "The cluster after the change.")
        .errors(&[400]);
    spec.op(
        "POST",
        "/v1/cluster/members/{id}/replace",
        "Replace a server whose data dir was lost",
    )
    .json::<ClusterAnswer>(200, "The cluster after the change.")
    .errors(&[400]);
    spec.op("GET", "/v1/tokens", "List tokens (never their secrets)")
        .answers_list::<TokenView>(200, "Every token.")
        .errors(&[]);
    spec.op("POST", "/v1/tokens", "Create a token")
        .body::<tokens::CreateBody>()
        .json::<TokenCreated>(201, "The token and its secret, shown once.")
        .errors(&[400, 409]);
    spec.op("DELETE", "/v1/tokens/{name}", "Revoke a token")
        .json::<TokenView>(200, "The revoked token.")
        .errors(&[404]);
}

fn resource_ops(spec: &mut Spec) {
    spec.op("POST", "/v1/resources", "Create a resource")
        .body::<resources::CreateResource>()
        .json::<ResourceView>(201, "The resource.")
        .errors(&[400, 409]);
    spec.op("GET", "/v1/resources", "List resources")
        .query::<Consistency>()
        .answers_list::<ResourceView>(200, "Every resource.")
        .errors(&[400]);
    spec.op("GET", "/v1/resources/{name}", "Show a resource")
        .query::<Consistency>()
        .json::<ResourceView>(200, "The resource and its versions.")
        .errors(&[400, 404]);
    spec.op("POST", "/v1/resources/{name}/versions", "Publish a version")
        .body::<resources::PublishVersion>()
        .json::<VersionPublished>(201, "The new version.")
        .errors(&[400, 404, 409]);
    spec.op(
        "POST",
        "/v1/resources/{name}/versions/{version}/retract",
        "Retract a version",
    )
    .body::<resources::RetractBody>()
    .json::<ResourceView>(200, "The resource.")
    .errors(&[400, 404, 409]);
    spec.op(
        "POST",
        "/v1/resources/{name}/versions/{version}/unretract",
        "Unretract a version",
    )
    .json::<ResourceView>(200, "The resource.")
    .errors(&[400, 404, 409]);
}

fn consumer_ops(spec: &mut Spec) {
    spec.op("POST", "/v1/consumers", "Create a consumer")
        .body::<consumers::CreateConsumer>()
        .json::<ConsumerView>(201, "The consumer.")
        .errors(&[400, 409]);
    spec.op("GET", "/v1/consumers", "List consumers")
        .query::<Consistency>()
        .answers_list::<ConsumerView>(200, "Every consumer.")
        .errors(&[400]);
    spec.op("GET", "/v1/consumers/{name}", "Show a consumer")
        .query::<Consistency>()
        .json::<ConsumerView>(200, "The consumer.")
        .errors(&[400, 404]);
    spec.op("PUT", "/v1/consumers/{name}/nodes", "Add and remove nodes")
        .body::<consumers::UpdateNodes>()
        .json::<ConsumerView>(200, "The consumer.")
        .errors(&[400, 404, 409]);
    spec.op(
        "PUT",
        "/v1/consumers/{name}/subscriptions/{resource}",
        "Subscribe (whole policy)",
    )
    .body::<consumers::Subscribe>()
    .json::<ConsumerView>(200, "The consumer.")
    .errors(&[400, 404, 409]);
    spec.op(
        "PATCH",
        "/v1/consumers/{name}/subscriptions/{resource}",
        "Change a subscription's policy",
    )
    .body::<consumers::PatchSubscription>()
    .json::<ConsumerView>(200, "The consumer.")
    .errors(&[400, 404, 409]);
    spec.op(
        "DELETE",
        "/v1/consumers/{name}/subscriptions/{resource}",
        "Unsubscribe",
    )
    .json::<ConsumerView>(200, "The consumer.")
    .errors(&[400, 404, 409]);
    spec.op(
        "DELETE",
        "/v1/consumers/{name}/holds/{resource}/{version}",
        "Clear a held-back version",
    )
    .json::<ConsumerView>(200, "The consumer.")
    .errors(&[400, 404, 409]);
    spec.op("DELETE", "/v1/consumers/{name}", "Delete a consumer")
        .json::<ConsumerView>(200, "The consumer as it was.")
        .errors(&[400, 404, 409]);
}

fn node_ops(spec: &mut Spec) {
    spec.op(
        "POST",
        "/v1/nodes/{id}/report",
        "A node's report; answers its targets",
    )
    .body::<nodes::ReportBody>()
    .json::<TargetsAnswer>(200, "What the node should do per resource.")
    .errors(&[400]);
    spec.op(
        "POST",
        "/v1/nodes/reports",
        "Many nodes' reports in one request",
    )
    .body::<reports::BatchBody>()
    .json::<reports::BatchAnswer>(200, "Each node's targets; the reports not taken, with why.")
    .errors(&[400]);
    spec.op("GET", "/v1/nodes", "A page of nodes")
        .query::<nodes::ListQuery>()
        .json::<NodeListAnswer>(200, "Versions, phases and last report age per node.")
        .errors(&[400]);
    spec.op("GET", "/v1/nodes/{id}", "Show a node")
        .query::<Consistency>()
        .json::<NodeAnswer>(200, "The node.")
        .errors(&[400, 404]);
}

fn deployment_ops(spec: &mut Spec) {
    spec.op(
        "POST",
        "/v1/deployments",
        "Start a deployment (or plan it with dry_run)",
    )
    .query::<deployments::DryRun>()
    .body::<deployments::StartBody>()
    .json::<DeploymentStarted>(201, "Started.")
    .json::<DeploymentPlan>(200, "`?dry_run=true`: the plan; nothing changed.")
    .errors(&[400, 404, 409]);
    spec.op("GET", "/v1/deployments", "List deployments")
        .query::<deployments::ListQuery>()
        .answers_list::<DeploymentSummary>(200, "One summary line per deployment.")
        .errors(&[400]);
    spec.op(
        "GET",
        "/v1/deployments/{id}",
        "Show a deployment (optionally a page of its nodes)",
    )
    .query::<deployments::ShowQuery>()
    .json::<DeploymentView>(
        200,
        "The deployment; with a page asked, `nodes` is that page and `page` says where it is.",
    )
    .errors(&[400, 404]);
    spec.op(
        "GET",
        "/v1/deployments/{id}/summary",
        "A deployment's summary",
    )
    .query::<Consistency>()
    .json::<SummaryView>(
        200,
        "Counts per state, windows, pulse countdown, failing nodes, last events.",
    )
    .errors(&[400, 404]);
    spec.op(
        "GET",
        "/v1/deployments/{id}/watch",
        "A deployment's changes (SSE)",
    )
    .text(200, "Server-sent events as the deployment changes.", SSE)
    .errors(&[404]);
    spec.op(
        "GET",
        "/v1/deployments/{id}/nodes/{node}",
        "Why: every decision about one node",
    )
    .query::<Consistency>()
    .json::<NodeHistory>(200, "The node's decisions with their reasons.")
    .errors(&[400, 404]);
    spec.op("POST", "/v1/deployments/{id}/pulse", "Pulse a deployment")
        .json::<PulseReply>(200, "OK to keep pulsing, STOP to stop.")
        .errors(&[409]);
    spec.op(
        "POST",
        "/v1/deployments/{id}/{action}",
        "pause, resume, abort or rollback",
    )
    .body::<deployments::ActionBody>()
    .json::<DeploymentView>(200, "The deployment.")
    .errors(&[400, 404, 409]);
}

fn group_ops(spec: &mut Spec) {
    spec.op("POST", "/v1/groups", "Create a group")
        .body::<groups::CreateGroup>()
        .json::<GroupView>(201, "The group.")
        .errors(&[400, 404, 409]);
    spec.op("GET", "/v1/groups", "List groups")
        .query::<Consistency>()
        .answers_list::<GroupView>(200, "Every group.")
        .errors(&[400]);
    spec.op("GET", "/v1/groups/{name}", "Show a group")
        .query::<Consistency>()
        .json::<GroupView>(200, "The group.")
        .errors(&[400, 404]);
    spec.op("DELETE", "/v1/groups/{name}", "Delete a group")
        .json::<GroupView>(200, "The group as it was.")
        .errors(&[404, 409]);
    spec.op(
        "POST",
        "/v1/group-deployments",
        "Start a group deployment (or plan it with dry_run)",
    )
    .query::<deployments::DryRun>()
    .body::<groups::StartGroup>()
    .json::<GroupDeploymentStarted>(201, "Started.")
    .json::<GroupPlan>(200, "`?dry_run=true`: the plan; nothing changed.")
    .errors(&[400, 404, 409]);
    spec.op("GET", "/v1/group-deployments", "List group deployments")
        .query::<Consistency>()
        .answers_list::<GroupDeploymentView>(200, "Every group deployment.")
        .errors(&[400]);
    spec.op(
        "GET",
        "/v1/group-deployments/{id}",
        "Show a group deployment",
    )
    .query::<Consistency>()
    .json::<GroupDeploymentView>(200, "The group deployment.")
    .errors(&[400, 404]);
    spec.op(
        "POST",
        "/v1/group-deployments/{id}/abort",
        "Abort a group deployment",
    )
    .json::<GroupDeploymentView>(200, "The group deployment.")
    .errors(&[404, 409]);
}
