//! Carries out each client command against the API and prints the answer as a table or as JSON.

use convoy_actors::domain::{
    ConsumerView, DeploymentSummary, DeploymentView, GroupDeploymentView, GroupPlanItem, GroupView,
    ResourceView,
};
use reqwest::Method;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::args::{
    ClusterCommand, ConsumerCommand, DeployCommand, GroupCommand, Output, ResourceCommand,
    StartArgs, StatusArg,
};
use super::body::{self, encode, query};
use super::deploy_args::DeploymentRef;
use super::error::CliError;
use super::latest;
use super::output::{document, print_document};
use super::{deploy_file, explain, list, publish, render, watch};
use crate::client::{ApiClient, ClientError};
use crate::client_pages;

/// Prints `value` as JSON or YAML, or as the table `table` makes of its typed view (JSON if it does not
/// decode).
fn show<T: DeserializeOwned>(output: Output, value: &Value, table: impl Fn(&T) -> String) {
    out!("{}", shown(output, value, |v: &T, _| table(v)));
}

/// `value` as JSON or YAML, or as the table `table` makes of its typed view, with more columns for
/// `-o wide` (JSON if it does not decode).
fn shown<T: DeserializeOwned>(
    output: Output,
    value: &Value,
    table: impl Fn(&T, bool) -> String,
) -> String {
    match (output, serde_json::from_value::<T>(value.clone())) {
        (Output::Table | Output::Wide, Ok(view)) => table(&view, output == Output::Wide),
        _ => document(output, value),
    }
}

/// Prints `value` as JSON or YAML, or the one-line `message` for tables.
fn say(output: Output, value: &Value, message: impl FnOnce() -> String) {
    if output.is_table() {
        outln!("{}", message());
    } else {
        print_document(output, value);
    }
}

/// `convoy resource ...`.
pub async fn resource(
    client: &ApiClient,
    output: Output,
    command: ResourceCommand,
) -> Result<(), CliError> {
    match command {
        ResourceCommand::Create { name } => {
            let v: Value = client
                .post("/v1/resources", &json!({ "name": name }))
                .await?;
            say(output, &v, || format!("created resource {name}"));
        }
        ResourceCommand::Publish(args) => {
            let dry = if args.dry_run { "?dry_run=true" } else { "" };
            let path = format!("/v1/resources/{}/versions{dry}", encode(&args.name));
            let v: Value = client.post(&path, &body::publish(&args)).await?;
            say(output, &v, || publish::reach(&args.name, args.dry_run, &v));
        }
        ResourceCommand::List(args) => {
            let fetch = || async { Ok(list::all(client, "/v1/resources", "resources").await?) };
            let table = |v: &Value| {
                shown::<Vec<ResourceView>>(output, v, |l, wide| render::resources(l, wide))
            };
            return list::run(client, output, args, fetch, table).await;
        }
        ResourceCommand::Show { name } => {
            // Every version, however many pages they take.
            let path = format!("/v1/resources/{}", encode(&name));
            let v = client_pages::show(client, &path, "versions").await?;
            show(output, &v, render::resource);
        }
        ResourceCommand::Retract {
            name,
            version,
            message,
        } => {
            let path = format!("/v1/resources/{}/versions/{version}/retract", encode(&name));
            let v: Value = client.post(&path, &json!({ "message": message })).await?;
            say(output, &v, || format!("retracted {name} version {version}"));
        }
        ResourceCommand::Unretract { name, version } => {
            let path = format!(
                "/v1/resources/{}/versions/{version}/unretract",
                encode(&name)
            );
            let v: Value = client.post(&path, &json!({})).await?;
            say(output, &v, || {
                format!("unretracted {name} version {version}")
            });
        }
    }
    Ok(())
}

/// `convoy consumer ...`.
pub async fn consumer(
    client: &ApiClient,
    output: Output,
    command: ConsumerCommand,
) -> Result<(), CliError> {
    let v: Value = match command {
        ConsumerCommand::Create { name, nodes } => {
            client
                .post("/v1/consumers", &json!({ "name": name, "nodes": nodes }))
                .await?
        }
        ConsumerCommand::AddNodes {
            name,
            nodes,
            remove,
        } => {
            let body = body::update_nodes(&nodes, &remove)?;
            client
                .put(&format!("/v1/consumers/{}/nodes", encode(&name)), &body)
                .await?
        }
        ConsumerCommand::Subscribe(args) => {
            // An existing subscription is PATCHed (only the flags given change); a new one is PUT.
            // Every subscription, past the first 100 the show lists too.
            let current =
                client_pages::consumer_subscriptions(client, &encode(&args.consumer)).await?;
            let current: ConsumerView =
                serde_json::from_value(current).map_err(|e| ClientError::Decode {
                    server: client.servers().join(","),
                    path: format!("/v1/consumers/{}", encode(&args.consumer)),
                    reason: e.to_string(),
                })?;
            let existing = current.subscriptions.get(&args.resource);
            let body = body::subscribe(&args, existing)?;
            let path = format!(
                "/v1/consumers/{}/subscriptions/{}",
                encode(&args.consumer),
                encode(&args.resource)
            );
            let v: Value = match existing {
                Some(_) => client.call(Method::PATCH, &path, Some(&body)).await?,
                None => client.put(&path, &body).await?,
            };
            show(output, &v, |c: &ConsumerView| {
                render::subscription(c, &args.resource)
            });
            return Ok(());
        }
        ConsumerCommand::ClearHold {
            consumer,
            resource,
            version,
        } => {
            let path = format!(
                "/v1/consumers/{}/holds/{}/{version}",
                encode(&consumer),
                encode(&resource)
            );
            client.delete(&path).await?
        }
        ConsumerCommand::Unsubscribe { consumer, resource } => {
            let path = format!(
                "/v1/consumers/{}/subscriptions/{}",
                encode(&consumer),
                encode(&resource)
            );
            client.delete(&path).await?
        }
        ConsumerCommand::Delete { name } => {
            let v: Value = client
                .delete(&format!("/v1/consumers/{}", encode(&name)))
                .await?;
            say(output, &v, || format!("deleted consumer {name}"));
            return Ok(());
        }
        ConsumerCommand::Show { name } => {
            return super::fleet::consumer_show(client, output, &name).await
        }
        ConsumerCommand::Budget(args) => return super::budget::run(client, output, args).await,
        ConsumerCommand::List(args) => {
            let fetch = || async { Ok(list::all(client, "/v1/consumers", "consumers").await?) };
            let table = |v: &Value| {
                shown::<Vec<ConsumerView>>(output, v, |l, wide| render::consumers(l, wide))
            };
            return list::run(client, output, args, fetch, table).await;
        }
    };
    show(output, &v, render::consumer);
    Ok(())
}

/// `convoy deploy ...`.
pub async fn deploy(
    client: &ApiClient,
    output: Output,
    command: DeployCommand,
) -> Result<(), CliError> {
    match command {
        DeployCommand::Start(args) if args.dry_run => return plan(client, output, &args).await,
        DeployCommand::Start(args) => {
            let file = args.file.as_deref().map(deploy_file::load).transpose()?;
            let request = body::start(&args, file)?;
            let v: Value = client.post("/v1/deployments", &request).await?;
            let id = v["id"].as_str().unwrap_or_default().to_string();
            say(output, &v, || {
                format!(
                    "started deployment {id} ({})",
                    v["status"].as_str().unwrap_or("?")
                )
            });
            if args.watch || args.watch_timeout.is_some() {
                return watch::watch(client, &id, output, args.watch_timeout, "--watch-timeout")
                    .await;
            }
        }
        DeployCommand::Info { id } => {
            let id = latest::resolve(client, &id).await?;
            let v: Value = client
                .get(&format!("/v1/deployments/{}", encode(&id)))
                .await?;
            show(output, &v, render::deployment);
        }
        DeployCommand::List {
            consumer,
            resource,
            status,
            list: args,
        } => {
            let status = status.map(|s| match s {
                StatusArg::Active => "active",
                StatusArg::Terminal => "terminal",
            });
            let q = query(&[
                ("consumer", consumer.as_deref()),
                ("resource", resource.as_deref()),
                ("status", status),
            ]);
            let path = format!("/v1/deployments{q}");
            let fetch = || async {
                Ok(list::newest_first(
                    list::all(client, &path, "deployments").await?,
                ))
            };
            let table = |v: &Value| {
                shown::<Vec<DeploymentSummary>>(output, v, |l, _| render::deployment_list(l))
            };
            return list::run(client, output, args, fetch, table).await;
        }
        DeployCommand::Pause(p) => {
            let a = p.action;
            let mut body = json!({ "hard": p.hard });
            if let Some(m) = a.message {
                body["message"] = json!(m);
            }
            act_with(client, output, &a.id, "pause", &body).await?
        }
        DeployCommand::Confirm(a) => act(client, output, &a.id, "confirm", a.message).await?,
        DeployCommand::Resume(a) => {
            let v: Value = client
                .post(
                    &format!("{}/resume", verb_path(&a.id)),
                    &message_body(a.message),
                )
                .await?;
            show::<DeploymentView>(output, &v, render::deployment_line_nl);
            if let Some(held) = super::held::still_held(client, &v).await? {
                return Err(held);
            }
        }
        DeployCommand::Abort(a) => act(client, output, &a.id, "abort", a.message).await?,
        DeployCommand::Rollback(a) => act(client, output, &a.id, "rollback", a.message)
            .await
            .map_err(|e| match &a.id {
                DeploymentRef::Id(id) => super::undo::suggest_undo(e, id),
                DeploymentRef::Pair { .. } => e,
            })?,
        DeployCommand::Undo(a) => return super::undo::undo(client, output, &a.id, a.message).await,
        DeployCommand::Pulse { id } => {
            let v: Value = client
                .post(&format!("{}/pulse", verb_path(&id)), &json!({}))
                .await?;
            if v["state"].is_null() {
                let answer = v["status"].as_str().unwrap_or("?").to_string();
                return Err(match id {
                    DeploymentRef::Id(id) => CliError::UnknownDeployment { id, answer },
                    DeploymentRef::Pair { consumer, resource } => CliError::NoActiveDeployment {
                        consumer,
                        resource,
                        answer,
                    },
                });
            }
            say(output, &v, || {
                format!(
                    "{} {}",
                    v["status"].as_str().unwrap_or("?"),
                    v["state"].as_str().unwrap_or("?")
                )
            });
        }
        DeployCommand::Plan(args) => return plan(client, output, &args).await,
        DeployCommand::Why { id, node } => {
            let id = latest::resolve(client, &id).await?;
            let v: Value = client
                .get(&format!(
                    "/v1/deployments/{}/nodes/{}",
                    encode(&id),
                    encode(&node)
                ))
                .await?;
            show(output, &v, explain::node_history);
        }
        DeployCommand::Watch { id, timeout } => {
            let id = latest::resolve(client, &id).await?;
            return watch::watch(client, &id, output, timeout, "--timeout").await;
        }
    }
    Ok(())
}

/// `deploy plan`, and `deploy start --dry-run`: what the start would do, changing nothing.
async fn plan(client: &ApiClient, output: Output, args: &StartArgs) -> Result<(), CliError> {
    let file = args.file.as_deref().map(deploy_file::load).transpose()?;
    let request = body::start(args, file)?;
    let path = match &args.per_node {
        Some(d) => format!("/v1/deployments?dry_run=true&per_node={}", encode(d)),
        None => "/v1/deployments?dry_run=true".to_string(),
    };
    let v: Value = client.post(&path, &request).await?;
    show(output, &v, explain::deployment_plan);
    Ok(())
}

/// Where the verbs of `target` are posted, without the verb: `/v1/deployments/d-17`, or by job key
/// `/v1/consumers/web/resources/app`.
pub(crate) fn verb_path(target: &DeploymentRef) -> String {
    match target {
        DeploymentRef::Id(id) => format!("/v1/deployments/{}", encode(id)),
        DeploymentRef::Pair { consumer, resource } => format!(
            "/v1/consumers/{}/resources/{}",
            encode(consumer),
            encode(resource)
        ),
    }
}

async fn act(
    client: &ApiClient,
    output: Output,
    target: &DeploymentRef,
    action: &str,
    message: Option<String>,
) -> Result<(), CliError> {
    act_with(client, output, target, action, &message_body(message)).await
}

/// The body of a verb: `{"message": ...}` or `{}`.
fn message_body(message: Option<String>) -> Value {
    match message {
        Some(m) => json!({ "message": m }),
        None => json!({}),
    }
}

/// Posts `body` to `action` of `target` and shows the deployment it answers.
async fn act_with(
    client: &ApiClient,
    output: Output,
    target: &DeploymentRef,
    action: &str,
    body: &Value,
) -> Result<(), CliError> {
    let v: Value = client
        .post(&format!("{}/{action}", verb_path(target)), body)
        .await?;
    show::<DeploymentView>(output, &v, render::deployment_line_nl);
    Ok(())
}

/// `convoy group ...`.
pub async fn group(
    client: &ApiClient,
    output: Output,
    command: GroupCommand,
) -> Result<(), CliError> {
    match command {
        GroupCommand::Create { name, members } => {
            let v: Value = client
                .post("/v1/groups", &body::create_group(&name, &members))
                .await?;
            show(output, &v, render::group);
        }
        GroupCommand::List(args) => {
            let fetch = || async { Ok(list::all(client, "/v1/groups", "groups").await?) };
            let table = |v: &Value| shown::<Vec<GroupView>>(output, v, |l, _| render::groups(l));
            return list::run(client, output, args, fetch, table).await;
        }
        GroupCommand::Show { name } => {
            let v: Value = client.get(&format!("/v1/groups/{}", encode(&name))).await?;
            show(output, &v, render::group);
        }
        GroupCommand::Delete { name } => {
            let v: Value = client
                .delete(&format!("/v1/groups/{}", encode(&name)))
                .await?;
            say(output, &v, || format!("deleted group {name}"));
        }
        GroupCommand::Deploy { name, versions } => {
            let v: Value = client
                .post(
                    "/v1/group-deployments",
                    &body::group_deploy(&name, &versions)?,
                )
                .await?;
            say(output, &v, || render::group_started(&v));
        }
        GroupCommand::Plan { name, versions } => {
            let v: Value = client
                .post(
                    "/v1/group-deployments?dry_run=true",
                    &body::group_deploy(&name, &versions)?,
                )
                .await?;
            show::<Vec<Vec<GroupPlanItem>>>(output, &v["steps"], |s| explain::group_plan(s));
        }
        GroupCommand::Info { id } => {
            let v: Value = client
                .get(&format!("/v1/group-deployments/{}", encode(&id)))
                .await?;
            show::<GroupDeploymentView>(output, &v, render::group_deployment);
        }
        GroupCommand::Abort { id } => {
            let v: Value = client
                .post(
                    &format!("/v1/group-deployments/{}/abort", encode(&id)),
                    &json!({}),
                )
                .await?;
            show::<GroupDeploymentView>(output, &v, render::group_deployment);
        }
    }
    Ok(())
}

/// `convoy cluster ...`.
pub async fn cluster(
    client: &ApiClient,
    output: Output,
    command: ClusterCommand,
) -> Result<(), CliError> {
    let v: Value = match command {
        ClusterCommand::Status => return super::fleet::cluster_status(client, output).await,
        ClusterCommand::Add {
            id,
            raft_addr,
            http_addr,
        } => {
            let body = json!({ "id": id, "raft_addr": raft_addr, "http_addr": http_addr });
            client.post("/v1/cluster/members", &body).await?
        }
        ClusterCommand::Remove { id } => {
            client.delete(&format!("/v1/cluster/members/{id}")).await?
        }
        ClusterCommand::ReplaceMember { id } => super::replace_member::run(client, id).await?,
        ClusterCommand::Limits(args) => return super::limits::run(client, output, args).await,
    };
    show::<Value>(output, &v, render::cluster);
    Ok(())
}
