// The dashboard's pages, each an async function from the API to a DOM node. Text goes in through
// textContent only (never innerHTML), so names and messages from the cluster cannot inject markup, and
// with control, bidi and zero-width characters escaped (`shown`), so they cannot reorder or hide it.
// Times are UTC as the CLI prints them, with the local time on hover (clock.js).

import { drawGrid, STATE_COLOURS } from "./grid.js";
import { agoElement, span, timeElement } from "./clock.js";
import { isActive, permittedActions, pulseState, pulseWords } from "./rules.js";

export { isActive };

const STATES = Object.keys(STATE_COLOURS);
const MAX_DETAILED = 20;
/** Active deployments up to this many nodes are read in full on the list (for the bar by state, windows, pulse). */
const MAX_DETAILED_NODES = 5000;
const MAX_EVENTS = 200;
const MAX_PROBED_NODES = 300;

/** Control (but tab and newline, harmless in a page), bidi and zero-width characters: the ones that hide or reorder text (the CLI's `text::is_hidden`). */
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/gu;

/** `text` with each hidden character shown as its escape (`\u{202e}`), as the CLI shows it. */
export function shown(text) {
  return text.replace(HIDDEN, (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
}

/** `h("div", {class: "x"}, child, "text")`: an element; `on*` attributes become listeners, `style` is an object. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    // Through the CSSOM: the page's Content-Security-Policy forbids style="" attributes.
    else if (k === "style") Object.assign(el.style, v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(shown(String(c))));
  }
  return el;
}

function badge(status) {
  const kind = isActive(status) ? (status.includes("PAUSED") || status.includes("AWAITING") ? "held" : "active") : status === "ROLLED_FORWARD" ? "ok" : "bad";
  return h("span", { class: `badge ${kind}`, "data-status": status }, status);
}

function strategyText(settings) {
  const s = settings && settings.strategy;
  if (!s) return "";
  if (s.rolling) return `rolling: install ${s.rolling.install_window}, download ${s.rolling.download_window}`;
  if (s.batch) return `batches ${s.batch.sizes.join(", ")}${s.batch.autopause ? " (autopause)" : ""}`;
  return "all at once";
}

/** Node counts by state. */
function countStates(nodes) {
  const counts = {};
  for (const n of nodes) counts[n.state] = (counts[n.state] || 0) + 1;
  return counts;
}

function progressBar(counts, total) {
  const bar = h("div", { class: "progress", title: STATES.filter((s) => counts[s]).map((s) => `${s} ${counts[s]}`).join(", ") });
  for (const s of STATES) {
    if (!counts[s]) continue;
    const [r, g, b] = STATE_COLOURS[s];
    bar.append(h("span", { class: "seg", "data-state": s, style: { width: `${(100 * counts[s]) / Math.max(1, total)}%`, background: `rgb(${r},${g},${b})` } }));
  }
  return bar;
}

/** Where a pulse stands, in words, kept ticking by the app's clock; red in its last fifth and once overdue. */
function pulseCountdown(d) {
  const p = pulseState(d);
  if (!p) return "";
  if (p.first) return h("span", { class: "countdown late" }, "awaiting its first pulse");
  const el = h("span", { class: "countdown", "data-deadline": p.deadline, "data-interval": p.interval, "data-blocked": p.blocked ? "yes" : null, "data-held": p.held ? "yes" : null });
  tick(el, Date.now());
  return el;
}

function tick(el, now) {
  const left = Number(el.dataset.deadline) - now;
  el.textContent = pulseWords(Number(el.dataset.deadline), now, el.dataset.blocked === "yes", el.dataset.held === "yes");
  el.classList.toggle("late", left < Number(el.dataset.interval) / 5);
}

/** Ticks every countdown under `root`. */
export function tickCountdowns(root) {
  const now = Date.now();
  for (const el of root.querySelectorAll("[data-deadline]")) tick(el, now);
}

// ---- deployments -------------------------------------------------------------------------------------

export async function deploymentsPage(api) {
  const list = await api.get("/v1/deployments");
  list.sort((a, b) => (isActive(b.status) - isActive(a.status)) || (Number(b.id.slice(2)) - Number(a.id.slice(2))));
  const details = await Promise.all(
    list.map((d, i) => (isActive(d.status) && i < MAX_DETAILED && d.nodes <= MAX_DETAILED_NODES ? api.get(`/v1/deployments/${d.id}`).catch(() => null) : null)),
  );
  const rows = list.map((d, i) => {
    const full = details[i];
    const counts = full ? countStates(full.nodes) : { succeeded: d.succeeded, failed: d.failed, skipped: d.skipped, pending: d.nodes - d.succeeded - d.failed - d.skipped };
    return h(
      "tr",
      { "data-id": d.id, class: isActive(d.status) ? "active" : "" },
      h("td", {}, h("a", { href: `#/deployments/${d.id}` }, d.id)),
      h("td", {}, `${d.consumer} / ${d.resource} v${d.version}`),
      h("td", {}, badge(d.status)),
      h("td", { class: "paused-by" }, d.paused_by || ""),
      h("td", {}, progressBar(counts, d.nodes), h("small", {}, `${d.succeeded}/${d.nodes} succeeded${d.failed ? `, ${d.failed} failed` : ""}`)),
      h("td", {}, full ? strategyText(full.settings) : ""),
      h("td", {}, full ? pulseCountdown(full) : ""),
      h("td", {}, full && full.events[0] ? agoElement(full.events[0].at) : ""),
    );
  });
  return h(
    "section",
    { id: "deployments" },
    h("h2", {}, "Deployments"),
    list.length === 0
      ? h("p", { class: "empty" }, "No deployments yet.")
      : h("table", {}, h("thead", {}, h("tr", {}, ["id", "what", "status", "paused by", "progress", "windows", "pulse", "age"].map((t) => h("th", {}, t)))), h("tbody", {}, rows)),
  );
}

// ---- one deployment ----------------------------------------------------------------------------------

/** What one query gave, in words: its value, "empty result", "NaN", or the error. */
function measuredText(m) {
  if (m === "empty") return "empty result";
  if (m === "nan") return "NaN";
  if (m && m.value !== undefined) return String(m.value);
  if (m && m.error !== undefined) return `error: ${m.error}`;
  return "?";
}

/**
 * The analysis run (`analysis` of GET /v1/deployments/{id}): the phase and verdict, and per metric its counters in
 * the current phase and its last measurements, newest first, in UTC with the local time on hover.
 */
function analysisSection(d) {
  const a = d.analysis;
  if (!a) return "";
  const spec = (d.settings && d.settings.analysis) || {};
  const head = [`${spec.mode ? `${spec.mode.replace("_", " ")} · ` : ""}phase ${a.phase} · verdict `, h("span", { class: `verdict ${a.verdict}`, "data-verdict": a.verdict }, a.verdict), a.reason ? ` · ${a.reason}` : ""];
  return h(
    "section",
    { class: "analysis" },
    h("h3", {}, "Analysis"),
    h("p", { class: "analysis-head" }, head),
    a.metrics.map((m) =>
      h(
        "article",
        { class: "metric", "data-metric": m.name },
        h("h4", {}, m.name, h("small", {}, ` ${m.total} measured in all`)),
        h(
          "p",
          { class: "counters" },
          [["successful", m.successes], ["failed", m.failures], ["inconclusive", m.inconclusive], ["errors", m.errors]].flatMap(([k, n], i) => [i ? " · " : "", h("span", { "data-counter": k }, `${k} ${n}`)]),
          m.consecutive_errors ? ` (${m.consecutive_errors} errors in a row)` : "",
        ),
        m.last.length === 0
          ? h("p", { class: "empty" }, "No measurement yet.")
          : h(
              "table",
              { class: "measurements" },
              h("thead", {}, h("tr", {}, ["when (UTC)", "phase", "result", "counted"].map((t) => h("th", {}, t)))),
              h("tbody", {}, m.last.slice().reverse().map((x) => h("tr", { "data-judged": x.judged }, h("td", {}, timeElement(x.at)), h("td", {}, x.phase), h("td", { class: "measured" }, measuredText(x.measured)), h("td", {}, x.judged)))),
            ),
      ),
    ),
  );
}

export async function deploymentPage(api, id, ui) {
  const d = await api.get(`/v1/deployments/${encodeURIComponent(id)}`);
  const counts = countStates(d.nodes);
  const lastError = new Map();
  for (const e of d.events) if (e.node && e.message) lastError.set(e.node, e.message);
  // Only what the deployment's state and the token's role allow (rules.js), so nothing offered is refused.
  const buttons = permittedActions(api, d).map((a) =>
    h(
      "button",
      {
        "data-action": a,
        onclick: async (ev) => {
          ev.target.disabled = true;
          try {
            await api.post(`/v1/deployments/${d.id}/${a}`, a === "pulse" ? undefined : { message: `from the dashboard` });
            ui.notice(`${a} sent`);
          } catch (e) {
            ui.notice(`${a}: ${e.message}`, true);
          }
          ui.refresh();
        },
      },
      a,
    ),
  );
  const canvas = h("canvas", { id: "grid", "aria-label": `${d.nodes.length} nodes by state` });
  const tip = h("div", { class: "tip", hidden: true });
  const wrap = h("div", { class: "grid-wrap" }, canvas, tip);
  const t0 = performance.now();
  const hit = drawGrid(canvas, d.nodes, Math.min(1100, (document.querySelector("main") || document.body).clientWidth - 40));
  canvas.dataset.drawMs = String(Math.round(performance.now() - t0));
  canvas.addEventListener("mousemove", (ev) => {
    const i = hit(ev);
    if (i < 0) {
      tip.hidden = true;
      return;
    }
    const n = d.nodes[i];
    const version = n.state === "succeeded" ? d.version : n.from_version;
    tip.textContent = `${n.id} (#${n.ordinal}) · ${n.state} · version ${version ?? "none"} · failures ${n.failures}${lastError.has(n.id) ? ` · ${lastError.get(n.id)}` : ""}`;
    tip.style.left = `${ev.offsetX + 12}px`;
    tip.style.top = `${ev.offsetY + 12}px`;
    tip.hidden = false;
  });
  canvas.addEventListener("mouseleave", () => (tip.hidden = true));
  const s = d.settings;
  const events = d.events.slice(-MAX_EVENTS).reverse();
  return h(
    "section",
    { id: "deployment", "data-id": d.id },
    h("h2", {}, `${d.id}: ${d.consumer} / ${d.resource} v${d.version} `, badge(d.status)),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "paused by"), h("dd", { class: "paused-by" }, d.paused_by || "—"),
      h("dt", {}, "windows"), h("dd", {}, strategyText(s)),
      h("dt", {}, "pulse"), h("dd", { class: "pulse" }, s.pulse_interval_ms ? [`every ${span(s.pulse_interval_ms)}`, isActive(d.status) ? " · " : "", pulseCountdown(d)] : "none"),
      h("dt", {}, "failures"), h("dd", {}, `retries per node ${s.max_failures_per_node}, failed nodes tolerated ${s.max_failed_nodes ?? "(window rule)"}, rollback on failure ${s.rollback_on_failure ? "yes" : "no"}`),
      h("dt", {}, "nodes"), h("dd", {}, STATES.filter((st) => counts[st]).map((st) => `${st} ${counts[st]}`).join(" · ")),
    ),
    h("div", { class: "actions" }, buttons),
    progressBar(counts, d.nodes.length),
    h("div", { class: "legend" }, STATES.map((st) => h("span", {}, h("i", { style: { background: `rgb(${STATE_COLOURS[st].join(",")})` } }), st))),
    wrap,
    analysisSection(d),
    h("h3", {}, "Events"),
    h(
      "table",
      { class: "events" },
      h("thead", {}, h("tr", {}, ["when (UTC)", "what", "node", "by", "message"].map((t) => h("th", {}, t)))),
      h("tbody", {}, events.map((e) => h("tr", {}, h("td", {}, timeElement(e.at)), h("td", {}, e.status || e.action || ""), h("td", {}, e.node || ""), h("td", { class: "by" }, e.by), h("td", {}, e.message || "")))),
    ),
  );
}

// ---- consumers ---------------------------------------------------------------------------------------

function subscriptionRows(c) {
  return Object.entries(c.subscriptions).map(([resource, s]) =>
    h("tr", {}, h("td", {}, resource), h("td", {}, s.mode), h("td", {}, s.pin ?? ""), h("td", s.held ? { title: s.held } : {}, s.selected ?? "", s.held ? " (held)" : ""), h("td", {}, s.version ?? ""), h("td", {}, s.deployment ? h("a", { href: `#/deployments/${s.deployment}` }, s.deployment) : ""), h("td", {}, strategyText(s))),
  );
}

export async function consumersPage(api) {
  const consumers = await api.get("/v1/consumers");
  return h(
    "section",
    { id: "consumers" },
    h("h2", {}, "Consumers"),
    consumers.length === 0 ? h("p", { class: "empty" }, "No consumers yet.") : "",
    consumers.map((c) =>
      h(
        "article",
        { "data-consumer": c.name },
        h("h3", {}, h("a", { href: `#/consumers/${encodeURIComponent(c.name)}` }, c.name), h("small", {}, ` ${c.nodes.length} nodes`)),
        h("table", {}, h("thead", {}, h("tr", {}, ["resource", "mode", "pin", "selected", "version", "deployment", "strategy"].map((t) => h("th", {}, t)))), h("tbody", {}, subscriptionRows(c))),
        (c.holds || []).length ? h("p", { class: "holds" }, "held back: ", c.holds.map((x) => `${x.resource} v${x.version} (${x.deployment || x.by})`).join(", ")) : "",
      ),
    ),
  );
}

/** One consumer with its nodes' liveness and version distribution (the first nodes, to bound the requests). */
export async function consumerPage(api, name) {
  const c = await api.get(`/v1/consumers/${encodeURIComponent(name)}`);
  // The show answers a page of the nodes (`page.total` of them in all) and the first 100 subscriptions.
  const total = c.page ? c.page.total : c.nodes.length;
  const subsLeft = (c.subscriptions_total ?? 0) - Object.keys(c.subscriptions).length;
  const probed = c.nodes.slice(0, MAX_PROBED_NODES);
  const nodes = [];
  for (let i = 0; i < probed.length; i += 16) {
    const part = await Promise.all(probed.slice(i, i + 16).map((id) => api.get(`/v1/nodes/${encodeURIComponent(id)}`).catch(() => ({ id, missing: true }))));
    nodes.push(...part);
  }
  const live = nodes.filter((n) => n.active).length;
  const dist = {};
  for (const n of nodes) {
    for (const [res, r] of Object.entries(n.resources || {})) {
      const key = `${res} v${r.current ?? "none"}`;
      dist[key] = (dist[key] || 0) + 1;
    }
  }
  return h(
    "section",
    { id: "consumer", "data-consumer": c.name },
    h("h2", {}, `Consumer ${c.name}`),
    h("table", {}, h("thead", {}, h("tr", {}, ["resource", "mode", "pin", "selected", "version", "deployment", "strategy"].map((t) => h("th", {}, t)))), h("tbody", {}, subscriptionRows(c))),
    subsLeft > 0 ? h("p", { class: "more" }, `${subsLeft} more subscriptions not shown`) : "",
    h("h3", {}, "Nodes"),
    h("p", { class: "nodes-count" }, `${live} of ${nodes.length} active${total > nodes.length ? ` (first ${nodes.length} of ${total} shown; ${total - nodes.length} more not shown)` : ""}`),
    h("h3", {}, "Versions running"),
    h("ul", {}, Object.entries(dist).sort().map(([k, v]) => h("li", {}, `${k}: ${v} nodes`))),
    h("div", { class: "nodes" }, nodes.map((n) => h("span", { class: n.active ? "node up" : "node down", title: n.id }, n.id))),
  );
}

// ---- resources, groups, cluster ----------------------------------------------------------------------

export async function resourcesPage(api) {
  const resources = await api.get("/v1/resources");
  return h(
    "section",
    { id: "resources" },
    h("h2", {}, "Resources and versions"),
    resources.length === 0 ? h("p", { class: "empty" }, "No resources yet.") : "",
    resources.map((r) =>
      h(
        "article",
        {},
        h("h3", {}, r.name),
        h("table", {}, h("thead", {}, h("tr", {}, ["version", "label", "published", "depends on", "artifact"].map((t) => h("th", {}, t)))),
          h("tbody", {}, r.versions.map((v) => h("tr", { class: v.retracted ? "retracted" : "" }, h("td", {}, `v${v.version}${v.retracted ? " (retracted)" : ""}`), h("td", {}, v.label || ""), h("td", {}, agoElement(v.published_at, " ago")), h("td", {}, (v.depends_on || []).map((x) => `${x.resource}@${x.version}`).join(", ")), h("td", {}, v.artifact ? v.artifact.url : ""))))),
      ),
    ),
  );
}

/** Groups, and group deployments (newest first) as their steps. */
export async function groupsPage(api) {
  const groups = await api.get("/v1/groups");
  const runs = await api.get("/v1/group-deployments");
  return h(
    "section",
    { id: "groups" },
    h("h2", {}, "Groups"),
    groups.length === 0 ? h("p", { class: "empty" }, "No groups yet.") : h("ul", {}, groups.map((g) => h("li", {}, `${g.name}: `, g.members.map((m) => `${m.consumer}/${m.resource}`).join(", ")))),
    h("h2", {}, "Group deployments"),
    runs.map((g) =>
      h("article", { "data-group-deployment": g.id }, h("h3", {}, `${g.id} (${g.group}) `, badge(g.status)),
        h("ol", { class: "steps" }, g.steps.map((step, i) => h("li", { class: i === g.current_step ? "current" : "" }, step.map((it) => h("span", { class: "step" }, `${it.consumer}/${it.resource} v${it.version} `, it.deployment ? h("a", { href: `#/deployments/${it.deployment}` }, it.deployment) : "", it.status ? [" ", badge(it.status)] : "")))))),
    ),
  );
}

/** Each member as it sees itself (asked directly, through CORS), with its lag behind the furthest one. */
export async function clusterPage(api) {
  const here = await api.get("/v1/cluster");
  api.learnMembers(here);
  const views = await Promise.all(
    here.members.map(async (m) => {
      try {
        const res = await fetch(`${location.protocol}//${m.http_addr}/v1/cluster`, { headers: api.headers({}), cache: "no-store" });
        return res.ok ? await res.json() : null;
      } catch (e) {
        return null;
      }
    }),
  );
  const top = Math.max(...views.filter(Boolean).map((v) => v.last_applied), here.last_applied);
  return h(
    "section",
    { id: "cluster" },
    h("h2", {}, `Cluster: leader ${here.leader_id ?? "none"}, term ${here.term}`),
    h("table", {}, h("thead", {}, h("tr", {}, ["id", "http", "role", "term", "applied", "lag"].map((t) => h("th", {}, t)))),
      h("tbody", {}, here.members.map((m, i) => {
        const v = views[i];
        return h("tr", { "data-member": m.id, class: m.role === "leader" ? "leader" : "" }, h("td", {}, m.id), h("td", {}, m.http_addr), h("td", {}, m.role), h("td", {}, v ? v.term : "unreachable"), h("td", {}, v ? v.last_applied : ""), h("td", {}, v ? top - v.last_applied : ""));
      }))),
  );
}
