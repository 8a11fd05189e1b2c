// The dashboard: login, the page router (#/deployments, #/deployments/d-1, #/consumers, #/consumers/x,
// #/resources, #/groups, #/cluster) and live refresh from the change feed.

import { Api, ApiError, savedToken, saveToken } from "./api.js";
import { h, tickCountdowns, deploymentsPage, deploymentPage, consumersPage, consumerPage, resourcesPage, groupsPage, clusterPage } from "./views.js";

const MIN_REFRESH_MS = 400;
const main = document.querySelector("main");
const status = document.querySelector("#status");
const who = document.querySelector("#who");

let api = null;
let rendering = false;
let again = false;
let lastRender = 0;
let lastCost = 0;
let applied = null;

const ui = {
  notice(text, bad) {
    const n = document.querySelector("#notice");
    n.textContent = text;
    n.className = bad ? "bad" : "";
  },
  refresh: () => render(),
};

function route() {
  const parts = (location.hash || "#/deployments").slice(2).split("/").map(decodeURIComponent);
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("here", a.getAttribute("href") === `#/${parts[0]}`);
  switch (parts[0]) {
    case "deployments":
      return parts[1] ? () => deploymentPage(api, parts[1], ui) : () => deploymentsPage(api);
    case "consumers":
      return parts[1] ? () => consumerPage(api, parts[1]) : () => consumersPage(api);
    case "resources":
      return () => resourcesPage(api);
    case "groups":
      return () => groupsPage(api);
    case "cluster":
      return () => clusterPage(api);
    default:
      return () => deploymentsPage(api);
  }
}

/** Renders the current page; calls arriving meanwhile collapse into one more render afterwards. */
async function render() {
  if (!api) return;
  if (rendering) {
    again = true;
    return;
  }
  rendering = true;
  // A page that takes long to build (a 100k-node deployment) is rebuilt less often, so the page stays responsive.
  const wait = lastRender + Math.max(MIN_REFRESH_MS, 4 * lastCost) - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const began = Date.now();
  try {
    const page = await route()();
    const scroll = window.scrollY;
    main.replaceChildren(page);
    tickCountdowns(main);
    window.scrollTo(0, scroll);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return logout("the token was refused");
    main.replaceChildren(h("p", { class: "bad" }, `Cannot show this page: ${e.message}`));
  } finally {
    lastRender = Date.now();
    lastCost = lastRender - began;
    rendering = false;
  }
  if (again) {
    again = false;
    render();
  }
}

function showLogin(reason) {
  who.textContent = "";
  status.textContent = "";
  const input = h("input", { type: "password", id: "token", placeholder: "cvy_…", autocomplete: "off", size: 40 });
  const form = h(
    "form",
    { id: "login", onsubmit: (ev) => {
      ev.preventDefault();
      saveToken(input.value.trim());
      start();
    } },
    h("h2", {}, "Sign in with an API token"),
    h("p", {}, "The token stays in this browser tab (sessionStorage) and is sent only to this cluster's servers."),
    reason ? h("p", { class: "bad" }, reason) : "",
    input,
    h("button", { type: "submit" }, "Sign in"),
  );
  main.replaceChildren(form);
  input.focus();
}

function logout(reason) {
  saveToken("");
  api = null;
  showLogin(reason);
}

async function start() {
  const candidate = new Api(savedToken());
  try {
    const me = await candidate.whoami();
    candidate.learnMembers(await candidate.get("/v1/cluster"));
    api = candidate;
    who.replaceChildren(
      h("span", { id: "whoami", "data-role": me.role }, `${me.name} (${me.role})`),
      me.auth === "on" ? h("button", { id: "logout", onclick: () => logout() }, "sign out") : "",
    );
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return showLogin(savedToken() ? "That token was refused." : "");
    main.replaceChildren(h("p", { class: "bad" }, `Cannot reach the cluster: ${e.message}`));
    return;
  }
  api.onServer = (origin) => (status.dataset.server = origin);
  render();
  const mine = api;
  api.watch(
    (event) => {
      if (api !== mine) return;
      applied = event.applied;
      status.dataset.applied = String(applied);
      status.dataset.leader = String(event.leader);
      status.textContent = `● applied ${applied} · server ${event.server} · leader ${event.leader ?? "none"} · term ${event.term}`;
      render();
    },
    (text, live) => {
      if (api !== mine) return;
      status.classList.toggle("live", live);
      if (!live) status.textContent = `○ ${text}`;
    },
  );
}

// A page asked for by the user is shown at once; only live refreshes are paced.
window.addEventListener("hashchange", () => {
  lastRender = 0;
  lastCost = 0;
  render();
});
setInterval(() => tickCountdowns(main), 1000);
start();
