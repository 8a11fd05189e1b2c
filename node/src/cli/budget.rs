//! `convoy consumer budget`: show, set or remove a consumer's disruption budget (issue 24 §1).

use convoy_actors::domain::budgets::BudgetView;
use serde_json::{json, Value};

use super::args::{BudgetArgs, Output};
use super::body::encode;
use super::error::CliError;
use crate::client::ApiClient;

/// Runs `convoy consumer budget`.
pub async fn run(client: &ApiClient, output: Output, args: BudgetArgs) -> Result<(), CliError> {
    let path = format!("/v1/consumers/{}/budget", encode(&args.consumer));
    let v: Value = if args.delete {
        client.delete(&path).await?
    } else if let Some(t) = args.max_unavailable {
        client.put(&path, &json!({ "max_unavailable": t })).await?
    } else if let Some(t) = args.min_available {
        client.put(&path, &json!({ "min_available": t })).await?
    } else {
        client.get(&path).await?
    };
    match (output, serde_json::from_value::<BudgetView>(v.clone())) {
        (Output::Table, Ok(view)) if args.delete => {
            outln!("removed the budget of {}", view.consumer)
        }
        (Output::Table, Ok(view)) => out!("{}", render(&view)),
        _ => outln!(
            "{}",
            serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string())
        ),
    }
    Ok(())
}

/// The budget as text: its limit, its use, the unavailable nodes and what holds each.
pub fn render(b: &BudgetView) -> String {
    let limit = match (b.max_unavailable, b.min_available) {
        (Some(t), _) => format!("max_unavailable {t}"),
        (None, Some(t)) => format!("min_available {t}"),
        (None, None) => "no limit".to_string(),
    };
    let mut out = format!(
        "budget of {}: {limit} ({} of {} active nodes may be unavailable)\n\
         unavailable: {}, disruptions allowed: {}\n",
        b.consumer, b.allowed, b.active, b.unavailable, b.disruptions_allowed
    );
    for n in &b.nodes {
        let by = n
            .deployment
            .map_or("inactive".to_string(), |d| format!("held by {d}"));
        out.push_str(&format!("  {}  {by}\n", n.node));
    }
    out
}

#[cfg(test)]
#[path = "budget_test.rs"]
mod tests;
