// The API reference page: renders /openapi.json (served by the Worker, built from the same
// zod schemas that validate requests) with no framework and nothing fetched from elsewhere.

const METHODS = ["get", "post", "put", "patch", "delete"];

/** A tiny element builder; text is always set as text, never parsed as HTML. */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Inline `code` spans in a description; the rest stays text. */
function prose(text) {
  return h(
    "p",
    { class: "prose" },
    ...String(text)
      .split(/(`[^`]+`)/)
      .map((part) => (part.startsWith("`") && part.endsWith("`") ? h("code", {}, part.slice(1, -1)) : part)),
  );
}

const anchorOf = (method, path) => `op-${method}-${path.replace(/[^a-z0-9]+/gi, "-").replace(/^-|-$/g, "")}`;
const refName = (ref) => ref.split("/").pop();

/** One line saying what a schema is: `string`, `array of Session`, `"a" | "b"`. */
function typeLabel(schema) {
  if (!schema || Object.keys(schema).length === 0) return h("span", { class: "type" }, "any");
  if (schema.$ref) return h("a", { class: "type ref", href: `#schema-${refName(schema.$ref)}` }, refName(schema.$ref));
  if (schema.const !== undefined) return h("span", { class: "type" }, JSON.stringify(schema.const));
  if (schema.enum) return h("span", { class: "type" }, schema.enum.map((v) => JSON.stringify(v)).join(" | "));
  for (const key of ["anyOf", "oneOf"]) {
    if (schema[key])
      return h(
        "span",
        { class: "type" },
        ...schema[key].flatMap((s, i) => (i ? [" | ", typeLabel(s)] : [typeLabel(s)])),
      );
  }
  if (schema.allOf)
    return h(
      "span",
      { class: "type" },
      ...schema.allOf.flatMap((s, i) => (i ? [" & ", typeLabel(s)] : [typeLabel(s)])),
    );
  const types = [].concat(schema.type ?? []);
  if (types.includes("array"))
    return h(
      "span",
      { class: "type" },
      "array of ",
      typeLabel(schema.items ?? {}),
      types.includes("null") ? " | null" : "",
    );
  if (
    types.includes("object") &&
    !schema.properties &&
    schema.additionalProperties &&
    schema.additionalProperties !== true
  ) {
    return h("span", { class: "type" }, "map of ", typeLabel(schema.additionalProperties));
  }
  return h("span", { class: "type" }, types.join(" | ") || "any");
}

/** Limits worth knowing: lengths, ranges, patterns, formats, defaults. */
function constraints(schema) {
  const parts = [];
  if (schema.format) parts.push(schema.format);
  if (schema.minLength !== undefined) parts.push(`≥ ${schema.minLength} chars`);
  if (schema.maxLength !== undefined) parts.push(`≤ ${schema.maxLength} chars`);
  if (schema.minimum !== undefined && schema.minimum > -1e15) parts.push(`≥ ${schema.minimum}`);
  if (schema.maximum !== undefined && schema.maximum < 1e15) parts.push(`≤ ${schema.maximum}`);
  if (schema.minItems !== undefined) parts.push(`≥ ${schema.minItems} items`);
  if (schema.maxItems !== undefined) parts.push(`≤ ${schema.maxItems} items`);
  if (schema.pattern) parts.push(`matches ${schema.pattern}`);
  if (schema.default !== undefined) parts.push(`default ${JSON.stringify(schema.default)}`);
  return parts.length ? h("span", { class: "limits" }, parts.join(" · ")) : null;
}

/** The properties of an object schema as a nested list; refs link to their component. */
function schemaTree(schema, depth = 0) {
  const target = schema?.items && !schema.properties ? schema.items : schema;
  if (!target?.properties || depth > 6) return null;
  const required = new Set(target.required ?? []);
  return h(
    "ul",
    { class: "props" },
    Object.entries(target.properties).map(([name, prop]) => {
      const nested = prop.$ref ? null : schemaTree(prop, depth + 1);
      const line = [
        h("code", { class: "name" }, name),
        required.has(name) ? h("span", { class: "req" }, "required") : null,
        " ",
        typeLabel(prop),
        " ",
        constraints(prop),
      ];
      return h("li", {}, nested ? h("details", {}, h("summary", {}, ...line), nested) : h("div", {}, ...line));
    }),
  );
}

function schemaBlock(schema) {
  return h("div", { class: "schema" }, h("div", {}, typeLabel(schema), " ", constraints(schema)), schemaTree(schema));
}

function parametersBlock(parameters) {
  if (!parameters?.length) return null;
  return h(
    "table",
    { class: "params" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col" }, "Name"),
        h("th", { scope: "col" }, "In"),
        h("th", { scope: "col" }, "Type"),
        h("th", { scope: "col" }, "Notes"),
      ),
    ),
    h(
      "tbody",
      {},
      parameters.map((p) =>
        h(
          "tr",
          {},
          h("td", {}, h("code", {}, p.name), p.required ? h("span", { class: "req" }, "required") : null),
          h("td", {}, p.in),
          h("td", {}, typeLabel(p.schema)),
          h("td", {}, constraints(p.schema), p.description ? ` ${p.description}` : ""),
        ),
      ),
    ),
  );
}

function operationCard(method, path, op) {
  const responses = Object.entries(op.responses ?? {});
  return h(
    "section",
    {
      class: "op",
      id: anchorOf(method, path),
      "data-testid": "docs-operation",
      "data-search": `${method} ${path} ${op.summary ?? ""} ${(op.tags ?? []).join(" ")}`.toLowerCase(),
    },
    h(
      "h3",
      {},
      h("span", { class: `method ${method}` }, method.toUpperCase()),
      " ",
      h("code", { class: "path" }, path),
    ),
    h("p", { class: "summary" }, op.summary ?? ""),
    op.description ? prose(op.description) : null,
    op.security && op.security.length === 0 ? h("p", { class: "note" }, "No API key.") : null,
    parametersBlock(op.parameters),
    op.requestBody
      ? h(
          "div",
          {},
          h("h4", {}, "Request body ", h("span", { class: "media" }, Object.keys(op.requestBody.content).join(", "))),
          schemaBlock(op.requestBody.content["application/json"]?.schema),
        )
      : null,
    h("h4", {}, "Responses"),
    h(
      "ul",
      { class: "responses" },
      responses.map(([status, response]) => {
        const schema = response.content?.["application/json"]?.schema;
        const codes = schema?.properties?.error?.properties?.code?.enum;
        const head = [
          h("span", { class: `status s${status[0]}` }, status),
          " ",
          codes
            ? h("span", {}, "Error: ", ...codes.flatMap((c, i) => (i ? [", ", h("code", {}, c)] : [h("code", {}, c)])))
            : response.description,
        ];
        return h(
          "li",
          {},
          schema && !codes ? h("details", {}, h("summary", {}, ...head), schemaBlock(schema)) : h("div", {}, ...head),
        );
      }),
    ),
  );
}

function render(doc) {
  const main = document.getElementById("main");
  const toc = document.getElementById("toc-list");
  main.replaceChildren(
    h("h2", {}, doc.info.title, " ", h("small", {}, doc.info.version)),
    prose(doc.info.description ?? ""),
  );
  const byTag = new Map((doc.tags ?? []).map((t) => [t.name, { ...t, ops: [] }]));
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? "other";
      if (!byTag.has(tag)) byTag.set(tag, { name: tag, ops: [] });
      byTag.get(tag).ops.push([method, path, op]);
    }
  }
  for (const tag of byTag.values()) {
    if (tag.ops.length === 0) continue;
    main.append(
      h("h2", { id: `tag-${tag.name}`, class: "tag" }, tag.name),
      tag.description ? prose(tag.description) : null,
      ...tag.ops.map(([m, p, op]) => operationCard(m, p, op)),
    );
    toc.append(
      h(
        "li",
        { class: "toc-tag" },
        h("a", { href: `#tag-${tag.name}` }, tag.name),
        h(
          "ul",
          {},
          tag.ops.map(([m, p, op]) =>
            h(
              "li",
              { "data-search": `${m} ${p} ${op.summary ?? ""} ${tag.name}`.toLowerCase() },
              h("a", { href: `#${anchorOf(m, p)}` }, h("span", { class: `method ${m}` }, m.toUpperCase()), " ", p),
            ),
          ),
        ),
      ),
    );
  }
  const schemas = Object.entries(doc.components?.schemas ?? {});
  main.append(
    h("h2", { id: "schemas", class: "tag" }, "Schemas"),
    ...schemas.map(([name, schema]) =>
      h("section", { class: "op", id: `schema-${name}` }, h("h3", {}, h("code", {}, name)), schemaBlock(schema)),
    ),
  );
  toc.append(h("li", { class: "toc-tag" }, h("a", { href: "#schemas" }, "Schemas")));
  if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
}

/** Hides operations (and their table-of-contents lines) that do not contain every word typed. */
function filter(text) {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  for (const el of document.querySelectorAll("[data-search]"))
    el.hidden = !words.every((w) => el.dataset.search.includes(w));
}

document.getElementById("filter").addEventListener("input", (event) => filter(event.target.value));

fetch("/openapi.json")
  .then((response) => {
    if (!response.ok) throw new Error(`/openapi.json answered ${response.status}`);
    return response.json();
  })
  .then(render)
  .catch((error) => {
    document.getElementById("loading").textContent = `Could not load the API description: ${error.message}`;
  });
