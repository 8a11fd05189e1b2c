//! Renders the API's views (resources, consumers, deployments, groups, cluster) as tables for people.

use convoy_actors::domain::{
    text, Completion, ConsumerView, DeploymentSummary, DeploymentView, FailedNodes,
    GroupDeploymentView, GroupView, OnTimeout, Policy, ResourceView, Settings, Strategy,
};
use serde::Serialize;
use serde_json::Value;

use super::table::{duration, opt, timestamp, Table};

/// A strategy in one short phrase.
pub fn strategy(s: &Strategy) -> String {
    match s {
        Strategy::AllAtOnce { fail_fast: false } => "all-at-once".into(),
        Strategy::AllAtOnce { fail_fast: true } => "all-at-once, fail fast".into(),
        Strategy::Rolling {
            install_window,
            download_window,
        } => format!("rolling(install {install_window}, download {download_window})"),
        Strategy::Batch { sizes, autopause } => {
            let sizes: Vec<String> = sizes.iter().map(u32::to_string).collect();
            let pause = if *autopause { ", autopause" } else { "" };
            format!("batch({}{pause})", sizes.join(","))
        }
    }
}

/// Completion conditions in one short phrase.
pub fn completion(c: &Completion) -> String {
    let quorum = match c.quorum {
        None => "all nodes".to_string(),
        Some(q) if q <= 1.0 => format!("{}%", q * 100.0),
        Some(q) => format!("{q} nodes"),
    };
    match (c.timeout_ms, c.on_timeout) {
        (Some(t), OnTimeout::Finish) => format!("{quorum} within {}, then finish", duration(t)),
        (Some(t), OnTimeout::Fail) => format!("{quorum} within {}, else fail", duration(t)),
        (None, _) => quorum,
    }
}

/// The settings of a deployment of `nodes` nodes (`None`: a subscription's policy), one `key: value`
/// per line.
pub fn settings(s: &Settings, nodes: Option<u32>) -> String {
    let mut out = format!("strategy:      {}\n", strategy(&s.strategy));
    out += &format!("min healthy:   {}\n", duration(s.min_healthy_ms));
    // The number the deployment's own events use ("1 node failed; 0 tolerated; failed: ..."), not "default".
    let tolerated = match (s.max_failed_nodes, nodes) {
        (Some(FailedNodes::Percent(p)), None) => format!("{p}% of the nodes"),
        (Some(FailedNodes::Percent(p)), Some(n)) => {
            format!("{} ({p}% of {n})", s.failed_nodes_tolerated(n))
        }
        _ => s.failed_nodes_tolerated(nodes.unwrap_or(0)).to_string(),
    };
    out += &format!(
        "retries:       {} per node; failed nodes tolerated: {tolerated}\n",
        s.max_failures_per_node,
    );
    out += &format!(
        "on failure:    {}\n",
        if s.rollback_on_failure {
            "roll back"
        } else {
            "stop"
        }
    );
    if let Some(p) = s.pulse_interval_ms {
        out += &format!("pulse every:   {}\n", duration(p));
    }
    out += &format!("completion:    {}\n", completion(&s.completion));
    out
}

/// A serde enum (status, state, mode...) as its JSON name.
pub fn name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "?".into(),
    }
}

/// `resource list`.
pub fn resources(list: &[ResourceView], wide: bool) -> String {
    let mut header = vec!["NAME", "VERSIONS", "LATEST", "LABEL"];
    if wide {
        header.extend(["PUBLISHED", "ARTIFACT", "RETRACTED"]);
    }
    let mut t = Table::new(&header);
    for r in list {
        let latest = r.versions.last();
        let mut row = vec![
            r.name.clone(),
            r.versions.len().to_string(),
            opt(latest.map(|v| v.version)),
            opt(latest.and_then(|v| v.label.clone())),
        ];
        if wide {
            let retracted: Vec<String> = r
                .versions
                .iter()
                .filter(|v| v.retracted.is_some())
                .map(|v| v.version.to_string())
                .collect();
            row.extend([
                opt(latest.map(|v| timestamp(v.published_at))),
                opt(latest.and_then(|v| v.artifact.as_ref().map(|a| a.url.clone()))),
                if retracted.is_empty() {
                    "-".into()
                } else {
                    retracted.join(",")
                },
            ]);
        }
        t.row(row);
    }
    t.render()
}

/// `resource show`.
pub fn resource(r: &ResourceView) -> String {
    let mut t = Table::new(&[
        "VERSION",
        "LABEL",
        "PUBLISHED",
        "ARTIFACT",
        "SHA256",
        "HEALTH",
        "DEPENDS_ON",
        "METADATA",
        "RETRACTED",
    ]);
    for v in &r.versions {
        let deps: Vec<String> = v
            .depends_on
            .iter()
            .map(|d| format!("{}@{}", d.resource, d.version))
            .collect();
        let meta: Vec<String> = v.metadata.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let sha = v
            .artifact
            .as_ref()
            .and_then(|a| a.sha256.as_ref())
            .map(|s| s.chars().take(12).collect::<String>());
        t.row([
            v.version.to_string(),
            opt(v.label.clone()),
            timestamp(v.published_at),
            opt(v.artifact.as_ref().map(|a| a.url.clone())),
            opt(sha),
            opt(v.health_port),
            if deps.is_empty() {
                "-".into()
            } else {
                deps.join(",")
            },
            if meta.is_empty() {
                "-".into()
            } else {
                meta.join(",")
            },
            opt(v.retracted.as_ref().map(|x| format!("by {}", x.by.name()))),
        ]);
    }
    format!("resource: {}\n\n{}", r.name, t.render())
}

/// `consumer list`.
pub fn consumers(list: &[ConsumerView], wide: bool) -> String {
    let mut header = vec!["NAME", "NODES", "SUBSCRIPTIONS"];
    if wide {
        header.push("HOLDS");
    }
    let mut t = Table::new(&header);
    for c in list {
        // Wide: `app:weak@3` (mode and selected version), `db:strong@-` (none selectable).
        let subs: Vec<String> = c
            .subscriptions
            .iter()
            .map(|(r, s)| match wide {
                false => r.clone(),
                true => format!("{r}:{}@{}", name(&s.mode), opt(s.selected)),
            })
            .collect();
        let mut row = vec![
            c.name.clone(),
            c.nodes.len().to_string(),
            if subs.is_empty() {
                "-".into()
            } else {
                subs.join(",")
            },
        ];
        if wide {
            row.push(c.holds.len().to_string());
        }
        t.row(row);
    }
    t.render()
}

/// `consumer show` (and the answer of create, add-nodes, subscribe).
pub fn consumer(c: &ConsumerView) -> String {
    let mut nodes = Table::new(&["ORD", "NODE"]);
    for (i, n) in c.nodes.iter().enumerate() {
        nodes.row([i.to_string(), n.clone()]);
    }
    let mut subs = Table::new(&[
        "RESOURCE",
        "MODE",
        "STRATEGY",
        "PIN",
        "SELECTED",
        "CONVERGED",
        "DEPLOYMENT",
    ]);
    for (r, s) in &c.subscriptions {
        subs.row([
            r.clone(),
            name(&s.mode),
            s.strategy.as_ref().map_or_else(|| "-".into(), strategy),
            opt(s.pin),
            opt(s.selected),
            opt(s.version),
            opt(s.deployment),
        ]);
    }
    let mut holds = String::new();
    if !c.holds.is_empty() {
        let mut t = Table::new(&["RESOURCE", "HELD", "BY", "SINCE"]);
        for h in &c.holds {
            t.row([
                h.resource.clone(),
                h.version.to_string(),
                h.deployment.map_or_else(|| h.by.clone(), |d| d.to_string()),
                timestamp(h.at),
            ]);
        }
        holds = format!("\n{}", t.render());
    }
    if !c.events.is_empty() {
        holds.push_str("\nevents:\n");
        for e in &c.events {
            holds.push_str(&format!(
                "  {}  {}\n",
                timestamp(e.at),
                text::escape(&e.message)
            ));
        }
    }
    format!(
        "consumer: {} ({})\n\n{}\n{}{holds}",
        c.name,
        convoy_actors::domain::count(c.nodes.len() as u64, "node"),
        nodes.render(),
        if c.subscriptions.is_empty() {
            "no subscriptions\n".to_string()
        } else {
            subs.render()
        }
    )
}

/// The answer of `consumer subscribe`: the subscription's resulting policy, with the settings its
/// deployments will take (defaults marked), and the versions held back.
pub fn subscription(c: &ConsumerView, resource: &str) -> String {
    let Some(s) = c.subscriptions.get(resource) else {
        return format!("consumer {} has no subscription to {resource}\n", c.name);
    };
    let policy = Policy {
        strategy: s.strategy.clone(),
        min_healthy_ms: s.min_healthy_ms,
        max_failures_per_node: s.max_failures_per_node,
        max_failed_nodes: s.max_failed_nodes,
        rollback_on_failure: s.rollback_on_failure,
        pulse_interval_ms: s.pulse_interval_ms,
        completion: s.completion.clone(),
        // The view does not show pacing; the settings printed below leave it out.
        pacing: None,
        analysis: s.analysis.clone(),
        brake: s.brake,
        start_jitter_ms: s.start_jitter_ms,
    };
    let mut out = format!("subscription {}/{resource}\n\n", c.name);
    out += &format!("mode:          {}\n", name(&s.mode));
    out += &format!("pin:           {}\n", opt(s.pin));
    out += &format!("selected:      {}\n", opt(s.selected));
    if let Some(h) = &s.held {
        // A pin on a held-back version still selects it (DEPLOYMENTS.md §3).
        out += &format!("held:          {h}\n");
    }
    let unset: Vec<&str> = [
        ("strategy", s.strategy.is_none()),
        ("min_healthy_ms", s.min_healthy_ms.is_none()),
        ("max_failures_per_node", s.max_failures_per_node.is_none()),
        ("max_failed_nodes", s.max_failed_nodes.is_none()),
        ("rollback_on_failure", s.rollback_on_failure.is_none()),
        ("completion", s.completion.is_none()),
    ]
    .into_iter()
    .filter_map(|(n, unset)| unset.then_some(n))
    .collect();
    let weak = matches!(s.mode, convoy_actors::domain::Mode::Weak);
    if weak && unset.len() == 6 && s.pulse_interval_ms.is_none() {
        // A weak subscription moves each node by itself: no strategy of its own to show.
        out += "settings:      none: each node moves by itself; a deployment by hand takes its own flags\n";
    } else {
        if weak {
            out += "by hand:       a deployment by hand on it takes these unless its flags say otherwise\n";
        }
        out += &settings(&policy.settings(), None);
        if !unset.is_empty() {
            out += &format!("defaults for:  {}\n", unset.join(", "));
        }
    }
    if let Some(b) = s.brake {
        out += &format!("brake:         {}\n", brake(&b));
    }
    for h in c.holds.iter().filter(|h| h.resource == resource) {
        out += &format!("held back:     {}\n", h.reason);
    }
    out
}

/// A weak subscription's brake: "more than 20% (at least 3) of the nodes failing a version within 10m hold it back".
fn brake(b: &convoy_actors::domain::Brake) -> String {
    if !b.enabled {
        return "off".into();
    }
    let min = match b.max_failed {
        convoy_actors::domain::FailedNodes::Percent(_) => format!(" (at least {})", b.min_failed),
        convoy_actors::domain::FailedNodes::Count(_) => String::new(),
    };
    format!(
        "on: more than {}{min} of the nodes failing a version within {} hold it back",
        b.max_failed,
        humantime::format_duration(std::time::Duration::from_millis(b.window_ms))
    )
}

/// `deploy list`.
pub fn deployment_list(list: &[DeploymentSummary]) -> String {
    let mut t = Table::new(&[
        "ID",
        "CONSUMER",
        "RESOURCE",
        "VERSION",
        "STATUS",
        "PAUSED_BY",
        "NODES",
        "OK",
        "FAILED",
        "SKIPPED",
    ]);
    for d in list {
        t.row([
            d.id.to_string(),
            d.consumer.clone(),
            d.resource.clone(),
            d.version.to_string(),
            name(&d.status),
            opt(d.paused_by.as_ref().map(name)),
            d.nodes.to_string(),
            d.succeeded.to_string(),
            d.failed.to_string(),
            d.skipped.to_string(),
        ]);
    }
    t.render()
}

/// One reason a deployment waits, with the window's name: `window nights`.
fn wait_word(w: &convoy_actors::domain::WaitView) -> String {
    match &w.name {
        Some(n) => format!("{} {n}", w.reason.as_str()),
        None => w.reason.as_str().to_string(),
    }
}

/// One line about a deployment: `d-3 web/api v7 ROLL_FORWARD_PAUSED (paused by user ops; waits: user, auto)`.
pub fn deployment_line(d: &DeploymentView) -> String {
    let who = d
        .waits
        .first()
        .and_then(|w| w.by.as_deref())
        .map(|by| format!(" {by}"))
        .unwrap_or_default();
    let more = if d.waits.len() > 1 {
        let all: Vec<String> = d.waits.iter().map(wait_word).collect();
        format!("; waits: {}", all.join(", "))
    } else {
        String::new()
    };
    let held = d
        .paused_by
        .as_ref()
        .map(|p| format!(" (paused by {}{who}{more})", name(p)))
        .unwrap_or_default();
    format!(
        "{} {}/{} v{} {}{held}",
        d.id,
        d.consumer,
        d.resource,
        d.version,
        name(&d.status)
    )
}

/// [`deployment_line`] ending in a newline (the answer of pause, resume, abort, rollback).
pub fn deployment_line_nl(d: &DeploymentView) -> String {
    format!("{}\n", deployment_line(d))
}

/// `deploy info`.
pub fn deployment(d: &DeploymentView) -> String {
    let mut nodes = Table::new(&["ORD", "NODE", "FROM", "STATE", "FAILURES"]);
    for n in &d.nodes {
        nodes.row([
            n.ordinal.to_string(),
            n.id.clone(),
            opt(n.from_version),
            name(&n.state),
            n.failures.to_string(),
        ]);
    }
    let mut events = Table::new(&["AT", "BY", "STATUS", "NODE", "ACTION", "MESSAGE"]);
    for e in &d.events {
        events.row([
            timestamp(e.at),
            name(&e.by),
            opt(e.status.as_ref().map(name)),
            opt(e.node.clone()),
            opt(e.action.as_ref().map(name)),
            opt(e.message.clone()),
        ]);
    }
    let analysis = d
        .analysis
        .as_ref()
        .map(|run| format!("\n{}", super::analysis::analysis(run)))
        .unwrap_or_default();
    format!(
        "{}\n\n{}\n{}\n{}{analysis}",
        deployment_line(d),
        settings(&d.settings, Some(d.nodes.len() as u32)),
        nodes.render(),
        events.render()
    )
}

/// `group list`.
pub fn groups(list: &[GroupView]) -> String {
    let mut t = Table::new(&["NAME", "MEMBERS"]);
    for g in list {
        let members: Vec<String> = g
            .members
            .iter()
            .map(|m| format!("{}:{}", m.consumer, m.resource))
            .collect();
        t.row([g.name.clone(), members.join(",")]);
    }
    t.render()
}

/// `group show`.
pub fn group(g: &GroupView) -> String {
    let mut t = Table::new(&["CONSUMER", "RESOURCE"]);
    for m in &g.members {
        t.row([m.consumer.clone(), m.resource.clone()]);
    }
    format!("group: {}\n\n{}", g.name, t.render())
}

/// The answer of `group deploy`: `{"id", "steps": [[{"consumer", "resource", "version"}]]}`.
pub fn group_started(v: &Value) -> String {
    let mut t = Table::new(&["STEP", "CONSUMER", "RESOURCE", "VERSION"]);
    for (i, step) in v["steps"].as_array().into_iter().flatten().enumerate() {
        for item in step.as_array().into_iter().flatten() {
            t.row([
                (i + 1).to_string(),
                text(&item["consumer"]),
                text(&item["resource"]),
                opt(item["version"].as_u64()),
            ]);
        }
    }
    format!(
        "started group deployment {}\n\n{}",
        text(&v["id"]),
        t.render().trim_end()
    )
}

/// `group info`.
pub fn group_deployment(g: &GroupDeploymentView) -> String {
    let mut t = Table::new(&[
        "STEP",
        "CONSUMER",
        "RESOURCE",
        "VERSION",
        "DEPLOYMENT",
        "STATUS",
    ]);
    for (i, step) in g.steps.iter().enumerate() {
        let marker = if i as u32 == g.current_step { "*" } else { "" };
        for item in step {
            t.row([
                format!("{}{marker}", i + 1),
                item.consumer.clone(),
                item.resource.clone(),
                item.version.to_string(),
                opt(item.deployment),
                opt(item.status.as_ref().map(name)),
            ]);
        }
    }
    let step = (g.current_step as usize + 1).min(g.steps.len());
    format!(
        "{} group {} {} (step {step} of {})\n\n{}",
        g.id,
        g.group,
        name(&g.status),
        g.steps.len(),
        t.render()
    )
}

/// `cluster status`, from the raw JSON of `GET /v1/cluster`.
pub fn cluster(c: &Value) -> String {
    let leader = c["leader_id"].as_u64();
    let mut t = Table::new(&["ID", "ROLE", "RAFT_ADDR", "HTTP_ADDR"]);
    for m in c["members"].as_array().into_iter().flatten() {
        let id = m["id"].as_u64();
        let role = match m["role"].as_str() {
            // A member the answering server does not know as leader but the cluster says leads.
            Some(role) if role != "leader" && id.is_some() && id == leader => {
                format!("{role} (leader)")
            }
            Some(role) => role.to_string(),
            None => "-".to_string(),
        };
        t.row([opt(id), role, text(&m["raft_addr"]), text(&m["http_addr"])]);
    }
    format!(
        "answered by server {}; leader {}; term {}; last applied {}\n\n{}",
        opt(c["id"].as_u64()),
        opt(leader),
        opt(c["term"].as_u64()),
        opt(c["last_applied"].as_u64()),
        t.render()
    )
}

fn text(v: &Value) -> String {
    v.as_str().map_or_else(|| "-".to_string(), String::from)
}

#[cfg(test)]
#[path = "render_test.rs"]
mod tests;
