// What the dashboard derives from a deployment's state, in one place: the actions the server would carry
// out on it now (DEPLOYMENTS.md §6 and §7; the API lists what a token's role may call, not what a status
// allows) and where its pulse stands, in words.

import { span } from "./clock.js";

/** The deployment actions, in the order of their buttons. */
export const ACTIONS = ["pause", "resume", "abort", "rollback", "pulse", "confirm"];

const ACTIVE = new Set([
  "ROLLING_FORWARD",
  "ROLLING_BACK",
  "ROLL_FORWARD_PAUSED",
  "ROLL_BACK_PAUSED",
  "ROLL_FORWARD_AWAITING_PULSE",
  "ROLL_BACK_AWAITING_PULSE",
]);
const PAUSED = new Set(["ROLL_FORWARD_PAUSED", "ROLL_BACK_PAUSED"]);
const AWAITING = new Set(["ROLL_FORWARD_AWAITING_PULSE", "ROLL_BACK_AWAITING_PULSE"]);
const FORWARD = new Set(["ROLLING_FORWARD", "ROLL_FORWARD_PAUSED", "ROLL_FORWARD_AWAITING_PULSE"]);

export function isActive(status) {
  return ACTIVE.has(status);
}

export function isAwaiting(status) {
  return AWAITING.has(status);
}

/**
 * Whether the server would carry out `action` on deployment `d` ({status, paused_by, settings}) now, rather
 * than refuse it or answer it with a no-op or a STOP:
 * - pause: active and not already paused (pausing a paused one changes nothing);
 * - resume: paused only, not at a confirmation gate (a rolling one is a no-op; one awaiting a pulse is refused:
 *   only a pulse unblocks it; one at a gate is refused: only a confirm lets it go on);
 * - abort: active;
 * - rollback: going forward (rolling, paused or awaiting a pulse);
 * - pulse: a coordinated active deployment not held by a person (whose pulses are answered STOP);
 * - confirm: waiting at a confirmation gate (`paused_by: "confirm"`, DEPLOYMENTS.md §14).
 */
export function stateAllows(d, action) {
  const s = d.status;
  switch (action) {
    case "pause":
      return ACTIVE.has(s) && !PAUSED.has(s);
    case "resume":
      return PAUSED.has(s) && d.paused_by !== "confirm";
    case "abort":
      return ACTIVE.has(s);
    case "rollback":
      return FORWARD.has(s);
    case "pulse":
      return ACTIVE.has(s) && Boolean(d.settings && d.settings.pulse_interval_ms) && !(PAUSED.has(s) && d.paused_by === "user");
    case "confirm":
      return PAUSED.has(s) && d.paused_by === "confirm";
    default:
      return false;
  }
}

/** The actions to offer on `d`: those its state allows and the token's role may call (`api.may`). */
export function permittedActions(api, d) {
  return ACTIONS.filter((a) => stateAllows(d, a) && api.may("POST", `/v1/deployments/${d.id}/${a}`));
}

/**
 * Where a coordinated deployment's pulse stands: `null` without a pulse interval or once finished;
 * `{first: true}` while it awaits its first pulse; else `{deadline, interval, blocked, held}` (ms).
 * The deadline counts from the last pulse, or from the deployment's creation (its first event).
 */
export function pulseState(d) {
  const interval = d.settings && d.settings.pulse_interval_ms;
  if (!interval || !ACTIVE.has(d.status)) return null;
  if (AWAITING.has(d.status) && !d.last_pulse_at) return { first: true, interval };
  const since = d.last_pulse_at || (d.events && d.events[0] && d.events[0].at) || Date.now();
  return { deadline: since + interval, interval, blocked: AWAITING.has(d.status), held: PAUSED.has(d.status) && d.paused_by === "user" };
}

/** A pulse deadline in words at `now`: "next pulse due in 42 s" or "pulse overdue by 12 s" (and why it waits). */
export function pulseWords(deadline, now, blocked, held) {
  const left = deadline - now;
  const base = left > 0 ? `next pulse due in ${span(Math.ceil(left / 1000) * 1000)}` : `pulse overdue by ${span(Math.floor(-left / 1000) * 1000)}`;
  if (blocked) return `${base}: blocked until a pulse arrives`;
  if (held) return `${base}: paused by a person, pulses are answered STOP`;
  return base;
}
