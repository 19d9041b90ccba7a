import { allPages, api } from "../api.js";
import { h, table, when } from "../h.js";
import { agentStatus, edgeLabel, loadText } from "../team.js";
import { definitionEditor } from "./agent-edit.js";
import { historyCards, loadHistory } from "./agent-history.js";

/**
 * One agent: its state (status, load and leases, what it waits for), its triggers, tools
 * and handoffs both ways, the inputs it took unsure and those the fallback took (to add as
 * examples), and its definition as a Markdown agent file to copy, or to edit, try and save.
 */

const list = (items) => (items.length ? items.join(", ") : "—");

function facts(definition, load, blocking, held) {
  const status = agentStatus(definition, load, held, blocking);
  return h(
    "dl",
    { class: "facts" },
    h("dt", {}, "Kind"),
    h("dd", { "data-testid": "agent-kind" }, definition.kind),
    h("dt", {}, "Status"),
    h("dd", {}, h("span", { class: `pill ${status}`, "data-testid": "agent-status" }, status)),
    h("dt", {}, "Load"),
    h("dd", { "data-testid": "agent-load" }, loadText(definition, load, held)),
    h("dt", {}, "Waiting for"),
    h(
      "dd",
      {},
      blocking && blocking.status !== "none"
        ? `${blocking.waiting_for} (${blocking.status}${blocking.reason ? `: ${blocking.reason}` : ""})`
        : "nothing",
    ),
    h("dt", {}, "Turn timeout"),
    h("dd", {}, definition.timeout_s ? `${definition.timeout_s} s` : "the default for its kind"),
    definition.model ? [h("dt", {}, "Model"), h("dd", {}, definition.model)] : null,
    definition.endpoint ? [h("dt", {}, "Endpoint"), h("dd", {}, h("code", {}, definition.endpoint))] : null,
    h("dt", {}, "Enabled"),
    h("dd", {}, definition.enabled ? "yes" : "no: neither routed to nor offered as a handoff"),
  );
}

function leases(load) {
  if (!load || load.leases.length === 0) return null;
  return table(
    "agent-leases",
    ["Session", "Handoff", "State", "Since"],
    load.leases.map((l) =>
      h(
        "tr",
        {},
        h("td", {}, h("a", { href: `#/sessions/${encodeURIComponent(l.session_id)}` }, l.session_id)),
        h("td", {}, l.handoff_id),
        h("td", {}, l.state),
        h("td", {}, when(l.created_at)),
      ),
    ),
  );
}

function triggers(t) {
  return h(
    "dl",
    { class: "facts" },
    h("dt", {}, "Keywords"),
    h("dd", {}, list(t.keywords)),
    h("dt", {}, "Patterns"),
    h("dd", {}, t.patterns.length ? t.patterns.map((p) => h("code", { class: "pattern" }, p)) : "—"),
    h("dt", {}, "Examples"),
    h(
      "dd",
      {},
      t.examples.length
        ? h(
            "ul",
            { class: "examples", "data-testid": "agent-examples", tabindex: "0", "aria-label": "Examples" },
            t.examples.map((e) => h("li", { "data-testid": "agent-example" }, e)),
          )
        : "—",
    ),
    h("dt", {}, "Priority"),
    h("dd", {}, t.priority),
  );
}

function tools(policy, registry) {
  const gated = new Set(policy.confirmation.require);
  const rows = policy.allow.map((name) => {
    const tool = registry.get(name);
    return h(
      "tr",
      { "data-testid": "agent-tool" },
      h("td", {}, name),
      h(
        "td",
        {},
        tool
          ? tool.kind
          : ["ask_agent", "notify_agent", "broadcast", "fan_out"].includes(name)
            ? "Relay's"
            : "not in the registry",
      ),
      h("td", {}, gated.has(name) ? `yes, within ${policy.confirmation.timeout_s} s` : "no"),
      h("td", {}, tool?.description ?? "—"),
    );
  });
  if (rows.length === 0) return h("p", { class: "muted" }, "No tools: it may only answer and hand off.");
  return table("agent-tools", ["Tool", "Kind", "Needs approval", "Description"], rows);
}

function handoffs(name, definition, definitions) {
  const out = definition.handoffs.map((e) =>
    h(
      "tr",
      { "data-testid": "agent-handoff-out" },
      h("td", {}, h("a", { href: `#/agents/${encodeURIComponent(e.to)}` }, e.to)),
      h("td", {}, edgeLabel(e).join("; ") || "when the agent chooses"),
      h("td", {}, e.description ?? "—"),
    ),
  );
  const into = definitions.filter((d) => d.handoffs.some((e) => e.to === name)).map((d) => d.name);
  return [
    out.length
      ? table("agent-handoffs", ["To", "Terms", "Description"], out)
      : h("p", { class: "muted" }, "It hands off to nobody."),
    h(
      "p",
      {},
      "Takes over from: ",
      into.length
        ? into.map((n, i) => [i ? ", " : "", h("a", { href: `#/agents/${encodeURIComponent(n)}` }, n)])
        : "nobody",
      ". ",
      h("a", { href: `#/agents?agent=${encodeURIComponent(name)}` }, "Show on the graph"),
    ),
  ];
}

export async function render(view, params, app) {
  // After a write from this page; not over another view the user has gone on to meanwhile.
  const shown = location.hash;
  const redraw = async () => {
    if (location.hash === shown) await render(view, params, app);
  };
  const name = params.name;
  const enc = encodeURIComponent(name);
  let stored;
  let load = null;
  let blocking = null;
  let held = 0;
  let registry = new Map();
  let definitions = [];
  let history;
  try {
    stored = await api("GET", `/v1/agents/${enc}`);
    const [l, b, sessions, t, all, recorded] = await Promise.all([
      api("GET", `/v1/agents/${enc}/load`).catch(() => null),
      api("GET", `/v1/agents/${enc}/blocking`).catch(() => null),
      allPages(`/v1/sessions?status=active&agent=${enc}`, { pages: 5 }),
      allPages("/v1/tools"),
      allPages("/v1/agents"),
      loadHistory(name),
    ]);
    history = recorded;
    [load, blocking, held] = [l, b, sessions.items.length];
    registry = new Map(t.items.map((tool) => [tool.name, tool]));
    definitions = all.items.map((a) => a.definition);
  } catch (e) {
    app.fail(e);
    view.replaceChildren(h("p", {}, h("a", { href: "#/agents" }, "← Agents")), h("h1", {}, name));
    return;
  }
  const d = stored.definition;
  const parts = [
    h("p", {}, h("a", { href: "#/agents" }, "← Agents")),
    h(
      "section",
      { class: "card", "data-testid": "agent-header" },
      h("h1", {}, d.title ?? d.name, d.title ? h("span", { class: "muted" }, ` ${d.name}`) : null),
      d.description ? h("p", {}, d.description) : null,
      facts(d, load, blocking, held),
      h("p", { class: "muted" }, "Registered ", when(stored.created_at), ", changed ", when(stored.updated_at), "."),
    ),
    leases(load),
    h(
      "div",
      { class: "split" },
      h("section", { class: "card" }, h("h2", {}, "Triggers"), triggers(d.triggers)),
      h(
        "section",
        { class: "card" },
        h("h2", {}, "Capabilities"),
        d.capabilities.length
          ? h(
              "ul",
              {},
              d.capabilities.map((c) =>
                h("li", {}, `${c.name} (${c.proficiency})${c.tags.length ? `: ${c.tags.join(", ")}` : ""}`),
              ),
            )
          : h("p", { class: "muted" }, "None declared."),
      ),
    ),
    h("section", {}, h("h2", {}, "Tools"), tools(d.tools, registry)),
    h("section", {}, h("h2", {}, "Handoffs"), handoffs(name, d, definitions)),
    historyCards(name, d.triggers.examples, history, app, redraw),
    h(
      "section",
      { class: "card", "data-testid": "agent-definition" },
      h("h2", {}, "Definition"),
      definitionEditor(d, app, { onSaved: redraw }),
    ),
  ];
  view.replaceChildren(...parts.flat().filter(Boolean));
}
