import { describe, expect, it } from "vitest";
import {
  AgentStatusUpdate,
  applyStatePatch,
  SessionCreate,
  SessionMessage,
  SessionStatePatch,
  SessionView,
} from "../../src/schemas/session";

describe("SessionCreate", () => {
  it("defaults ttl_s to a day and bounds it to 60 s .. 30 days", () => {
    expect(SessionCreate.parse({})).toEqual({ ttl_s: 86_400 });
    expect(SessionCreate.safeParse({ ttl_s: 59 }).success).toBe(false);
    expect(SessionCreate.safeParse({ ttl_s: 60 }).success).toBe(true);
    expect(SessionCreate.safeParse({ ttl_s: 30 * 86_400 }).success).toBe(true);
    expect(SessionCreate.safeParse({ ttl_s: 30 * 86_400 + 1 }).success).toBe(false);
  });

  it("is strict and checks the agent name and input", () => {
    expect(SessionCreate.safeParse({ agent: "billing", input: "hello", metadata: { channel: "web" } }).success).toBe(
      true,
    );
    expect(SessionCreate.safeParse({ agent: "Not A Slug" }).success).toBe(false);
    expect(SessionCreate.safeParse({ input: "" }).success).toBe(false);
    expect(SessionCreate.safeParse({ owner: "me" }).success).toBe(false);
  });
});

describe("SessionMessage", () => {
  it("takes the roles and a 1 byte .. 32 KiB content", () => {
    for (const role of ["user", "agent", "assistant", "system", "tool"]) {
      expect(SessionMessage.safeParse({ role, content: "x" }).success).toBe(true);
    }
    expect(SessionMessage.safeParse({ role: "robot", content: "x" }).success).toBe(false);
    expect(SessionMessage.safeParse({ role: "user", content: "" }).success).toBe(false);
    expect(SessionMessage.safeParse({ role: "user", content: "x".repeat(32 * 1024) }).success).toBe(true);
    expect(SessionMessage.safeParse({ role: "user", content: "x".repeat(32 * 1024 + 1) }).success).toBe(false);
    expect(
      SessionMessage.safeParse({ role: "tool", content: "{}", type: "tool_output", tool_name: "lookup" }).success,
    ).toBe(true);
  });
});

describe("SessionStatePatch", () => {
  it("sets and unsets identifier keys", () => {
    const patch = SessionStatePatch.parse({ set: { user: { tier: "gold" }, note: null }, unset: ["old"] });
    expect(applyStatePatch({ old: 1, keep: 2 }, patch)).toEqual({ keep: 2, user: { tier: "gold" }, note: null });
  });

  it("does not change the state it is given", () => {
    const state = { a: 1 };
    applyStatePatch(state, SessionStatePatch.parse({ set: { a: 2 } }));
    expect(state).toEqual({ a: 1 });
  });

  it("refuses empty patches, bad keys and a key both set and unset", () => {
    expect(SessionStatePatch.safeParse({}).success).toBe(false);
    expect(SessionStatePatch.safeParse({ set: {}, unset: [] }).success).toBe(false);
    expect(SessionStatePatch.safeParse({ set: { "user.tier": 1 } }).success).toBe(false);
    expect(SessionStatePatch.safeParse({ set: { "9lives": 1 } }).success).toBe(false);
    expect(SessionStatePatch.safeParse({ set: { a: 1 }, unset: ["a"] }).success).toBe(false);
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i]));
    expect(SessionStatePatch.safeParse({ set: many }).success).toBe(false);
  });
});

describe("AgentStatusUpdate and SessionView", () => {
  it("parses an agent-status report", () => {
    expect(AgentStatusUpdate.parse({ agent: "billing", status: "idle" })).toEqual({ agent: "billing", status: "idle" });
    expect(AgentStatusUpdate.safeParse({ agent: "billing", status: "asleep" }).success).toBe(false);
  });

  it("describes a session", () => {
    const view = {
      id: "01JSESSION",
      status: "active",
      current_agent: "billing",
      handoff_stack: ["triage", "billing"],
      state: { user: { tier: "gold" } },
      metadata: {},
      history_length: 3,
      in_flight_handoff: {
        id: "01JH",
        status: "pending",
        mode: "transfer",
        policy: "graceful",
        source: "billing",
        target: "tech",
        deadline_at: "2026-01-01T00:05:00.000Z",
      },
      last_handoff_context: null,
      agent_status: { billing: "busy" },
      created_at: "2026-01-01T00:00:00.000Z",
      updated_at: "2026-01-01T00:00:00.000Z",
      expires_at: "2026-01-02T00:00:00.000Z",
    };
    expect(SessionView.parse(view)).toEqual(view);
    expect(SessionView.safeParse({ ...view, status: "paused" }).success).toBe(false);
  });
});
