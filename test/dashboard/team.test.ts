/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import {
  agentStatus,
  edgeLabel,
  loadText,
  sessionPosition,
  sessionsHeld,
  teamGraph,
  triggerText,
} from "../../public/app/team.js";
import { parseAgentFile } from "../../src/registry/agent-file";
import { AgentDefinition } from "../../src/schemas/agent";

/** The team as the dashboard draws it: statuses, the handoff graph's nodes and edges, a session's place on it. */

const demo = Object.entries(
  import.meta.glob("../../agents/*.md", { query: "?raw", import: "default", eager: true }) as Record<string, string>,
).map(([path, text]) => parseAgentFile(text, path));

const load = (active_leases: number, max: number | null = null, status = "active") => ({
  status,
  max_concurrent_sessions: max,
  active_leases,
  leases: [],
});

describe("agentStatus", () => {
  const agent = AgentDefinition.parse({ name: "a" });
  const capped = AgentDefinition.parse({ name: "b", max_concurrent_sessions: 2 });

  it("says disabled, paused, full, busy or idle, in that order of precedence", () => {
    expect(agentStatus({ ...agent, enabled: false }, load(0, null, "paused"))).toBe("disabled");
    expect(agentStatus(capped, load(2, 2, "paused"))).toBe("paused");
    expect(agentStatus(capped, load(2, 2))).toBe("full");
    expect(agentStatus(capped, load(1, 2))).toBe("busy");
    expect(agentStatus(agent, load(0), 3)).toBe("busy");
    expect(agentStatus(agent, load(0), 0, { status: "internal" })).toBe("busy");
    expect(agentStatus(agent, load(0), 0, { status: "none" })).toBe("idle");
    expect(agentStatus(agent, undefined)).toBe("unknown");
  });

  it("puts load against capacity, or the sessions held when there is no limit", () => {
    expect(loadText(capped, load(1, 2))).toBe("1 of 2 seats");
    expect(loadText(capped, undefined)).toBe("? of 2 seats");
    expect(loadText(agent, load(0), 1)).toBe("1 session · no limit");
    expect(loadText(agent, load(0), 4)).toBe("4 sessions · no limit");
  });
});

describe("edge labels", () => {
  it("name the condition, the approval, the trigger and the filters", () => {
    expect(edgeLabel({ to: "x", when: "manual" })).toEqual([]);
    expect(
      edgeLabel({
        to: "x",
        when: "conditional",
        condition: "refund_amount > 500",
        requires_approval: true,
        trigger: { type: "event", event: "refund.requested" },
        filter: { redact_pii: true, max_history: 20, remove_tool_items: true, history: "nested" },
        input_schema: { type: "object" },
      }),
    ).toEqual([
      "if refund_amount > 500",
      "needs approval",
      "conditional: on event refund.requested",
      "filter: PII redacted, last 20 items, no tool items, history nested",
      "typed input",
    ]);
    expect(edgeLabel({ to: "x", when: "auto" })).toEqual(["auto"]);
  });

  it("say each kind of trigger in a few words", () => {
    expect(triggerText({ type: "condition", expression: "vip == true" })).toBe("when vip == true");
    expect(triggerText({ type: "explicit" })).toBe("fired by name");
    expect(triggerText({ type: "timeout", timeout_s: 300 })).toBe("after 300 s idle");
    expect(triggerText({ type: "error", error_types: ["MODEL_TIMEOUT", "*"] })).toBe("on error MODEL_TIMEOUT, *");
    expect(triggerText({ type: "capability", capabilities: ["refunds"] })).toBe("on missing capability refunds");
    expect(triggerText(undefined)).toBeNull();
  });
});

describe("teamGraph", () => {
  it("has a node per demo agent and an edge per handoff entry, the conditional one labelled with its condition", () => {
    const graph = teamGraph(demo);
    expect(graph.nodes.map((n: { id: string }) => n.id).sort()).toEqual([
      "billing",
      "sales",
      "supervisor",
      "technical",
      "triage",
    ]);
    expect(graph.edges.map((e: { id: string }) => e.id).sort()).toEqual([
      "billing->supervisor",
      "billing->technical",
      "sales->billing",
      "sales->supervisor",
      "technical->billing",
      "technical->supervisor",
      "triage->billing",
      "triage->sales",
      "triage->supervisor",
      "triage->technical",
    ]);
    const conditional = graph.edges.find((e: { id: string }) => e.id === "billing->supervisor");
    expect(conditional).toMatchObject({
      when: "conditional",
      condition: "refund_amount > 500",
      filter: "PII redacted",
      label: ["if refund_amount > 500", "filter: PII redacted"],
    });
    expect(graph.edges.find((e: { id: string }) => e.id === "triage->supervisor")?.filter).toBe(
      "PII redacted, last 20 items",
    );
    const supervisor = graph.nodes.find((n: { id: string }) => n.id === "supervisor");
    expect(supervisor).toMatchObject({ kind: "human", status: "unknown", load: "? of 5 seats" });
  });

  it("adds a target nobody registered as a missing node, and takes statuses from loads and held sessions", () => {
    const team = [AgentDefinition.parse({ name: "desk", handoffs: ["ghost"] })];
    const graph = teamGraph(team, { loads: new Map([["desk", load(0)]]), held: new Map([["desk", 2]]) });
    expect(graph.nodes).toEqual([
      expect.objectContaining({ id: "desk", status: "busy", load: "2 sessions · no limit", missing: false }),
      expect.objectContaining({ id: "ghost", missing: true }),
    ]);
    const waiting = teamGraph(team, {
      loads: new Map([["desk", load(0)]]),
      blocking: new Map([["desk", { status: "internal" }]]),
    });
    expect(waiting.nodes[0]).toMatchObject({ status: "busy", load: "0 sessions · no limit" });
  });
});

describe("sessionPosition", () => {
  const session = (stack: string[], flight: object | null = null) => ({
    current_agent: stack.at(-1),
    handoff_stack: stack,
    in_flight_handoff: flight,
  });

  it("is on the entry that put the current agent on top of the stack", () => {
    expect(sessionPosition(session(["triage", "billing"])).edge).toEqual({
      from: "triage",
      to: "billing",
      in_flight: false,
    });
    expect(sessionPosition(session(["triage"])).edge).toBeNull();
  });

  it("is on the handoff in flight while there is one", () => {
    const flight = { id: "hof_1", status: "pending", mode: "transfer", source: "billing", target: "supervisor" };
    expect(sessionPosition(session(["triage", "billing"], flight)).edge).toEqual({
      from: "billing",
      to: "supervisor",
      in_flight: true,
    });
  });
});

describe("sessionsHeld", () => {
  it("counts active sessions per current agent", () => {
    const rows = [
      { status: "active", current_agent: "billing" },
      { status: "active", current_agent: "billing" },
      { status: "expired", current_agent: "billing" },
      { status: "active", current_agent: "triage" },
    ];
    expect([...sessionsHeld(rows)]).toEqual([
      ["billing", 2],
      ["triage", 1],
    ]);
  });
});
