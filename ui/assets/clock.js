// Times and durations as the dashboard writes them: one convention with the CLI, UTC as
// `YYYY-MM-DD HH:MM:SS.mmm` (what `convoy deploy info` prints), the browser's local time on hover only;
// durations in words a person reads ("12 s", "4 m 05 s", "2 h 03 m").

/** Milliseconds since the Unix epoch as the CLI prints them: `2026-11-27 10:50:09.123` (UTC). */
export function utc(ms) {
  return new Date(ms).toISOString().replace("T", " ").replace("Z", "");
}

/** The hover text of a time: the same instant in the browser's own time zone. */
export function localHover(ms) {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "local";
  return `local time: ${new Date(ms).toLocaleString()} (${zone})`;
}

/** A `<time>` showing `ms` in UTC, with the local time on hover. */
export function timeElement(ms) {
  const el = document.createElement("time");
  el.setAttribute("datetime", new Date(ms).toISOString());
  el.title = localHover(ms);
  el.textContent = utc(ms);
  return el;
}

/** A duration in milliseconds in words: `850 ms`, `12 s`, `4 m 05 s`, `2 h 03 m`, `3 d 04 h`. */
export function span(ms) {
  const whole = Math.max(0, Math.round(ms));
  if (whole < 1000 && whole > 0) return `${whole} ms`;
  const s = Math.round(whole / 1000);
  const two = (n) => String(n).padStart(2, "0");
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} m ${two(s % 60)} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${two(Math.floor((s % 3600) / 60))} m`;
  return `${Math.floor(s / 86400)} d ${two(Math.floor((s % 86400) / 3600))} h`;
}

/** How long ago `ms` was, in whole units (`12s`, `4m`, `2h 03m`, `3d`), for crowded columns. */
export function ago(ms) {
  if (ms === undefined || ms === null) return "";
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d`;
}

/** A relative time ("12s ago") whose hover gives the instant in UTC and in local time. */
export function agoElement(ms, suffix) {
  const el = document.createElement("span");
  if (ms === undefined || ms === null) return el;
  el.title = `${utc(ms)} UTC; ${localHover(ms)}`;
  el.textContent = `${ago(ms)}${suffix || ""}`;
  return el;
}
