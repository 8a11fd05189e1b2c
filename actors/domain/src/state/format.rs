//! The version of the replicated encoding: how [`crate::Command`]s (the log) and
//! [`crate::ClusterState`] (snapshots) are written. bincode writes no field names, so a field added,
//! removed or moved, or a variant inserted before another, changes what old bytes mean: a build
//! never reads another format's data dir (`convoy_raft::identity` records the format and refuses
//! another one at start). `format_test.rs` pins the encoding of a fixture: when it fails, the
//! encoding changed, and the change must bump [`STATE_FORMAT`] before a release.

/// The format this build writes and reads. 1: every build before the format was recorded (up to
/// November 2026); 2: judgement, selection and token changes of issues 22 and 28 (completion
/// `on_timeout`, all-at-once `fail_fast`, `force`, kept nodes, holds by actor, token expiry, tokens
/// bound to consumers); 3: a subscription remembers what its nodes ran when the last of them came back
/// empty (`Subscription::emptied_at`, replaced in 7), deployments' pacing (bake, deadlines, gates, hard pause) and metric
/// analysis (issue 23), disruption budgets and maintenance windows (issue 24); 4: weak subscriptions'
/// brakes and holds by origin, consumer events (issue 23), fleet-wide limits, start jitter and
/// `overrun: pause` (issue 24), the app log a node reports (issue 29); 5 (issue 35): a deployment's set of waits
/// and its active clock replace `paused_by`, its pacing deadlines are points in active time; a brake's minimum of
/// failed nodes, since when a node runs its version healthy (`NodeResource::ok_since`), the selection a strong
/// subscription's last deployment started under (`Subscription::last_selected`); the windows' hold of weak
/// subscriptions (`weak_gate`) and their slots under budgets and fleet-wide limits (`weak_slots`); 6 (issue 35): a
/// weak subscription's start jitter (`Policy::start_jitter_ms`) and its spreads (`weak_jitter`); 7 (issue 36 §6):
/// what a subscription's nodes reached (`Subscription::reached`, in `emptied_at`'s place, with another meaning),
/// so a dependency that holds is revoked only by a rollback, a node moving back, a retraction or an edit.
pub const STATE_FORMAT: u32 = 7;

#[cfg(test)]
#[path = "format_test.rs"]
mod tests;
