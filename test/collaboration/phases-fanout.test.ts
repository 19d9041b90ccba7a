import { describe, expect, it } from "vitest";
import {
  admitResult,
  aggregate,
  canMove,
  FANOUT_TRANSITIONS,
  moveFanout,
  outcomeOf,
  pendingTasks,
  TASK_TIMEOUT,
} from "../../src/collaboration/fanout";
import {
  movePhase,
  type NegotiationState,
  negotiated,
  PHASE_TRANSITIONS,
  type PhaseEvent,
  phaseEvent,
} from "../../src/collaboration/phases";
import {
  AgentResult,
  COLLAB_PHASES,
  CollabMessageInput,
  FANOUT_STATES,
  type Fanout,
  type MESSAGE_TYPES,
  TaskDecomposition,
} from "../../src/schemas/collaboration";

describe("collaboration messages", () => {
  it("accepts every type with what it needs, and refuses what a type cannot be", () => {
    const ok: Record<(typeof MESSAGE_TYPES)[number], object> = {
      request: { to: "b" },
      response: { to: "b", correlation_id: "m1" },
      broadcast: {},
      negotiate: { to: "b", payload: { price: 10 } },
      acknowledge: { correlation_id: "m1" },
      reject: { correlation_id: "m1" },
      cancel: {},
      query: { to: "b", timeout_s: 5 },
      notify: { to: "b" },
      escalate: { timeout_s: 60 },
    };
    for (const [type, extra] of Object.entries(ok))
      expect(CollabMessageInput.safeParse({ type, from: "a", ...extra }).success, type).toBe(true);
    const refused: object[] = [
      { type: "response", from: "a", to: "b" },
      { type: "query", from: "a" },
      { type: "broadcast", from: "a", to: "b" },
      { type: "notify", from: "a", to: "a" },
      { type: "notify", from: "a", to: "b", timeout_s: 5 },
      { type: "shout", from: "a" },
      { type: "notify", from: "a", priority: "critical" },
    ];
    for (const m of refused) expect(CollabMessageInput.safeParse(m).success, JSON.stringify(m)).toBe(false);
    expect(CollabMessageInput.parse({ type: "notify", from: "a" })).toMatchObject({ priority: "normal", payload: {} });
  });
});

describe("collaboration phases", () => {
  const start: NegotiationState = { phase: "discovery", proposal_id: null, terms: null };

  it("negotiation: propose, counter, accept → agreement with the accepted terms; request starts the work", () => {
    const proposals = new Map<string, Record<string, unknown>>([
      ["p1", { price: 10 }],
      ["p2", { price: 12 }],
    ]);
    let s = start;
    const step = (message: Parameters<typeof phaseEvent>[0] & { id: string }) => {
      const event = phaseEvent(message, s)!;
      const moved = movePhase(s.phase, event);
      if (!moved.ok) throw new Error(`refused ${event} in ${s.phase}`);
      s = negotiated(s, event, moved.phase, { id: message.id, payload: message.payload }, proposals);
    };
    step({ id: "p1", type: "negotiate", payload: { price: 10 } });
    expect(s).toEqual({ phase: "negotiation", proposal_id: "p1", terms: null });
    step({ id: "p2", type: "negotiate", payload: { price: 12 } });
    expect(s.proposal_id).toBe("p2");
    // An acknowledge of an older proposal does not accept the one on the table.
    expect(phaseEvent({ type: "acknowledge", correlation_id: "p1", payload: {} }, s)).toBeNull();
    step({ id: "a1", type: "acknowledge", correlation_id: "p2", payload: {} });
    expect(s).toEqual({ phase: "agreement", proposal_id: "p2", terms: { price: 12 } });
    step({ id: "r1", type: "request", payload: {} });
    expect(s.phase).toBe("execution");
    expect(movePhase(s.phase, "complete")).toEqual({ ok: true, phase: "completion" });
  });

  it("reject sends the parties back to negotiating, or ends it when final", () => {
    const s: NegotiationState = { phase: "negotiation", proposal_id: "p1", terms: null };
    expect(phaseEvent({ type: "reject", correlation_id: "p1", payload: {} }, s)).toBe("reject");
    expect(movePhase("negotiation", "reject")).toEqual({ ok: true, phase: "negotiation" });
    expect(phaseEvent({ type: "reject", correlation_id: "p1", payload: { final: true } }, s)).toBe("reject_final");
    expect(movePhase("negotiation", "reject_final")).toEqual({ ok: true, phase: "completion" });
  });

  it("refuses every transition the table does not name, saying what is allowed", () => {
    const events: PhaseEvent[] = ["propose", "accept", "reject", "reject_final", "start", "complete", "cancel"];
    let refusals = 0;
    for (const phase of COLLAB_PHASES) {
      for (const event of events) {
        const moved = movePhase(phase, event);
        expect(moved.ok, `${phase} + ${event}`).toBe(PHASE_TRANSITIONS[phase][event] !== undefined);
        if (!moved.ok) {
          refusals++;
          expect(moved.allowed).toEqual(Object.keys(PHASE_TRANSITIONS[phase]));
        }
      }
    }
    expect(refusals).toBeGreaterThan(10);
    expect(movePhase("discovery", "complete").ok).toBe(false);
    expect(movePhase("completion", "cancel").ok).toBe(false);
  });
});

describe("supervisor fan-out", () => {
  const decomposition = TaskDecomposition.parse({
    original_query: "Weekend in Lisbon: weather, budget, trains?",
    tasks: [
      { task_id: "w", agent: "weather", instruction: "Weather in Lisbon this weekend" },
      { task_id: "f", agent: "finance", instruction: "A budget for two nights" },
      { task_id: "t", agent: "travel", instruction: "Trains from Porto" },
    ],
  });

  it("a decomposition of several tasks requires aggregation; task ids are unique", () => {
    expect(decomposition.requires_aggregation).toBe(true);
    expect(
      TaskDecomposition.parse({ original_query: "q", tasks: [{ task_id: "a", agent: "x", instruction: "i" }] })
        .requires_aggregation,
    ).toBe(false);
    expect(TaskDecomposition.safeParse({ original_query: "q", tasks: [] }).success).toBe(false);
    expect(
      TaskDecomposition.safeParse({
        original_query: "q",
        tasks: [
          { task_id: "a", agent: "x", instruction: "i" },
          { task_id: "a", agent: "y", instruction: "j" },
        ],
      }).success,
    ).toBe(false);
  });

  it("results: success ⇒ data, failure ⇒ error, time ≥ 0; the first per task, from its agent", () => {
    expect(AgentResult.safeParse({ task_id: "w", agent: "weather", success: true, execution_time: 1 }).success).toBe(
      false,
    );
    expect(AgentResult.safeParse({ task_id: "w", agent: "weather", success: false, execution_time: 1 }).success).toBe(
      false,
    );
    expect(
      AgentResult.safeParse({ task_id: "w", agent: "weather", success: true, data: "sun", execution_time: -1 }).success,
    ).toBe(false);
    const first = admitResult(decomposition, [], {
      task_id: "w",
      agent: "weather",
      success: true,
      data: "Sunny, 24°C",
      execution_time: 120,
    });
    expect(first.ok).toBe(true);
    const results = first.ok ? first.results : [];
    expect(
      admitResult(decomposition, results, {
        task_id: "w",
        agent: "weather",
        success: true,
        data: "again",
        execution_time: 1,
      }),
    ).toMatchObject({ ok: false, reason: "task 'w' already has a result" });
    expect(
      admitResult(decomposition, results, { task_id: "f", agent: "weather", success: true, data: 1, execution_time: 1 })
        .ok,
    ).toBe(false);
    expect(
      admitResult(decomposition, results, {
        task_id: "zzz",
        agent: "weather",
        success: true,
        data: 1,
        execution_time: 1,
      }).ok,
    ).toBe(false);
    expect(pendingTasks(decomposition, results)).toEqual(["f", "t"]);
    expect(outcomeOf(decomposition, results)).toBeNull();
  });

  const result = (task_id: string, agent: string, success: boolean, value: string) =>
    success
      ? { task_id, agent, success, data: value, execution_time: 10 }
      : { task_id, agent, success, error: value, execution_time: 10 };

  it("all succeed → aggregated and completed; one fails → still completed, the failure named", () => {
    const all = [
      result("w", "weather", true, "Sunny"),
      result("f", "finance", true, "€400"),
      result("t", "travel", true, "3h by train"),
    ];
    expect(outcomeOf(decomposition, all)).toBe("AGGREGATING");
    expect(aggregate(decomposition, all)).toBe("weather: Sunny\nfinance: €400\ntravel: 3h by train");
    const oneFails = [all[0]!, result("f", "finance", false, "MODEL_ERROR"), all[2]!];
    expect(outcomeOf(decomposition, oneFails)).toBe("AGGREGATING");
    expect(aggregate(decomposition, oneFails)).toBe(
      "weather: Sunny\ntravel: 3h by train\nNot answered: finance (MODEL_ERROR).",
    );
  });

  it("a task that times out fails the fan-out, with the partial results kept; so does every task failing", () => {
    const timedOut = [
      result("w", "weather", true, "Sunny"),
      result("f", "finance", true, "€400"),
      result("t", "travel", false, TASK_TIMEOUT),
    ];
    expect(outcomeOf(decomposition, timedOut)).toBe("FAILED");
    expect(aggregate(decomposition, timedOut)).toContain("Not answered: travel (TASK_TIMEOUT).");
    const allFail = decomposition.tasks.map((t) => result(t.task_id, t.agent, false, "MODEL_ERROR"));
    expect(outcomeOf(decomposition, allFail)).toBe("FAILED");
  });

  it("states move only as the table says", () => {
    expect(FANOUT_STATES.filter((s) => FANOUT_TRANSITIONS[s].length === 0)).toEqual(["COMPLETED", "FAILED"]);
    expect(canMove("INIT", "DECOMPOSED")).toBe(true);
    expect(canMove("INIT", "EXECUTING")).toBe(false);
    expect(canMove("EXECUTING", "COMPLETED")).toBe(false);
    expect(canMove("AGGREGATING", "COMPLETED")).toBe(true);
    expect(canMove("COMPLETED", "FAILED")).toBe(false);
  });
});

describe("Relay's own decomposition", () => {
  it("splits a request into clauses and gives each to the best-matching whitelisted agent", async () => {
    const { clauses, decomposeByRules } = await import("../../src/collaboration/decompose");
    const { compileRules } = await import("../../src/routing/rules");
    const { AgentDefinition } = await import("../../src/schemas/agent");
    const agents = [
      { name: "weather", triggers: { keywords: ["weather", "rain", "forecast"] } },
      { name: "finance", triggers: { keywords: ["cost", "budget", "price"] } },
      { name: "travel", triggers: { keywords: ["train", "flight", "hotel"] } },
      { name: "other", triggers: { keywords: ["weather"] } },
    ].map((a) => AgentDefinition.parse(a));
    const rules = compileRules(agents);
    expect(clauses("What's the weather in Lisbon? How much will two nights cost, and which train goes there?")).toEqual(
      ["What's the weather in Lisbon?", "How much will two nights cost", "which train goes there?"],
    );
    const d = decomposeByRules(
      "What's the weather in Lisbon? How much will two nights cost, and which train goes there?",
      ["weather", "finance", "travel"],
      rules,
    )!;
    expect(d.tasks.map((t) => [t.agent, t.instruction])).toEqual([
      ["weather", "What's the weather in Lisbon?"],
      ["finance", "How much will two nights cost"],
      ["travel", "which train goes there?"],
    ]);
    expect(d.requires_aggregation).toBe(true);
    expect(decomposeByRules("hello there", ["weather"], rules)).toBeNull();
    // An agent outside the whitelist never gets a task.
    expect(decomposeByRules("the weather", ["finance"], rules)).toBeNull();
  });
});

describe("moveFanout", () => {
  const fanout = {
    id: "fan_1",
    state: "INIT",
    states: [{ state: "INIT", at: "2026-01-01T00:00:00.000Z" }],
  } as unknown as Fanout;

  it("moves by the table and records when", () => {
    const next = moveFanout(fanout, "DECOMPOSED", Date.parse("2026-01-01T00:00:01Z"));
    expect(next.state).toBe("DECOMPOSED");
    expect(next.states.at(-1)).toEqual({ state: "DECOMPOSED", at: "2026-01-01T00:00:01.000Z" });
  });

  it("throws on a move the table refuses (a bug: the ending rule decides)", () => {
    expect(() => moveFanout(fanout, "COMPLETED", 0)).toThrow(/INIT → COMPLETED is not a transition/);
  });
});
