import { describe, expect, it } from "vitest";
import { AgentDefinition, type AgentDefinitionInput } from "../../src/schemas/agent";
import { firedTrigger, mayFire, nextTimeoutMs, pointAfterRun } from "../../src/triggers/fire";

/** Each trigger type firing and not firing, pure (docs/triggers.md). */

const agents = (...inputs: AgentDefinitionInput[]) =>
  new Map(inputs.map((i) => AgentDefinition.parse(i)).map((a) => [a.name, a] as const));

const directory = agents(
  {
    name: "desk",
    capabilities: [{ name: "billing", proficiency: 0.5 }],
    handoffs: [
      {
        to: "boss",
        when: "conditional",
        trigger: { type: "condition", expression: "refund > 500 and not vip_handled" },
      },
      { to: "ops", when: "auto", trigger: { type: "event", event: "outage", expression: "event.severity >= 3" } },
      { to: "night", when: "auto", trigger: { type: "timeout", timeout_s: 60 } },
      { to: "fallback", when: "auto", trigger: { type: "error", error_types: ["MODEL_TIMEOUT", "MODEL_ERROR"] } },
      { to: "legal", when: "auto", trigger: { type: "capability", capabilities: ["contracts"] } },
      { to: "tech", when: "auto", trigger: { type: "capability" } },
      { to: "manager", when: "auto", trigger: { type: "explicit" } },
      { to: "off", when: "auto", trigger: { type: "event", event: "outage" } },
      "plain",
    ],
  },
  { name: "boss" },
  { name: "ops" },
  { name: "night" },
  { name: "fallback" },
  { name: "legal", capabilities: [{ name: "contracts", proficiency: 0.9 }] },
  {
    name: "tech",
    capabilities: [
      { name: "debugging", proficiency: 0.8 },
      { name: "contracts", proficiency: 0.3 },
    ],
  },
  { name: "manager" },
  { name: "off", enabled: false },
  { name: "plain" },
);
const desk = directory.get("desk")!;
const at = (point: Parameters<typeof firedTrigger>[0], state: Record<string, unknown> = {}) =>
  firedTrigger(point, { agent: desk, directory, state })?.target ?? null;

describe("handoff triggers", () => {
  it("condition: fires when the expression holds on the state, not otherwise", () => {
    expect(at({ type: "condition" }, { refund: 900 })).toBe("boss");
    expect(at({ type: "condition" }, { refund: 100 })).toBeNull();
    expect(at({ type: "condition" }, { refund: 900, vip_handled: true })).toBeNull();
    expect(at({ type: "condition" }, {})).toBeNull();
  });

  it("event: fires on its event name when the expression over state and event holds; a disabled target never fires", () => {
    expect(at({ type: "event", name: "outage", data: { severity: 4 } })).toBe("ops");
    expect(at({ type: "event", name: "outage", data: { severity: 1 } })).toBeNull();
    expect(at({ type: "event", name: "other", data: { severity: 4 } })).toBeNull();
  });

  it("timeout: fires once the agent has held the session its timeout_s without progress", () => {
    expect(at({ type: "timeout", idle_ms: 60_000 })).toBe("night");
    expect(at({ type: "timeout", idle_ms: 59_999 })).toBeNull();
    expect(nextTimeoutMs({ agent: desk, directory })).toBe(60_000);
    expect(nextTimeoutMs({ agent: directory.get("boss")!, directory })).toBeNull();
  });

  it("error: fires for the listed error types; '*' for any", () => {
    expect(at({ type: "error", code: "MODEL_TIMEOUT" })).toBe("fallback");
    expect(at({ type: "error", code: "WEBHOOK_ERROR" })).toBeNull();
    const any = agents(
      { name: "a", handoffs: [{ to: "b", when: "auto", trigger: { type: "error", error_types: ["*"] } }] },
      { name: "b" },
    );
    expect(
      firedTrigger({ type: "error", code: "WEBHOOK_ERROR" }, { agent: any.get("a")!, directory: any, state: {} })
        ?.target,
    ).toBe("b");
  });

  it("capability: when the agent lacks what the task needs, the best match among the triggered targets", () => {
    expect(at({ type: "capability", required: ["contracts"] })).toBe("legal");
    expect(at({ type: "capability", required: ["debugging"] })).toBe("tech");
    // The agent has it: nothing fires.
    expect(at({ type: "capability", required: ["billing"] })).toBeNull();
    // Nobody has it: nothing fires.
    expect(at({ type: "capability", required: ["astrology"] })).toBeNull();
    const fired = firedTrigger({ type: "capability", required: ["contracts"] }, { agent: desk, directory, state: {} })!;
    expect(fired.reason).toContain("lacks contracts");
  });

  it("explicit: fires only for its own target", () => {
    expect(at({ type: "explicit", target: "manager" })).toBe("manager");
    expect(at({ type: "explicit", target: "boss" })).toBeNull();
    expect(at({ type: "explicit", target: "plain" })).toBeNull();
  });

  it("the reason names the trigger and why it fired", () => {
    expect(firedTrigger({ type: "condition" }, { agent: desk, directory, state: { refund: 900 } })!.reason).toBe(
      "trigger (condition): refund > 500 and not vip_handled",
    );
  });

  it("registration rules: a trigger needs its field, and a manual entry cannot have one", () => {
    expect(
      AgentDefinition.safeParse({ name: "x", handoffs: [{ to: "y", when: "auto", trigger: { type: "timeout" } }] })
        .success,
    ).toBe(false);
    expect(
      AgentDefinition.safeParse({ name: "x", handoffs: [{ to: "y", trigger: { type: "explicit" } }] }).success,
    ).toBe(false);
    expect(
      AgentDefinition.safeParse({ name: "x", handoffs: [{ to: "y", when: "auto", trigger: { type: "explicit" } }] })
        .success,
    ).toBe(true);
  });
});

describe("pointAfterRun", () => {
  it("a failed run raises an error point with its code; any other end a condition point", () => {
    expect(pointAfterRun("WEBHOOK_TIMEOUT")).toEqual({ type: "error", code: "WEBHOOK_TIMEOUT" });
    expect(pointAfterRun(null)).toEqual({ type: "condition" });
  });
});

describe("mayFire", () => {
  it("is true when the agent has a trigger of the point's type, whatever the state", () => {
    expect(mayFire({ type: "condition" }, { agent: desk, directory })).toBe(true);
    expect(mayFire({ type: "error", code: "TOOL_ERROR" }, { agent: desk, directory })).toBe(true);
  });

  it("is false for an agent without triggers, and for a trigger whose target is disabled", () => {
    expect(mayFire({ type: "condition" }, { agent: directory.get("boss")!, directory })).toBe(false);
    const onlyOff = AgentDefinition.parse({
      name: "lone",
      handoffs: [{ to: "off", when: "auto", trigger: { type: "event", event: "outage" } }],
    });
    expect(mayFire({ type: "event", name: "outage", data: {} }, { agent: onlyOff, directory })).toBe(false);
  });
});
