import { allPages, api, mapLimited } from "../api.js";
import { h, table } from "../h.js";
import { sessionPosition, sessionsHeld, teamGraph } from "../team.js";
import { handoffGraph } from "./graph.js";

/**
 * The team: every agent with its kind, status, load, triggers and tools, and the handoff
 * graph drawn from the registry. Opened from a session (`#/agents?session=<id>`), the
 * session's chain, agent and edge are marked.
 */

/** The registry, each agent's load and what it waits for, and the sessions each holds (from the sessions index). */
export async function teamState() {
  const [agents, tools, sessions] = await Promise.all([
    allPages("/v1/agents"),
    allPages("/v1/tools"),
    allPages("/v1/sessions?status=active", { pages: 5 }),
  ]);
  const definitions = agents.items.map((a) => a.definition);
  const states = await mapLimited(definitions, 6, async (d) => {
    const name = encodeURIComponent(d.name);
    const [load, blocking] = await Promise.all([
      api("GET", `/v1/agents/${name}/load`).catch(() => null),
      api("GET", `/v1/agents/${name}/blocking`).catch(() => null),
    ]);
    return [d.name, load, blocking];
  });
  return {
    definitions,
    tools: new Map(tools.items.map((t) => [t.name, t])),
    loads: new Map(states.map(([name, load]) => [name, load])),
    blocking: new Map(states.map(([name, , blocking]) => [name, blocking])),
    held: sessionsHeld(sessions.items),
    heldTruncated: sessions.truncated,
  };
}

const triggersText = (t) =>
  [
    t.keywords.length
      ? `${t.keywords.length} keywords (${t.keywords.slice(0, 3).join(", ")}${t.keywords.length > 3 ? ", …" : ""})`
      : null,
    t.patterns.length ? `${t.patterns.length} patterns` : null,
    t.examples.length ? `${t.examples.length} examples` : null,
    `priority ${t.priority}`,
  ]
    .filter(Boolean)
    .join(" · ");

const toolsText = (tools) => {
  const gated = new Set(tools.confirmation?.require ?? []);
  return tools.allow.length ? tools.allow.map((t) => (gated.has(t) ? `${t} (approval)` : t)).join(", ") : "—";
};

function agentRows(graph, definitions) {
  return definitions.map((d) => {
    const node = graph.nodes.find((n) => n.id === d.name);
    return h(
      "tr",
      { "data-testid": "agent-row", "data-agent": d.name },
      h(
        "td",
        {},
        h("a", { href: `#/agents/${encodeURIComponent(d.name)}` }, d.name),
        d.title ? h("div", { class: "muted" }, d.title) : null,
      ),
      h("td", {}, d.kind),
      h("td", {}, h("span", { class: `pill ${node.status}`, "data-testid": "agent-status" }, node.status)),
      h("td", { "data-testid": "agent-load" }, node.load),
      h("td", {}, triggersText(d.triggers)),
      h("td", {}, toolsText(d.tools)),
      h("td", {}, d.handoffs.map((e) => e.to).join(", ") || "—"),
    );
  });
}

function handoffRows(graph) {
  if (graph.edges.length === 0)
    return [h("tr", {}, h("td", { colspan: 7, class: "muted" }, "No agent lists a handoff yet."))];
  return graph.edges.map((e) =>
    h(
      "tr",
      { "data-testid": "handoff-row", "data-from": e.from, "data-to": e.to },
      h("td", {}, e.from),
      h("td", {}, e.to),
      h("td", {}, e.condition ? h("code", {}, e.condition) : e.when === "manual" ? "when the agent chooses" : e.when),
      h("td", {}, e.requires_approval ? "yes" : "no"),
      h("td", {}, e.trigger ?? "—"),
      h("td", {}, e.filter ?? "—"),
      h("td", {}, e.description || "—"),
    ),
  );
}

export async function render(view, params, app) {
  const query = params.query ?? new URLSearchParams();
  const sessionId = query.get("session");
  let state;
  let session = null;
  try {
    [state, session] = await Promise.all([
      teamState(),
      sessionId ? api("GET", `/v1/sessions/${encodeURIComponent(sessionId)}`) : null,
    ]);
  } catch (e) {
    app.fail(e);
    view.replaceChildren(h("h1", {}, "Agents"));
    return;
  }
  const graph = teamGraph(state.definitions, state);
  const position = session ? sessionPosition(session) : null;
  const drawn = handoffGraph(graph, position);

  const note = position
    ? h(
        "p",
        { class: "card", "data-testid": "graph-session" },
        "Session ",
        h("a", { href: `#/sessions/${encodeURIComponent(session.id)}` }, h("code", {}, session.id)),
        ` is with ${position.current ?? "nobody"}`,
        position.edge
          ? `, on the edge ${position.edge.from} → ${position.edge.to}${position.edge.in_flight ? " (handoff in flight)" : ""}, marked below.`
          : " (no handoff on its stack yet).",
        position.chain.length > 1 ? ` Its chain: ${position.chain.join(" › ")}.` : "",
      )
    : null;

  const parts = [
    h(
      "div",
      { class: "head" },
      h("h1", {}, "Agents"),
      h(
        "div",
        { class: "tools" },
        h("button", { type: "button", class: "quiet", onclick: () => render(view, params, app) }, "Refresh"),
      ),
    ),
    h(
      "p",
      { class: "muted" },
      `${state.definitions.length} agents in the registry. Load is each agent's capacity leases against its max_concurrent_sessions, or the active sessions it holds (from the sessions index, a moment behind${state.heldTruncated ? "; first 1,000 sessions" : ""}).`,
    ),
    note,
    h(
      "section",
      { class: "card", "data-testid": "team-graph", "aria-labelledby": "graph-title" },
      h("h2", { id: "graph-title" }, "Who may hand off to whom"),
      drawn.element,
    ),
    h(
      "section",
      { "aria-labelledby": "agents-title" },
      h("h2", { id: "agents-title" }, "The agents"),
      table(
        "agents-table",
        ["Agent", "Kind", "Status", "Load", "Triggers", "Tools", "Hands off to"],
        agentRows(graph, state.definitions),
      ),
    ),
    h(
      "section",
      { "aria-labelledby": "handoffs-title" },
      h("h2", { id: "handoffs-title" }, "The handoff graph in words"),
      h("p", { class: "muted" }, "One row per handoff entry: the same as the drawing above."),
      table(
        "handoff-table",
        ["From", "To", "When", "Needs approval", "Trigger", "Filters", "Description"],
        handoffRows(graph),
      ),
    ),
  ];
  view.replaceChildren(...parts.filter(Boolean));
  const focus = query.get("agent");
  if (focus) view.querySelector(`[data-testid="graph-node"][data-agent="${CSS.escape(focus)}"]`)?.focus();
}
