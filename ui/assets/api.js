// The dashboard's one door to the cluster: requests with the token, failover to another member when the
// server in use goes away, what the token may do (GET /v1/whoami), and the change feed (GET /v1/watch)
// read with fetch() and a ReadableStream (EventSource cannot send an Authorization header).

const TOKEN_KEY = "convoy.token";
const HEARTBEAT_GRACE_MS = 20000;

/** The token of this browser tab (sessionStorage only: it ends with the tab). */
export function savedToken() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export function saveToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** An API error with the server's code and message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Whether `path` fits `pattern` segment by segment (`{x}` is one non-empty segment), as the server's table. */
function fits(pattern, path) {
  const want = pattern.split("/");
  const got = path.split("/");
  if (want.length !== got.length) return false;
  return want.every((w, i) => (w.startsWith("{") && w.endsWith("}") ? got[i] !== "" : w === got[i]));
}

export class Api {
  constructor(token) {
    this.token = token;
    this.origins = [location.origin];
    this.current = 0;
    this.allowed = [];
    this.who = null;
    this.onServer = () => {};
  }

  get origin() {
    return this.origins[this.current % this.origins.length];
  }

  headers(extra) {
    const h = Object.assign({}, extra);
    if (this.token) h.Authorization = `Bearer ${this.token}`;
    return h;
  }

  /**
   * One request. A GET moves on to the next member on a network failure or a 503, each member at most once;
   * a write is never sent twice (it may have been carried out): it moves to the next member for the next
   * try and fails, so the person clicks again.
   */
  async request(method, path, body) {
    let last = null;
    for (let tries = 0; tries < Math.max(1, this.origins.length); tries++) {
      const init = { method, headers: this.headers(body === undefined ? {} : { "Content-Type": "application/json" }), cache: "no-store" };
      if (body !== undefined) init.body = JSON.stringify(body);
      let res;
      try {
        res = await fetch(this.origin + path, init);
      } catch (e) {
        last = e;
        this.failover();
        if (method !== "GET") throw new Error(`the server did not answer; now using ${this.origin}: try again`);
        continue;
      }
      const text = await res.text();
      let json = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch (e) {
        json = null;
      }
      if (res.ok) return json;
      const err = (json && json.error) || {};
      last = new ApiError(res.status, err.code || "http_error", err.message || res.statusText);
      if (res.status === 503 && method === "GET") {
        this.failover();
        continue;
      }
      throw last;
    }
    throw last || new Error("no server answered");
  }

  get(path) {
    return this.request("GET", path);
  }

  post(path, body) {
    return this.request("POST", path, body === undefined ? {} : body);
  }

  /** Moves to the next known member. */
  failover() {
    this.current = (this.current + 1) % this.origins.length;
    this.onServer(this.origin);
  }

  /** Learns the members (for failover) from a GET /v1/cluster answer. */
  learnMembers(cluster) {
    const scheme = location.protocol;
    const known = cluster.members.map((m) => `${scheme}//${m.http_addr}`);
    const here = this.origin;
    this.origins = [here, ...known.filter((o) => o !== here)];
    this.current = 0;
  }

  /** Who the token is and what it may do. */
  async whoami() {
    this.who = await this.get("/v1/whoami");
    this.allowed = this.who.allowed;
    return this.who;
  }

  /** Whether the token may call `method path` (the first matching row of the route table decides). */
  may(method, path) {
    return this.allowed.some((a) => a.method === method && fits(a.pattern, path));
  }

  /**
   * Follows GET /v1/watch for ever: `onEvent({applied, server, leader, term})` per event. When the stream
   * ends, fails or stays silent past the heartbeat, the next member is tried.
   */
  async watch(onEvent, onState) {
    for (;;) {
      const ctrl = new AbortController();
      let timer = null;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => ctrl.abort(), HEARTBEAT_GRACE_MS);
      };
      try {
        arm();
        const res = await fetch(this.origin + "/v1/watch", { headers: this.headers({}), signal: ctrl.signal, cache: "no-store" });
        if (!res.ok) throw new ApiError(res.status, "watch", `watch answered ${res.status}`);
        onState(`live via ${this.origin}`, true);
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          arm();
          buffer += value;
          let cut;
          while ((cut = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const data = block.split("\n").find((l) => l.startsWith("data: "));
            if (data) onEvent(JSON.parse(data.slice(6)));
          }
        }
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) {
          onState("token refused", false);
          clearTimeout(timer);
          return;
        }
      }
      clearTimeout(timer);
      onState(`lost ${this.origin}, trying another member`, false);
      this.failover();
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
