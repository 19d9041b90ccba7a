// The team as the dashboard shows it, from the registry's definitions and each agent's
// load: who exists, in what state, and who may hand off to whom under which terms
// (docs/agents.md, docs/handoffs.md, docs/triggers.md). Pure: no DOM.

/**
 * One word for an agent's state: `disabled` (its definition says so), `paused` (its capacity
 * object says so), `full` (every seat of `max_concurrent_sessions` leased), `busy` (holding
 * sessions or leases, or waiting on another agent), else `idle`; `unknown` while its load is unread.
 */
export function agentStatus(
  /** @type {any} */ definition,
  /** @type {any} */ load,
  held = 0,
  /** @type {{ status: string } | null} */ blocking = null,
) {
  if (definition.enabled === false) return "disabled";
  if (!load) return "unknown";
  if (load.status === "paused") return "paused";
  const capacity = load.max_concurrent_sessions ?? definition.max_concurrent_sessions ?? null;
  if (capacity !== null && load.active_leases >= capacity) return "full";
  if (load.active_leases > 0 || held > 0 || (blocking && blocking.status !== "none")) return "busy";
  return "idle";
}

/** Load against capacity: "2 of 5 seats" for a capped agent, else the sessions it holds. */
export function loadText(definition, load, held = 0) {
  const capacity = load?.max_concurrent_sessions ?? definition.max_concurrent_sessions ?? null;
  if (capacity !== null) return `${load ? load.active_leases : "?"} of ${capacity} seats`;
  return `${held} session${held === 1 ? "" : "s"} · no limit`;
}

/** A trigger in a few words (docs/triggers.md). */
export function triggerText(trigger) {
  if (!trigger) return null;
  switch (trigger.type) {
    case "condition":
      return `when ${trigger.expression}`;
    case "event":
      return `on event ${trigger.event}${trigger.expression ? ` if ${trigger.expression}` : ""}`;
    case "explicit":
      return "fired by name";
    case "timeout":
      return `after ${trigger.timeout_s} s idle`;
    case "error":
      return `on error ${trigger.error_types.join(", ")}`;
    case "capability":
      return `on missing capability${trigger.capabilities ? ` ${trigger.capabilities.join(", ")}` : ""}`;
    default:
      return trigger.type;
  }
}

/** A handoff entry's filter in a few words; null when it changes nothing. */
export function filterText(filter) {
  if (!filter) return null;
  const parts = [];
  if (filter.redact_pii) parts.push("PII redacted");
  if (filter.max_history !== undefined) parts.push(`last ${filter.max_history} items`);
  if (filter.remove_tool_items) parts.push("no tool items");
  if (filter.history && filter.history !== "full") parts.push(`history ${filter.history}`);
  return parts.length ? parts.join(", ") : null;
}

/** The lines an edge is labelled with: condition, approval, trigger, filters (empty for a plain entry). */
export function edgeLabel(entry) {
  return [
    entry.condition ? `if ${entry.condition}` : null,
    entry.requires_approval ? "needs approval" : null,
    entry.trigger
      ? `${entry.when}: ${triggerText(entry.trigger)}`
      : entry.when !== "manual" && !entry.condition
        ? entry.when
        : null,
    filterText(entry.filter) ? `filter: ${filterText(entry.filter)}` : null,
    entry.input_schema ? "typed input" : null,
  ].filter(Boolean);
}

/**
 * Nodes and edges from the registry's definitions: one node per agent (plus one per target
 * that is not registered, marked missing), one edge per handoff entry, in definition order.
 */
export function teamGraph(definitions, state = {}) {
  const { loads = new Map(), held = new Map(), blocking = new Map() } = state;
  const names = new Set(definitions.map((d) => d.name));
  const nodes = definitions.map((d) => ({
    id: d.name,
    title: d.title ?? d.name,
    kind: d.kind ?? "llm",
    status: agentStatus(d, loads.get(d.name), held.get(d.name) ?? 0, blocking.get(d.name) ?? null),
    load: loadText(d, loads.get(d.name), held.get(d.name) ?? 0),
    missing: false,
  }));
  const edges = [];
  for (const d of definitions)
    for (const entry of d.handoffs ?? []) {
      if (!names.has(entry.to)) {
        names.add(entry.to);
        nodes.push({
          id: entry.to,
          title: entry.to,
          kind: "missing",
          status: "not registered",
          load: "",
          missing: true,
        });
      }
      edges.push({
        id: `${d.name}->${entry.to}`,
        from: d.name,
        to: entry.to,
        when: entry.when ?? "manual",
        condition: entry.condition ?? null,
        requires_approval: entry.requires_approval === true,
        trigger: triggerText(entry.trigger),
        filter: filterText(entry.filter),
        description: entry.description ?? "",
        label: edgeLabel({ when: "manual", ...entry }),
      });
    }
  return { nodes, edges };
}

/**
 * Where a session stands on the graph: its chain of agents, its current agent, and the
 * edge it is on — the handoff in flight, else the whitelist entry that put the current
 * agent on top of its handoff stack (null at the root, or after a return).
 */
export function sessionPosition(session) {
  const stack = session.handoff_stack ?? [];
  const flight = session.in_flight_handoff;
  const edge =
    flight?.target && flight.mode !== "return"
      ? { from: flight.source, to: flight.target, in_flight: true }
      : stack.length >= 2
        ? { from: stack[stack.length - 2], to: stack[stack.length - 1], in_flight: false }
        : null;
  return { current: session.current_agent, chain: stack, edge };
}

/** Sessions held per agent, from pages of the sessions index. */
export function sessionsHeld(rows) {
  const held = new Map();
  for (const row of rows)
    if (row.status === "active") held.set(row.current_agent, (held.get(row.current_agent) ?? 0) + 1);
  return held;
}
