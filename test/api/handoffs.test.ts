import { beforeAll, describe, expect, it } from "vitest";
import { agentLoadOf, agentStub } from "../durable-objects/helpers";
import { handoff, loadAgents, newSession } from "./handoff-fixtures";
import { BETA_KEY, call } from "./helpers";

beforeAll(loadAgents);

/** The session's own audit trail (read-your-writes), as actions, for one handoff or all. */
async function actions(session: string, handoffId?: string): Promise<string[]> {
  const page = await call("GET", `/v1/sessions/${session}/audit?limit=500`);
  return page.json.items
    .filter((r: { handoff_id: string | null }) => handoffId === undefined || r.handoff_id === handoffId)
    .map((r: { action: string }) => r.action);
}

async function leases(agent: string): Promise<number> {
  return (await agentLoadOf("alpha", agent)).active_leases;
}

describe("POST /v1/handoffs: immediate transfer and return", () => {
  it("hands over (200 completed), then returns; stack, current agent and audit follow", async () => {
    const session = await newSession();
    const res = await handoff({
      session_id: session,
      source_agent: "triage",
      target_agent: "billing",
      summary: "double charge",
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      status: "completed",
      source: "triage",
      target: "billing",
      mode: "transfer",
      policy: "immediate",
    });
    expect(res.json.id).toMatch(new RegExp(`^hof_[0-9a-z]{26}_${session}$`));
    expect(res.json.transitions.map((t: { to: string }) => t.to)).toEqual([
      "initiated",
      "validating",
      "transferring",
      "completed",
    ]);
    const view = await call("GET", `/v1/sessions/${session}`);
    expect(view.json).toMatchObject({
      current_agent: "billing",
      handoff_stack: ["triage", "billing"],
      in_flight_handoff: null,
    });
    expect(view.json.last_handoff_context).toMatchObject({
      from_agent: "triage",
      to_agent: "billing",
      summary: "double charge",
    });
    expect(await actions(session, res.json.id)).toEqual([
      "handoff.initiated",
      "handoff.validated",
      "handoff.transferring",
      "handoff.completed",
    ]);

    const back = await handoff({ session_id: session, source_agent: "billing", mode: "return" });
    expect(back.status).toBe(200);
    expect(back.json).toMatchObject({ status: "completed", target: "triage", mode: "return" });
    const after = await call("GET", `/v1/sessions/${session}`);
    expect(after.json).toMatchObject({ current_agent: "triage", handoff_stack: ["triage"] });
    expect(after.json.last_handoff_context.metadata).toMatchObject({
      mode: "return",
      handoff_chain: ["triage"],
      chain_depth: 0,
    });
    expect((await call("GET", `/v1/handoffs/${back.json.id}`)).json).toEqual(back.json);
  });

  it("gives the target a filtered context: session history through the whitelist entry's filters", async () => {
    const session = await newSession();
    for (const message of [
      { role: "user", content: "my card is 4111 1111 1111 1111" },
      { role: "agent", content: "let me look" },
      { role: "tool", type: "tool_output", tool_name: "lookup", content: "found" },
      { role: "user", content: "mail me at jo@example.com" },
      { role: "agent", content: "one moment" },
      { role: "user", content: "thanks" },
    ]) {
      // A transcript the caller keeps: stored, no run.
      await call(
        "POST",
        `/v1/sessions/${session}/messages`,
        message.role === "user" ? { ...message, run: false } : message,
      );
    }
    const res = await handoff({
      session_id: session,
      source_agent: "triage",
      target_agent: "supervisor",
      task: { task_id: "t-1", task_state: "in_progress" },
      context: { priority: "high" },
    });
    expect(res.status).toBe(200);
    const context = (await call("GET", `/v1/sessions/${session}`)).json.last_handoff_context;
    expect(context.task).toEqual({ task_id: "t-1", task_state: "in_progress" });
    expect(context.context).toEqual({ priority: "high" });
    expect(context.metadata).toMatchObject({
      handoff_chain: ["triage", "supervisor"],
      chain_depth: 1,
      correlation_id: res.json.id,
      handoff_id: res.json.id,
      history_filters: ["remove_tool_items", "max_history:4", "redact_pii"],
    });
    expect(context.conversation_history.map((i: { content: string }) => i.content)).toEqual([
      "my card is [REDACTED_CARD]",
      "let me look",
      "one moment",
      "thanks",
    ]);
    await handoff({ session_id: session, source_agent: "supervisor", mode: "return" });
  });

  it("uses the request's conversation_history instead of the session's when given", async () => {
    const session = await newSession();
    await call("POST", `/v1/sessions/${session}/messages`, { role: "user", content: "stored", run: false });
    const res = await handoff({
      session_id: session,
      source_agent: "triage",
      target_agent: "technical",
      conversation_history: [{ role: "user", content: "given" }],
    });
    expect(res.json.context.conversation_history).toEqual([{ role: "user", content: "given" }]);
  });

  it("chooses a target by required capabilities among the whitelist, best score first", async () => {
    const session = await newSession();
    const res = await handoff({ session_id: session, source_agent: "triage", required_capabilities: ["refunds"] });
    expect(res.status).toBe(200);
    expect(res.json.target).toBe("billing");
  });

  it("marks the source's busy turn interrupted", async () => {
    const session = await newSession();
    await call("POST", `/v1/sessions/${session}/agent-status`, { agent: "triage", status: "busy" });
    const res = await handoff({ session_id: session, source_agent: "triage", target_agent: "technical" });
    expect(res.status).toBe(200);
    expect((await call("GET", `/v1/sessions/${session}`)).json.agent_status).toEqual({ triage: "idle" });
    expect(await actions(session, res.json.id)).toContain("session.turn_interrupted");
  });
});

describe("POST /v1/handoffs: every validation rule has its own code, and a failed handoff is on record", () => {
  const cases: {
    name: string;
    agent?: string;
    setup?: (s: string) => Promise<void>;
    body: Record<string, unknown>;
    status: number;
    code: string;
    meta?: Record<string, unknown>;
  }[] = [
    {
      name: "unknown source",
      body: { source_agent: "nobody", target_agent: "billing" },
      status: 404,
      code: "AGENT_NOT_FOUND",
    },
    {
      name: "unknown target",
      body: { source_agent: "triage", target_agent: "ghost" },
      status: 404,
      code: "AGENT_NOT_FOUND",
    },
    {
      name: "source not current",
      body: { source_agent: "billing", target_agent: "technical" },
      status: 409,
      code: "NOT_CURRENT_AGENT",
    },
    {
      name: "return with nobody to return to",
      body: { source_agent: "triage", mode: "return" },
      status: 422,
      code: "NOTHING_TO_RETURN",
    },
    {
      name: "target not whitelisted",
      agent: "billing",
      body: { source_agent: "billing", target_agent: "sales" },
      status: 422,
      code: "HANDOFF_NOT_ALLOWED",
    },
    {
      name: "whitelist condition false",
      body: { source_agent: "triage", target_agent: "sales" },
      status: 422,
      code: "CONDITION_NOT_MET",
    },
    {
      name: "request condition false",
      body: { source_agent: "triage", target_agent: "billing", condition: "vip == true" },
      status: 422,
      code: "CONDITION_NOT_MET",
    },
    {
      name: "no capable agent",
      body: { source_agent: "triage", required_capabilities: ["astrophysics"] },
      status: 422,
      code: "CAPABILITY_MISMATCH",
    },
    {
      name: "disabled target",
      body: { source_agent: "triage", target_agent: "retired" },
      status: 422,
      code: "AGENT_UNAVAILABLE",
    },
    {
      name: "too deep",
      meta: { max_handoff_depth: 1 },
      setup: async (s) => void (await handoff({ session_id: s, source_agent: "triage", target_agent: "billing" })),
      body: { source_agent: "billing", target_agent: "technical" },
      status: 422,
      code: "MAX_DEPTH_EXCEEDED",
    },
    {
      name: "cycle",
      setup: async (s) => {
        await handoff({ session_id: s, source_agent: "triage", target_agent: "billing" });
        await handoff({ session_id: s, source_agent: "billing", target_agent: "technical" });
      },
      body: { source_agent: "technical", target_agent: "billing" },
      status: 422,
      code: "CIRCULAR_HANDOFF",
    },
  ];

  for (const c of cases) {
    it(`${c.code}: ${c.name}`, async () => {
      const session = await newSession(c.agent ?? "triage", c.meta ? { metadata: c.meta } : {});
      await c.setup?.(session);
      const before = (await call("GET", `/v1/sessions/${session}`)).json;
      const res = await handoff({ session_id: session, ...c.body });
      expect(res.status).toBe(c.status);
      expect(res.json.error.code).toBe(c.code);
      const id = res.json.error.details.handoff_id;
      const record = await call("GET", `/v1/handoffs/${id}`);
      expect(record.json).toMatchObject({ status: "failed", error: { code: c.code } });
      // A refusal changed nothing: one audit record says so, with the request's reason and the code.
      expect(await actions(session, id)).toEqual(["handoff.failed"]);
      expect(record.json.transitions.map((t: { to: string }) => t.to)).toEqual(["initiated", "validating", "failed"]);
      const audit = (await call("GET", `/v1/sessions/${session}/audit?limit=100`)).json.items.find(
        (r: { handoff_id: string | null }) => r.handoff_id === id,
      );
      expect(audit.details).toMatchObject({ to: "failed", error_code: c.code, reason: expect.any(String) });
      const after = (await call("GET", `/v1/sessions/${session}`)).json;
      expect(after).toMatchObject({
        current_agent: before.current_agent,
        handoff_stack: before.handoff_stack,
        in_flight_handoff: null,
      });
    });
  }

  it("a false whitelist condition becomes true with the session state", async () => {
    const session = await newSession();
    await call("PATCH", `/v1/sessions/${session}/state`, { set: { tier: "gold" } });
    expect((await handoff({ session_id: session, source_agent: "triage", target_agent: "sales" })).status).toBe(200);
  });

  it("AGENT_UNAVAILABLE when the target is at capacity: the lease is refused and the handoff rolled back", async () => {
    const first = await newSession();
    const second = await newSession();
    expect((await handoff({ session_id: first, source_agent: "triage", target_agent: "supervisor" })).status).toBe(200);
    const res = await handoff({ session_id: second, source_agent: "triage", target_agent: "supervisor" });
    expect(res.status).toBe(422);
    expect(res.json.error).toMatchObject({
      code: "AGENT_UNAVAILABLE",
      details: { reason: "at_capacity", status: "rolled_back" },
    });
    expect((await call("GET", `/v1/sessions/${second}`)).json.current_agent).toBe("triage");
    expect(await actions(second, res.json.error.details.handoff_id)).toEqual([
      "handoff.initiated",
      "handoff.validated",
      "handoff.transferring",
      "handoff.rolled_back",
    ]);
    await handoff({ session_id: first, source_agent: "supervisor", mode: "return" });
    expect(await leases("supervisor")).toBe(0);
  });

  it("AGENT_UNAVAILABLE when the target's AgentDO is paused (an agent with a capacity limit)", async () => {
    const session = await newSession();
    const billing = agentStub("alpha", "billing").rpc;
    await billing.pause();
    try {
      const res = await handoff({ session_id: session, source_agent: "triage", target_agent: "billing" });
      expect(res.status).toBe(422);
      expect(res.json.error).toMatchObject({ code: "AGENT_UNAVAILABLE", details: { reason: "paused" } });
    } finally {
      await billing.resume();
    }
  });

  it("refuses a malformed body (400), an unknown session (404) and another tenant's session (404)", async () => {
    const session = await newSession();
    const noReason = await call("POST", "/v1/handoffs", {
      session_id: session,
      source_agent: "triage",
      target_agent: "billing",
    });
    expect(noReason.status).toBe(400);
    const both = await handoff({
      session_id: session,
      source_agent: "triage",
      target_agent: "billing",
      required_capabilities: ["x"],
    });
    expect(both.status).toBe(400);
    const unknown = await handoff({ session_id: "ses_nope", source_agent: "triage", target_agent: "billing" });
    expect(unknown.json.error.code).toBe("SESSION_NOT_FOUND");
    const beta = await call(
      "POST",
      "/v1/handoffs",
      { session_id: session, source_agent: "triage", target_agent: "billing", reason: "r" },
      { key: BETA_KEY },
    );
    expect(beta.status).toBe(404);
    expect((await call("GET", `/v1/sessions/${session}`)).json.handoff_stack).toEqual(["triage"]);
  });

  it("GET /v1/handoffs/:id: 404 for ids Relay never made and for another tenant", async () => {
    const session = await newSession();
    const res = await handoff({ session_id: session, source_agent: "triage", target_agent: "billing" });
    expect((await call("GET", "/v1/handoffs/hof_nope")).json.error.code).toBe("HANDOFF_NOT_FOUND");
    expect(
      (await call("GET", `/v1/handoffs/${res.json.id.replace(/^hof_.{26}/, "hof_00000000000000000000000000")}`)).status,
    ).toBe(404);
    expect((await call("GET", `/v1/handoffs/${res.json.id}`, undefined, { key: BETA_KEY })).status).toBe(404);
  });
});

describe("graceful and conditional policies", () => {
  it("graceful while the source is busy: 202 pending, the lock held, then completed when it reports idle", async () => {
    const session = await newSession();
    await call("POST", `/v1/sessions/${session}/agent-status`, { agent: "triage", status: "busy" });
    const res = await handoff({
      session_id: session,
      source_agent: "triage",
      target_agent: "billing",
      policy: "graceful",
      timeout_s: 600,
    });
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ status: "pending", target: "billing" });
    const waitingSince = res.json.transitions.find((t: { to: string }) => t.to === "pending").at;
    expect(Date.parse(res.json.deadline_at) - Date.parse(waitingSince)).toBe(600_000);
    const view = (await call("GET", `/v1/sessions/${session}`)).json;
    expect(view).toMatchObject({
      current_agent: "triage",
      in_flight_handoff: { id: res.json.id, status: "pending", deadline_at: res.json.deadline_at },
    });
    const second = await handoff({ session_id: session, source_agent: "triage", target_agent: "technical" });
    expect(second.status).toBe(409);
    expect(second.json.error).toMatchObject({ code: "HANDOFF_IN_PROGRESS", details: { handoff_id: res.json.id } });

    const idle = await call("POST", `/v1/sessions/${session}/agent-status`, { agent: "triage", status: "idle" });
    expect(idle.json).toMatchObject({ current_agent: "billing", in_flight_handoff: null });
    const done = (await call("GET", `/v1/handoffs/${res.json.id}`)).json;
    expect(done.status).toBe("completed");
    expect(done.deadline_at).toBeUndefined();
    expect(await actions(session, res.json.id)).toEqual([
      "handoff.initiated",
      "handoff.validated",
      "handoff.pending",
      "handoff.transferring",
      "handoff.completed",
    ]);
  });

  it("graceful with an idle source proceeds at once (200)", async () => {
    const session = await newSession();
    const res = await handoff({
      session_id: session,
      source_agent: "triage",
      target_agent: "billing",
      policy: "graceful",
    });
    expect(res.status).toBe(200);
    expect(res.json.status).toBe("completed");
  });

  it("conditional: the condition first (422 when false, 400 when missing), then graceful", async () => {
    const session = await newSession();
    await call("POST", `/v1/sessions/${session}/agent-status`, { agent: "triage", status: "busy" });
    const missing = await handoff({
      session_id: session,
      source_agent: "triage",
      target_agent: "billing",
      policy: "conditional",
    });
    expect(missing.status).toBe(400);
    const body = {
      session_id: session,
      source_agent: "triage",
      target_agent: "billing",
      policy: "conditional",
      condition: "amount > 100",
    };
    expect((await handoff(body)).json.error.code).toBe("CONDITION_NOT_MET");
    await call("PATCH", `/v1/sessions/${session}/state`, { set: { amount: 250 } });
    const res = await handoff(body);
    expect(res.status).toBe(202);
    expect(res.json.status).toBe("pending");
  });

  it("cancels a pending handoff; anything else is HANDOFF_NOT_CANCELLABLE", async () => {
    const session = await newSession();
    await call("POST", `/v1/sessions/${session}/agent-status`, { agent: "triage", status: "busy" });
    const res = await handoff({
      session_id: session,
      source_agent: "triage",
      target_agent: "billing",
      policy: "graceful",
    });
    const cancelled = await call("POST", `/v1/handoffs/${res.json.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.json.status).toBe("cancelled");
    expect((await call("GET", `/v1/sessions/${session}`)).json).toMatchObject({
      current_agent: "triage",
      in_flight_handoff: null,
    });
    const again = await call("POST", `/v1/handoffs/${res.json.id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.json.error).toMatchObject({ code: "HANDOFF_NOT_CANCELLABLE", details: { status: "cancelled" } });
    await call("POST", `/v1/sessions/${session}/agent-status`, { agent: "triage", status: "idle" });
    const completed = await handoff({ session_id: session, source_agent: "triage", target_agent: "billing" });
    expect((await call("POST", `/v1/handoffs/${completed.json.id}/cancel`)).json.error.code).toBe(
      "HANDOFF_NOT_CANCELLABLE",
    );
    expect((await call("POST", `/v1/handoffs/hof_${"0".repeat(26)}_${session}/cancel`)).status).toBe(404);
    expect(await actions(session, res.json.id)).toEqual([
      "handoff.initiated",
      "handoff.validated",
      "handoff.pending",
      "handoff.cancelled",
    ]);
  });

  it("GET /v1/sessions/:id/inbox starts empty; 404 for an unknown session", async () => {
    const session = await newSession();
    expect((await call("GET", `/v1/sessions/${session}/inbox`)).json).toEqual({ items: [], next_cursor: null });
    expect((await call("GET", "/v1/sessions/ses_nope/inbox")).status).toBe(404);
  });
});
