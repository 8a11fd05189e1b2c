// Drives convoy's dashboard in headless Chromium against a live cluster (started by
// tests/it/ui_browser.rs, which reads the lines this script prints and answers on stdin).
// Environment: CHROMIUM, CONVOY_LEADER_URL, CONVOY_LEADER_ID, CONVOY_SERVERS (comma-separated URLs),
// CONVOY_OPS_TOKEN (operator), CONVOY_READER_TOKEN (reader), CONVOY_DEPLOYMENT, CONVOY_COORDINATED (a deployment
// awaiting its first pulse, every 8 s), CONVOY_ANALYZED (a deployment with metric analysis whose first query
// errs and the next ones measure 0.002), CONVOY_SCREENSHOTS (a dir).

import { chromium } from "playwright-core";
import readline from "node:readline";
import path from "node:path";

const env = process.env;
const id = env.CONVOY_DEPLOYMENT;
const leaderUrl = env.CONVOY_LEADER_URL;
const shots = env.CONVOY_SCREENSHOTS;
const WAIT = { timeout: 60000 };
// A browser far from UTC that writes 12-hour times, so that a local or AM/PM time on the page shows.
const CONTEXT = { viewport: { width: 1280, height: 820 }, timezoneId: "America/New_York", locale: "en-US" };

const input = readline.createInterface({ input: process.stdin });
const lines = [];
let wake = null;
input.on("line", (l) => {
  lines.push(l);
  if (wake) wake();
});
async function nextLine() {
  while (lines.length === 0) await new Promise((r) => (wake = r));
  return lines.shift();
}

function say(line) {
  process.stdout.write(line + "\n");
}

async function signIn(page, base, token) {
  await page.goto(`${base}/ui/`);
  await page.locator("#token").fill(token);
  await page.locator("#login button[type=submit]").click();
  await page.locator("#whoami").waitFor(WAIT);
}

/** Waits until the deployment page shows exactly the buttons `want` (in any order); fails naming what it shows. */
async function expectButtons(page, want, why) {
  const wanted = [...want].sort().join(",");
  try {
    await page.waitForFunction(
      (wanted) => [...document.querySelectorAll("#deployment button[data-action]")].map((b) => b.dataset.action).sort().join(",") === wanted,
      wanted,
      { timeout: 20000 },
    );
  } catch (e) {
    const shown = await page.locator("#deployment button[data-action]").evaluateAll((bs) => bs.map((b) => b.dataset.action).sort().join(","));
    throw new Error(`${why}: the page shows buttons [${shown}], expected [${wanted}]`);
  }
}

/** The deployment page's pulse line, once it matches `pattern`; fails with what it says. */
async function expectPulseLine(page, pattern, why) {
  try {
    await page.waitForFunction(
      (source) => {
        const dd = document.querySelector("#deployment dd.pulse");
        return dd && new RegExp(source).test(dd.textContent);
      },
      pattern.source,
      { timeout: 20000 },
    );
  } catch (e) {
    const text = await page.locator("#deployment dd.pulse").textContent().catch(() => "(no pulse line)");
    throw new Error(`${why}: the pulse line reads ${JSON.stringify(text)}, expected ${pattern}`);
  }
  const text = await page.locator("#deployment dd.pulse").textContent();
  if (/expired/.test(text)) throw new Error(`the pulse line says "expired": ${text}`);
  return text;
}

/**
 * Every time on the page reads in UTC as the CLI prints it (YYYY-MM-DD HH:MM:SS.mmm) with the local time on
 * hover, and nothing in the page's text is a 12-hour (AM/PM) time.
 */
async function expectUtcTimes(page, scope) {
  const times = await page.locator(`${scope} table.events td:first-child`).evaluateAll((cells) =>
    cells.map((td) => {
      const t = td.querySelector("time");
      return { text: td.textContent, datetime: t && t.getAttribute("datetime"), title: t && t.title };
    }),
  );
  if (times.length === 0) throw new Error(`no event times in ${scope}`);
  for (const t of times) {
    if (!t.datetime) throw new Error(`an event time without a <time datetime>: ${t.text}`);
    const at = new Date(t.datetime);
    const utc = at.toISOString().replace("T", " ").replace("Z", "");
    if (t.text !== utc) throw new Error(`an event time reads ${JSON.stringify(t.text)}, the CLI would print ${utc} (UTC)`);
    const local = at.toLocaleString("en-US", { timeZone: "America/New_York" });
    if (!t.title.includes(local)) throw new Error(`the hover of ${t.text} is ${JSON.stringify(t.title)}, without the local time ${local}`);
  }
  const text = await page.locator("main").innerText();
  const twelve = text.match(/\d{1,2}:\d{2}(:\d{2})?\s?[AP]M\b/);
  if (twelve) throw new Error(`the page shows a 12-hour local time: ${twelve[0]}`);
}

/** The number of succeeded nodes the deployments page shows for the deployment. */
async function succeeded(page) {
  const text = await page.locator(`tr[data-id="${id}"] small`).textContent(WAIT);
  return Number(text.split("/")[0]);
}

const browser = await chromium.launch({ executablePath: env.CHROMIUM, headless: true, args: ["--no-sandbox"] });
let current = null;
try {
  const ops = await browser.newContext(CONTEXT);
  const page = await ops.newPage();
  current = page;
  page.on("pageerror", (e) => process.stderr.write(`page error: ${e.message}\n`));
  await signIn(page, leaderUrl, env.CONVOY_OPS_TOKEN);
  const me = await page.locator("#whoami").textContent();
  if (!me.includes("ops (operator)")) throw new Error(`signed in as ${me}`);

  // 1. The list shows the rolling deployment and its progress moving without a reload.
  await page.locator(`tr[data-id="${id}"] [data-status="ROLLING_FORWARD"]`).waitFor(WAIT);
  const first = await succeeded(page);
  await page.waitForFunction(
    ([id, first]) => {
      const small = document.querySelector(`tr[data-id="${id}"] small`);
      return small && Number(small.textContent.split("/")[0]) > first;
    },
    [id, first],
    WAIT,
  );
  const later = await succeeded(page);
  say(`PROGRESS ${first} -> ${later} succeeded, live`);
  await page.screenshot({ path: path.join(shots, "deployments.png") });

  // 2. One deployment: the grid, a hover, and a pause from the page.
  await page.locator(`tr[data-id="${id}"] a`).click();
  await page.locator("#deployment canvas#grid").waitFor(WAIT);
  const box = await page.locator("#grid").boundingBox();
  await page.mouse.move(box.x + 5, box.y + 5);
  await page.locator(".tip:not([hidden])").waitFor(WAIT);
  await page.screenshot({ path: path.join(shots, "deployment.png") });
  await page.locator('button[data-action="pause"]').click();
  await page.locator('#deployment [data-status="ROLL_FORWARD_PAUSED"]').waitFor(WAIT);
  const pausedBy = await page.locator("#deployment dd.paused-by").textContent();
  if (pausedBy !== "user") throw new Error(`paused_by shows ${pausedBy}`);
  // Paused by a person: pausing again changes nothing and a pulse is answered STOP, so neither is offered.
  await expectButtons(page, ["resume", "abort", "rollback"], "paused by a user");
  await expectUtcTimes(page, "#deployment");
  say("PAUSED");

  // 3. The test kills the leader that served this page: the page must move to another member.
  if ((await nextLine()) !== "killed") throw new Error("expected 'killed'");
  const killedOrigin = new URL(leaderUrl).origin;
  await page.waitForFunction(
    ([gone, goneId]) => {
      const s = document.querySelector("#status");
      return s.classList.contains("live") && s.dataset.server && s.dataset.server !== gone && s.dataset.leader && s.dataset.leader !== goneId && s.dataset.leader !== "null";
    },
    [killedOrigin, env.CONVOY_LEADER_ID],
    WAIT,
  );
  for (let attempt = 0; ; attempt++) {
    await page.locator('button[data-action="resume"]:not([disabled])').click(WAIT);
    try {
      await page.locator('#deployment [data-status="ROLLING_FORWARD"], #deployment [data-status="ROLLED_FORWARD"]').first().waitFor({ timeout: 5000 });
      break;
    } catch (e) {
      if (attempt >= 5) throw e;
    }
  }
  say("RESUMED");
  await expectButtons(page, ["pause", "abort", "rollback", "pulse"], "rolling forward");

  // 4. A coordinated deployment awaiting its first pulse: resume cannot unblock it, so it is not offered; a
  //    pulse from the page does; when the next pulse does not come, the line says by how much it is overdue.
  const coord = env.CONVOY_COORDINATED;
  await page.goto(`${page.url().split("#")[0]}#/deployments/${coord}`);
  await page.locator('#deployment [data-status="ROLL_FORWARD_AWAITING_PULSE"]').waitFor(WAIT);
  await expectPulseLine(page, /awaiting its first pulse/, "never pulsed");
  await expectButtons(page, ["pause", "abort", "rollback", "pulse"], "awaiting its first pulse");
  await page.locator('button[data-action="pulse"]').click();
  await page.locator('#deployment [data-status="ROLLING_FORWARD"]').waitFor(WAIT);
  await expectPulseLine(page, /next pulse due in \d/, "just pulsed");
  await page.locator('#deployment [data-status="ROLL_FORWARD_AWAITING_PULSE"]').waitFor(WAIT);
  const overdue = await expectPulseLine(page, /pulse overdue by \d+ s/, "a missed pulse");
  await expectButtons(page, ["pause", "abort", "rollback", "pulse"], "awaiting a pulse after a missed one");
  const listed = await page.goto(`${page.url().split("#")[0]}#/deployments`).then(() => page.locator(`tr[data-id="${coord}"] .countdown`).textContent(WAIT));
  if (!/overdue by \d+ s/.test(listed)) throw new Error(`the list's pulse column reads ${JSON.stringify(listed)}`);
  say(`COORDINATED ${overdue}`);
  await page.goto(`${page.url().split("#")[0]}#/cluster`);
  await page.locator("#cluster table").waitFor(WAIT);
  await page.screenshot({ path: path.join(shots, "cluster.png") });
  await page.goto(`${page.url().split("#")[0]}#/consumers/web`);
  await page.locator("#consumer").waitFor(WAIT);
  await page.screenshot({ path: path.join(shots, "consumer.png") });
  // A consumer with more nodes than its show's page (1,005: the show answers 1,000) says how many it leaves out.
  await page.goto(`${page.url().split("#")[0]}#/consumers/wide`);
  const counted = await page.locator(`#consumer[data-consumer="wide"] .nodes-count`).textContent(WAIT);
  if (!counted.includes("of 1005 shown; 705 more not shown")) throw new Error(`the wide consumer's nodes read ${JSON.stringify(counted)}`);

  // 5. A deployment with metric analysis: per metric its counters, its verdict and its last measurements (the
  //    first query's error, then values), each at a UTC time with the local time on hover.
  const analyzed = env.CONVOY_ANALYZED;
  await page.goto(`${page.url().split("#")[0]}#/deployments/${analyzed}`);
  const metric = page.locator('#deployment .analysis article[data-metric="error_ratio"]');
  try {
    await page.waitForFunction(
      () => {
        const rows = document.querySelectorAll('#deployment .analysis article[data-metric="error_ratio"] table.measurements tbody tr');
        const texts = [...rows].map((r) => r.textContent);
        return texts.some((t) => t.includes("0.002")) && texts.some((t) => t.includes("error:"));
      },
      null,
      WAIT,
    );
  } catch (e) {
    const text = await page.locator("#deployment").innerText().catch(() => "(no deployment page)");
    throw new Error(`the analysed deployment's page shows no measurements (a value and an error):\n${text}`);
  }
  const counters = await metric.locator(".counters").innerText();
  for (const word of ["successful", "failed", "inconclusive", "errors"]) {
    if (!new RegExp(`${word} \\d+`).test(counters)) throw new Error(`the counters lack ${word}: ${counters}`);
  }
  if (!/successful [1-9]/.test(counters) || !/errors [0-9]/.test(counters)) throw new Error(`counters: ${counters}`);
  const verdict = await page.locator("#deployment .analysis [data-verdict]").getAttribute("data-verdict");
  if (!["running", "successful"].includes(verdict)) throw new Error(`the verdict reads ${verdict}`);
  const rows = await metric.locator("table.measurements tbody tr").count();
  if (rows < 2 || rows > 10) throw new Error(`${rows} measurements shown, expected 2 to 10`);
  const times = await metric.locator("table.measurements tbody td:first-child time").evaluateAll((ts) => ts.map((t) => ({ text: t.textContent, datetime: t.getAttribute("datetime"), title: t.title })));
  for (const t of times) {
    const at = new Date(t.datetime);
    if (t.text !== at.toISOString().replace("T", " ").replace("Z", "")) throw new Error(`a measurement time reads ${t.text}, not UTC`);
    if (!t.title.includes(at.toLocaleString("en-US", { timeZone: "America/New_York" }))) throw new Error(`a measurement's hover lacks the local time: ${t.title}`);
  }
  await page.screenshot({ path: path.join(shots, "analysis.png"), fullPage: true });
  say(`ANALYSIS ${verdict}, ${rows} measurements, ${counters}`);

  // A 100,000-node grid, drawn in the page (measured, not asserted: numbers go to docs/BENCHMARKS.md).
  const ms = await page.evaluate(async () => {
    const { drawGrid } = await import("./grid.js");
    const states = ["pending", "downloading", "installing", "succeeded", "failed"];
    const nodes = Array.from({ length: 100000 }, (_, i) => ({ state: states[i % 5] }));
    const canvas = document.createElement("canvas");
    const t0 = performance.now();
    drawGrid(canvas, nodes, 1100);
    return performance.now() - t0;
  });
  say(`GRID100K ${Math.round(ms)} ms`);

  // 6. A reader sees the deployment and no buttons.
  const reader = await browser.newContext(CONTEXT);
  const rpage = await reader.newPage();
  current = rpage;
  const survivor = env.CONVOY_SERVERS.split(",").find((u) => new URL(u).origin !== killedOrigin);
  await signIn(rpage, survivor, env.CONVOY_READER_TOKEN);
  await rpage.goto(`${survivor}/ui/#/deployments/${id}`);
  await rpage.locator("#deployment canvas#grid").waitFor(WAIT);
  const role = await rpage.locator("#whoami").getAttribute("data-role");
  const buttons = await rpage.locator("button[data-action]").count();
  if (role !== "reader" || buttons !== 0) throw new Error(`reader sees ${buttons} buttons (role ${role})`);
  say("READER_NO_BUTTONS");

  // 7. The API docs page (no token: it is public) renders every operation of /openapi.json with its roles.
  const docs = await browser.newContext({ viewport: { width: 1280, height: 820 } });
  const dpage = await docs.newPage();
  current = dpage;
  dpage.on("pageerror", (e) => process.stderr.write(`docs page error: ${e.message}\n`));
  await dpage.goto(`${survivor}/docs`);
  await dpage.locator("#routes[data-routes]").waitFor({ ...WAIT, state: "attached" });
  const spec = await (await fetch(`${survivor}/openapi.json`)).json();
  const operations = Object.values(spec.paths).reduce((n, item) => n + Object.keys(item).length, 0);
  const shown = await dpage.locator("details.route").count();
  if (shown !== operations) throw new Error(`the docs page shows ${shown} routes, the spec has ${operations}`);
  const pulse = dpage.locator('details.route[data-method="POST"][data-path="/v1/deployments/{id}/pulse"]');
  if (!(await pulse.locator(".roles").textContent()).includes("pulser")) throw new Error("pulse route without its roles");
  const start = dpage.locator('details.route[data-method="POST"][data-path="/v1/deployments"]');
  await start.locator("summary").click();
  const body = await start.locator(".body").innerText();
  for (const want of ["dry_run", "Request body", "consumer", "StartBody", "201", "409"]) {
    if (!body.includes(want)) throw new Error(`POST /v1/deployments on the docs page lacks ${want}: ${body}`);
  }
  await dpage.locator("#filter").fill("pulse");
  const visible = await dpage.locator("details.route:not(.hidden)").count();
  if (visible < 1 || visible >= shown) throw new Error(`filtering by "pulse" leaves ${visible} of ${shown}`);
  await dpage.screenshot({ path: path.join(shots, "docs.png") });
  say(`DOCS ${shown} routes`);
  say("DONE");
} catch (e) {
  // What the page showed when it went wrong, for the test's failure message.
  if (current) {
    const text = await current.locator("body").innerText().catch(() => "(no page)");
    process.stderr.write(`page at ${current.url()} showed:\n${text}\n`);
    await current.screenshot({ path: path.join(shots, "failure.png") }).catch(() => {});
  }
  throw e;
} finally {
  await browser.close();
  input.close();
}
