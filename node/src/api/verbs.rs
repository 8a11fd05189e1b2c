//! The four steering verbs of a deployment (pause, resume, abort, rollback), each its own route under
//! `/v1/deployments/{id}/` and under `/v1/consumers/{consumer}/resources/{resource}/`: a path names exactly
//! one operation, so `Allow` and the OpenAPI document list only what a path serves (a catch-all
//! `{action}` route made every `POST .../summary` or `.../watch` look served).

/// A steering verb: its path segment (what `deployments::steer` is told) and its summary.
pub(crate) trait Verb {
    /// The path segment and the action `steer` runs.
    const NAME: &'static str;
    /// The operation's one-line summary.
    const SUMMARY: &'static str;
}

/// `.../pause` (with `"hard": true`, a hard pause).
pub(crate) struct Pause;
/// `.../resume`.
pub(crate) struct Resume;
/// `.../abort`.
pub(crate) struct Abort;
/// `.../rollback`.
pub(crate) struct Rollback;

impl Verb for Pause {
    const NAME: &'static str = "pause";
    const SUMMARY: &'static str = "Pause (hard with `hard: true`)";
}
impl Verb for Resume {
    const NAME: &'static str = "resume";
    const SUMMARY: &'static str = "Resume (lifts a person's pause and the autopause)";
}
impl Verb for Abort {
    const NAME: &'static str = "abort";
    const SUMMARY: &'static str = "Abort (nodes keep what they run)";
}
impl Verb for Rollback {
    const NAME: &'static str = "rollback";
    const SUMMARY: &'static str = "Roll back (in reverse install order)";
}
