//! How `deploy plan`, `group plan` and `deploy why` print: a dry run's version and reason, node order with
//! batches or waves and skipped nodes (the first [`NODES_SHOWN`] of each, then a count), and a node's
//! decisions with their reasons.

use convoy_actors::domain::{DeploymentPlan, GroupPlanItem, NodeHistory};

use super::render::{name, strategy};
use super::table::{timestamp, Table};

/// Nodes listed per plan before the rest are only counted (`-o json` lists all).
pub const NODES_SHOWN: usize = 50;

fn version_line(p: &DeploymentPlan) -> String {
    let mut line = format!(
        "{}/{}: version {} ({})",
        p.consumer,
        p.resource,
        p.version,
        name(&p.version_reason)
    );
    for o in &p.passed_over {
        line += &format!("; passed over {}: {}", o.version, o.why);
    }
    if let Some(h) = &p.held {
        line += &format!("\nHELD: {h}; `deploy start --force` deploys it and lifts the hold");
    }
    line
}

/// `deploy plan`.
pub fn deployment_plan(p: &DeploymentPlan) -> String {
    let mut out = version_line(p) + "\n";
    let already = p.nodes.iter().filter(|n| n.step == 0).count();
    let steps: Vec<String> = p.steps.iter().map(u32::to_string).collect();
    out += &format!(
        "strategy {}: {}, {} to change in {} step(s) [{}], {} already on version {}, {} skipped\n",
        strategy(&p.settings.strategy),
        convoy_actors::domain::count(p.nodes.len() as u64, "node"),
        p.nodes.len() - already,
        p.steps.len(),
        steps.join(","),
        already,
        p.version,
        p.skipped.len()
    );
    let mut t = Table::new(&["STEP", "ORD", "NODE", "FROM"]);
    for n in p.nodes.iter().take(NODES_SHOWN) {
        let step = if n.step == 0 {
            "done".to_string()
        } else {
            n.step.to_string()
        };
        t.row([
            step,
            n.ordinal.to_string(),
            n.id.clone(),
            n.from_version.map_or("-".into(), |v| v.to_string()),
        ]);
    }
    out += &t.render();
    if p.nodes.len() > NODES_SHOWN {
        out += &format!(
            "... {} more nodes (-o json lists all)\n",
            p.nodes.len() - NODES_SHOWN
        );
    }
    if !p.skipped.is_empty() {
        let mut t = Table::new(&["SKIPPED", "ORD", "WHY"]);
        for s in p.skipped.iter().take(NODES_SHOWN) {
            t.row([s.id.clone(), s.ordinal.to_string(), s.why.clone()]);
        }
        out += &t.render();
        if p.skipped.len() > NODES_SHOWN {
            out += &format!("... {} more skipped\n", p.skipped.len() - NODES_SHOWN);
        }
    }
    if let Some(policies) = &p.policies {
        out += &policy_lines(policies);
    }
    out
}

/// The windows and budgets a planned deployment would meet (issue 24).
fn policy_lines(p: &convoy_actors::domain::policies::PlanPolicies) -> String {
    let mut out = String::new();
    for w in &p.windows {
        out += &format!(
            "window {}: {}{}\n",
            w.name,
            if w.open { "open" } else { "closed" },
            w.next_change
                .map(|t| format!(", changes at {}", super::zoned::utc(t)))
                .unwrap_or_default()
        );
    }
    if p.held {
        out += &match p.held_until {
            Some(t) => format!(
                "held by windows: it would start paused and go on at {}\n",
                super::zoned::utc(t)
            ),
            None => "held by windows: it would start paused\n".to_string(),
        };
    }
    if let Some(w) = &p.weak_waiting {
        out += &format!(
            "weak nodes wait for window {}: outside a deployment they keep what they run{}\n",
            w.windows.join(", "),
            w.next_change
                .map(|t| format!(" (next change at {})", super::zoned::utc(t)))
                .unwrap_or_default()
        );
    }
    for b in &p.budgets {
        out += &format!(
            "budget of {}: {} of {} may be unavailable, {} are; {} disruption(s) left\n",
            b.consumer, b.allowed, b.active, b.unavailable, b.disruptions_allowed
        );
    }
    if let Some(f) = &p.finish {
        let when = match f.at {
            Some(t) => super::zoned::utc(t),
            None => "never (no window lets it finish within the horizon)".to_string(),
        };
        out += &format!(
            "expected to finish: {when} ({} wave(s); assuming {})\n",
            f.waves, f.assumption
        );
    }
    out
}

/// `group plan`: each step's members, versions and reasons, node counts.
pub fn group_plan(steps: &[Vec<GroupPlanItem>]) -> String {
    let mut t = Table::new(&[
        "STEP", "MEMBER", "VERSION", "WHY", "NODES", "STEPS", "SKIPPED",
    ]);
    for (i, step) in steps.iter().enumerate() {
        for item in step {
            let (nodes, inner, skipped) = match (&item.plan, item.waits_on) {
                (Some(p), _) => (
                    p.nodes.len().to_string(),
                    p.steps.len().to_string(),
                    p.skipped.len().to_string(),
                ),
                (None, Some(d)) => (format!("waits on {d}"), String::new(), String::new()),
                (None, None) => ("-".into(), String::new(), String::new()),
            };
            t.row([
                (i + 1).to_string(),
                format!("{}/{}", item.consumer, item.resource),
                item.version.to_string(),
                name(&item.version_reason),
                nodes,
                inner,
                skipped,
            ]);
        }
    }
    t.render()
}

/// `deploy why`.
pub fn node_history(h: &NodeHistory) -> String {
    let mut out = format!(
        "{} in {}: ordinal {}, position {}, {} → v{}, {} failed attempt(s)\nnow: {}\n",
        h.node,
        h.deployment,
        h.ordinal,
        h.position,
        h.from_version.map_or("none".into(), |v| format!("v{v}")),
        h.version,
        h.failures,
        h.now
    );
    let mut t = Table::new(&["AT", "BY", "WHY"]);
    for d in &h.decisions {
        t.row([timestamp(d.at), name(&d.event.by), d.why.clone()]);
    }
    out += &t.render();
    if let Some(run) = &h.analysis {
        out += &super::analysis::analysis(run);
    }
    out
}

#[cfg(test)]
#[path = "explain_test.rs"]
mod tests;
