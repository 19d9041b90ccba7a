/// <reference types="vite/client" />
import { beforeAll, describe, expect, it } from "vitest";
import { runSpan, runSteps } from "../../public/app/run-steps.js";
import { parseAgentFile } from "../../src/registry/agent-file";
import { call } from "../api/helpers";
import { script } from "../api/run-fixtures";
import { answer, callTool, fakeOpenAI, httpError } from "../fakes/openai";
import { llmServer } from "../fakes/server";

/**
 * A run's timeline as the session page draws it, from runs the Worker really made: the
 * offline demo team (the local provider), and a scripted model for the failures.
 */

const demo = import.meta.glob("../../agents/*.md", { query: "?raw", import: "default", eager: true }) as Record<
  string,
  string
>;

beforeAll(async () => {
  for (const [path, text] of Object.entries(demo)) {
    const agent = parseAgentFile(text, path);
    await call("PUT", `/v1/agents/${agent.name}`, agent);
  }
  // A front desk whose handoff to billing waits for a person's yes.
  await call("PUT", "/v1/agents/intake", {
    name: "intake",
    description: "Takes refund requests.",
    handoffs: [{ to: "billing", description: "Payments, refunds and invoices.", requires_approval: true }],
  });
});

type Step = { kind: string; agent: string; label: string; outcome: string | null; open: boolean; ms: number };
const shape = (steps: Step[]) => steps.map((s) => `${s.kind}:${s.agent}`);

describe("runSteps", () => {
  it("shows a run with an approval, two handoffs and a person's turn in order, open while it waits", async () => {
    const id = (await call("POST", "/v1/sessions", { agent: "intake" })).json.id;
    await call("PATCH", `/v1/sessions/${id}/state`, { set: { refund_amount: 900 } });
    const asked = await call("POST", `/v1/sessions/${id}/messages`, {
      role: "user",
      content: "I want a refund of 900 dollars for my subscription",
    });
    expect(asked.json.run.status).toBe("awaiting_approval");
    const waiting = runSteps(asked.json.run);
    expect(shape(waiting)).toEqual(["model:intake", "approval:intake"]);
    expect(waiting[1]).toMatchObject({ label: "approval of transfer_to_billing", open: true, outcome: "waiting" });
    expect(runSpan(asked.json.run)).toMatchObject({ live: true, paused: true, end: null });

    const approved = await call("POST", `/v1/inbox/${asked.json.run.pending.approvals[0].inbox_id}/resolve`, {
      decision: "approve",
      by: "ops@example.com",
    });
    expect(approved.json.run.status).toBe("awaiting_human");
    const person = runSteps(approved.json.run).at(-1)!;
    expect(person).toMatchObject({ kind: "person", agent: "supervisor", open: true });

    const done = await call("POST", `/v1/inbox/${approved.json.run.pending.inbox_id}/resolve`, {
      reply: "Refund approved.",
    });
    const run = (await call("GET", `/v1/sessions/${id}/runs/${done.json.run.id}`)).json;
    const steps = runSteps(run);
    expect(shape(steps)).toEqual([
      "model:intake",
      "approval:intake",
      "handoff:intake",
      "model:billing",
      "handoff:billing",
      "person:supervisor",
    ]);
    expect(steps.map((s: Step) => s.label)).toEqual([
      "model local",
      "approval of transfer_to_billing",
      "intake → billing",
      "model local",
      "billing → supervisor",
      "supervisor's turn",
    ]);
    expect(steps[1]).toMatchObject({ open: false, outcome: "approved by ops@example.com" });
    expect(steps[5]).toMatchObject({ open: false, outcome: "answered from the inbox" });
    expect(steps.every((s: Step) => !s.open && s.ms >= 0)).toBe(true);
    expect(runSpan(run)).toMatchObject({ live: false, paused: false });
  });

  it("marks a denied approval, and the handoff it stopped never appears", async () => {
    const id = (await call("POST", "/v1/sessions", { agent: "intake" })).json.id;
    const asked = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "a refund please" });
    const denied = await call("POST", `/v1/inbox/${asked.json.run.pending.approvals[0].inbox_id}/resolve`, {
      decision: "deny",
      reason: "not today",
    });
    const steps = runSteps(denied.json.run);
    expect(steps.find((s: Step) => s.kind === "approval")).toMatchObject({ denied: true, open: false });
    expect(steps.some((s: Step) => s.kind === "handoff")).toBe(false);
  });

  describe("with a model", () => {
    beforeAll(async () => {
      await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
      await call("PUT", "/v1/agents/clerk", { name: "clerk", description: "Clerk", tools: { allow: ["ledger"] } });
      await call("PUT", "/v1/tools/ledger", { name: "ledger", kind: "client", description: "Posts to the ledger" });
    });

    it("marks a model's error answer on the step and fails nothing else", async () => {
      script({ clerk: [httpError(500)] });
      const id = (await call("POST", "/v1/sessions", { agent: "clerk" })).json.id;
      const res = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "post it" });
      expect(res.json.run.status).toBe("failed");
      const steps = runSteps(res.json.run);
      expect(shape(steps)).toEqual(["error:clerk"]);
      expect(steps[0]).toMatchObject({ error: "MODEL_ERROR", label: "model fake-model" });
    });

    it("waits for the client's tool outputs as an open step, then shows the call and the answer", async () => {
      script({ clerk: [callTool("ledger", { amount: 5 }), answer("Posted.")] });
      const id = (await call("POST", "/v1/sessions", { agent: "clerk" })).json.id;
      const paused = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "post it" });
      expect(paused.json.run.status).toBe("requires_action");
      expect(runSteps(paused.json.run).at(-1)).toMatchObject({ kind: "client", open: true, detail: "ledger" });
      const call_id = paused.json.run.pending.tool_calls[0].id;
      const done = await call("POST", `/v1/sessions/${id}/tool-outputs`, {
        outputs: [{ tool_call_id: call_id, output: "ok" }],
      });
      expect(shape(runSteps(done.json.run))).toEqual(["model:clerk", "tool:clerk", "model:clerk", "answer:clerk"]);
    });
  });
});

describe("runSteps on made-up runs", () => {
  const event = (event_type: string, seconds: number, details: object = {}, extra: object = {}) => ({
    event_id: `evt_${seconds}`,
    event_type,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, seconds)).toISOString(),
    session_id: "ses_x",
    agent_name: "desk",
    correlation_id: "run_x",
    details,
    duration_ms: 0,
    error: null,
    ...extra,
  });
  const run = (status: string, events: object[], extra: object = {}) => ({
    id: "run_x",
    status,
    agent: "desk",
    started_at: new Date(Date.UTC(2026, 0, 1)).toISOString(),
    updated_at: new Date(Date.UTC(2026, 0, 1, 0, 1)).toISOString(),
    ended_at: status === "completed" || status === "failed" ? new Date(Date.UTC(2026, 0, 1, 0, 1)).toISOString() : null,
    events,
    ...extra,
  });

  it("measures a model call back from its end, and a running run ends in an open step", () => {
    const steps = runSteps(run("running", [event("llm_call", 10, { model: "m" }, { duration_ms: 4000 })]));
    expect(steps[0]).toMatchObject({ kind: "model", ms: 4000, start: Date.UTC(2026, 0, 1, 0, 0, 6) });
    expect(steps[1]).toMatchObject({ kind: "working", open: true });
  });

  it("takes any status but running or paused as an end", () => {
    const cancelled = run("cancelled", [event("llm_call", 10, { model: "m" })], {
      ended_at: new Date(Date.UTC(2026, 0, 1, 0, 0, 12)).toISOString(),
    });
    expect(runSpan(cancelled)).toMatchObject({ live: false, ms: 12_000 });
    expect(runSteps(cancelled).some((s: Step) => s.open)).toBe(false);
  });

  it("closes a person's turn the run gave up on as not answered", () => {
    const steps = runSteps(
      run("failed", [event("agent_start", 1, { executor: "human", outcome: "waiting for a person" })], {
        error: { code: "HUMAN_TIMEOUT", message: "nobody answered" },
      }),
    );
    expect(steps.map((s: Step) => [s.kind, s.outcome, s.open])).toEqual([
      ["person", "not answered", false],
      ["error", null, false],
    ]);
    expect(steps[0]!.ms).toBe(59_000);
  });

  it("shows a compaction before the model call it made room for, with what it saved", async () => {
    await call("PUT", "/v1/agents/brief", {
      name: "brief",
      description: "Keeps it short.",
      memory: { max_input_tokens: 1200, keep_last: 4 },
    });
    // The scripted model writes the summary and then answers (an earlier test moved the tenant to it).
    await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
    const fake = fakeOpenAI({ baseUrl: "https://llm.test/v1", respond: () => answer("Short.") });
    llmServer.use(fake.handler);
    const id = (await call("POST", "/v1/sessions", { agent: "brief" })).json.id;
    for (let i = 0; i < 60; i++)
      await call("POST", `/v1/sessions/${id}/messages`, {
        role: "user",
        content: `Note ${i}: crate ${i} left the dock on time today.`,
        run: false,
      });
    const asked = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "Thanks" });
    const steps = runSteps(asked.json.run);
    expect(shape(steps)).toEqual(["compaction:brief", "model:brief", "answer:brief"]);
    expect(steps[0]).toMatchObject({ label: expect.stringMatching(/^summarized \d+ items$/) });
    expect((steps[0] as Step & { detail: string }).detail).toMatch(/^\d+ → \d+ tokens by fake-model$/);
  });
});
