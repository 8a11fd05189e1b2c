// The API docs page (/docs): renders /openapi.json (served by the same server) with no library and
// nothing remote: each route with its roles, parameters, request body and answers, schemas expanded.

const METHODS = ["get", "post", "put", "patch", "delete"];

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

/** A schema as a short TypeScript-like text, `$ref`s expanded up to `depth` levels. */
function show(schema, components, depth = 0, seen = new Set()) {
  if (!schema) return "any";
  if (schema.$ref) {
    const name = schema.$ref.split("/").pop();
    if (seen.has(name) || depth > 4) return name;
    return `${name} ${show(components[name], components, depth + 1, new Set([...seen, name]))}`;
  }
  const pad = "  ".repeat(depth + 1);
  if (schema.oneOf || schema.anyOf) {
    return (schema.oneOf || schema.anyOf).map((s) => show(s, components, depth, seen)).join(" | ");
  }
  if (schema.allOf) return schema.allOf.map((s) => show(s, components, depth, seen)).join(" & ");
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  const types = [].concat(schema.type || []);
  if (types.includes("array")) return `[${show(schema.items, components, depth, seen)}]`;
  if (types.includes("object") || schema.properties) {
    const required = new Set(schema.required || []);
    const lines = Object.entries(schema.properties || {}).map(([k, v]) => {
      const opt = required.has(k) ? "" : "?";
      const doc = v.description ? `  // ${v.description.split("\n")[0]}` : "";
      return `${pad}${k}${opt}: ${show(v, components, depth + 1, seen)}${doc}`;
    });
    if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
      lines.push(`${pad}[key: string]: ${show(schema.additionalProperties, components, depth + 1, seen)}`);
    }
    return lines.length ? `{\n${lines.join("\n")}\n${"  ".repeat(depth)}}` : "{}";
  }
  const nullable = types.includes("null") && types.length > 1;
  const base = types.filter((t) => t !== "null").join(" | ") || "any";
  return nullable ? `${base} | null` : base;
}

function route(path, method, op, components) {
  const roles = (op["x-roles"] || []).join(", ");
  const who = op["x-permission"] === "public" ? "public" : `roles: ${roles}`;
  const summary = el("summary", {},
    el("span", { class: `method ${method.toUpperCase()}` }, method.toUpperCase()),
    el("span", { class: "path" }, path),
    el("span", {}, op.summary || ""),
    el("span", { class: "roles" }, who));
  const body = el("div", { class: "body" });
  if (op.description) body.append(el("p", {}, op.description));
  const params = op.parameters || [];
  if (params.length) {
    const table = el("table", {}, el("tr", {}, el("th", {}, "parameter"), el("th", {}, "in"), el("th", {}, "type"), el("th", {}, "")));
    for (const p of params) {
      table.append(el("tr", {}, el("td", {}, p.name), el("td", {}, p.in),
        el("td", {}, show(p.schema, components)), el("td", {}, p.description || "")));
    }
    body.append(table);
  }
  const request = op.requestBody?.content?.["application/json"]?.schema;
  if (request) body.append(el("h4", {}, "Request body (application/json)"), el("pre", {}, show(request, components)));
  body.append(el("h4", {}, "Answers"));
  for (const [status, response] of Object.entries(op.responses || {})) {
    const r = response.$ref ? { description: "error", content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } } } : response;
    const [type, content] = Object.entries(r.content || {})[0] || [];
    const line = el("div", { class: "answer", "data-status": status }, el("b", {}, status), " ", r.description || "", type ? ` (${type})` : "");
    body.append(line);
    if (content?.schema && type === "application/json" && !response.$ref) {
      body.append(el("pre", {}, show(content.schema, components)));
    }
  }
  const block = el("details", { class: "route", "data-method": method.toUpperCase(), "data-path": path }, summary, body);
  block.dataset.text = `${method} ${path} ${op.summary || ""} ${roles}`.toLowerCase();
  return block;
}

async function main() {
  const main = document.getElementById("routes");
  try {
    const answer = await fetch("/openapi.json");
    if (!answer.ok) throw new Error(`GET /openapi.json: ${answer.status}`);
    const spec = await answer.json();
    document.getElementById("version").textContent = `${spec.info.version} · OpenAPI ${spec.openapi}`;
    const components = spec.components?.schemas || {};
    main.replaceChildren();
    for (const path of Object.keys(spec.paths).sort()) {
      for (const method of METHODS) {
        const op = spec.paths[path][method];
        if (op) main.append(route(path, method, op, components));
      }
    }
    main.dataset.routes = String(main.children.length);
  } catch (e) {
    main.replaceChildren(el("p", { id: "error" }, `Cannot load the API description: ${e.message}`));
  }
  document.getElementById("filter").addEventListener("input", (ev) => {
    const words = ev.target.value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const block of main.querySelectorAll("details.route")) {
      block.classList.toggle("hidden", !words.every((w) => block.dataset.text.includes(w)));
    }
  });
}

main();
