//! The checkers of why a deployment waits (DEPLOYMENTS.md §6, issue 35), pure functions of one observed view:
//! its status is the one its waits imply (a pausing reason ⇔ PAUSED, only the pulse ⇔ AWAITING_PULSE, nothing on
//! a terminal deployment, `paused_by` the first reason), and the completion timeout never fired before the
//! deployment had rolled forward for that long (a pause, a window, a pulse block count nothing toward it).

use convoy_actors::domain::{Actor, DeploymentView, PausedBy, Status, Wait};

use super::check::Violation;

fn violation(rule: &'static str, detail: String) -> Violation {
    Violation { rule, detail }
}

/// The status a view shows agrees with its waits.
pub fn waits_agree(view: &DeploymentView) -> Vec<Violation> {
    let reasons: Vec<Wait> = view.waits.iter().map(|w| w.reason).collect();
    let pausing = reasons.iter().any(|w| w.pauses());
    let pulse = reasons.contains(&Wait::Pulse);
    let s = view.status;
    let fine = if s.is_terminal() {
        reasons.is_empty()
    } else if s.is_paused() {
        pausing
    } else if s.is_awaiting() {
        pulse && !pausing
    } else {
        !pausing && !pulse && (s == Status::RollingForward || reasons.is_empty())
    };
    let first = reasons.iter().find_map(|w| w.paused_by());
    let shown = if s.is_paused() || s.is_awaiting() {
        first
    } else {
        None
    };
    let mut out = Vec::new();
    if !fine {
        out.push(violation(
            "waits-status",
            format!("{} is {s} with waits {reasons:?}", view.id),
        ));
    }
    if view.paused_by != shown && !(shown.is_none() && view.paused_by.is_none()) {
        out.push(violation(
            "waits-paused-by",
            format!(
                "{} shows paused_by {:?}, its waits {reasons:?} say {shown:?}",
                view.id, view.paused_by
            ),
        ));
    }
    if reasons.contains(&Wait::User) && view.paused_by != Some(PausedBy::User) {
        out.push(violation(
            "waits-person-first",
            format!("{}: a person's pause does not rank first", view.id),
        ));
    }
    out
}

/// Milliseconds spent ROLLING_FORWARD from creation to `until`, by its status events (an upper bound of its
/// active time: the policies' waits subtract more).
fn rolling_forward_ms(view: &DeploymentView, until: u64) -> u64 {
    let mut total = 0;
    let mut since: Option<u64> = None;
    for e in &view.events {
        if e.at > until {
            break;
        }
        let Some(s) = e.status else { continue };
        match (since, s == Status::RollingForward) {
            (None, true) => since = Some(e.at),
            (Some(t), false) => {
                total += e.at.saturating_sub(t);
                since = None;
            }
            _ => {}
        }
    }
    total + since.map_or(0, |t| until.saturating_sub(t))
}

/// The completion timeout fired only after the deployment rolled forward for `timeout_ms`.
pub fn timeout_in_active_time(view: &DeploymentView) -> Vec<Violation> {
    let Some(timeout) = view.settings.completion.timeout_ms else {
        return Vec::new();
    };
    view.events
        .iter()
        .filter(|e| {
            e.by == Actor::Timer
                && e.message
                    .as_deref()
                    .is_some_and(|m| m.starts_with("completion timeout"))
        })
        .filter_map(|e| {
            let ran = rolling_forward_ms(view, e.at);
            (ran < timeout).then(|| {
                violation(
                    "timeout-active-time",
                    format!(
                        "{}: completion timeout of {timeout} ms at {} after only {ran} ms rolling forward",
                        view.id, e.at
                    ),
                )
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "check_waits_test.rs"]
mod tests;
