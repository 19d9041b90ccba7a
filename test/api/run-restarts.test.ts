import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { RunStore } from "../../durable-objects/session/runs/run-store";
import { TIMER_KEYS } from "../../durable-objects/shared/timer-kinds";
import { Timers } from "../../durable-objects/shared/timers";
import { turnDeliveryId } from "../../src/outbound/webhook-agent";
import { RESUME_MARGIN_MS, resumeAt } from "../../src/runtime/run-deadlines";
import { newRun } from "../../src/runtime/run-record";
import { drainDue, registerAgents, sessionStub, setClock, timersOf } from "../durable-objects/helpers";
import { eventually } from "../eventually";
import { llmServer } from "../fakes/server";
import { delayed, fakeWebhookAgent, replyOutput, type WebhookReply } from "../fakes/webhook-agent";
import type { SessionDO } from "../worker";
import { call } from "./helpers";

/**
 * A run a restart interrupts mid-turn (docs/runs.md, "Restarts"): the alarm resumes it once
 * the turn's own deadline and a margin have passed — not after a fixed watchdog — with no
 * request to its session; the resumed webhook delivery keeps its webhook-id, and the run's
 * `turns` counts the turn once.
 */

const TIMEOUT_S = 3;

beforeAll(async () => {
  await registerAgents("alpha", {
    name: "restart-hook",
    kind: "webhook",
    endpoint: "https://restart-hook.test/agent",
    description: "A webhook agent the test restarts under",
    timeout_s: TIMEOUT_S,
  });
});

function hook(...replies: WebhookReply[]) {
  const fake = fakeWebhookAgent({
    url: "https://restart-hook.test/agent",
    respond: () => replies.shift() ?? replyOutput("no reply left"),
  });
  llmServer.use(fake.handler);
  return fake;
}

const until = <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> =>
  eventually(read, done, { what: "the run's awaited state" });

const runIdOf = (delivery: { body: unknown }) => (delivery.body as { data: { run_id: string } }).data.run_id;

describe("a run's watchdog", () => {
  it("while a turn is out, is due at the turn's deadline plus the margin (a restart then waits no longer)", async () => {
    const fake = hook(delayed(1_000, replyOutput("answered")));
    const id = (await call("POST", "/v1/sessions", { agent: "restart-hook" })).json.id as string;
    const { stub } = sessionStub("alpha", id);
    const answered = call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "hello" });
    await until(
      async () => fake.deliveries.length,
      (n) => n === 1,
    );
    const runId = runIdOf(fake.deliveries[0]!);
    const running = (await call("GET", `/v1/sessions/${id}/runs/${runId}`)).json;
    expect(running).toMatchObject({ status: "running", turns: 1 });
    const watchdog = (await timersOf(stub)).timers.find((t) => t.kind === "run.resume");
    expect(watchdog?.due_at).toBe(Date.parse(running.updated_at) + TIMEOUT_S * 1000 + RESUME_MARGIN_MS);
    // The turn's delivery is named by its run and turn number: a resumed attempt is the same delivery.
    expect(fake.deliveries[0]!.headers["webhook-id"]).toBe(turnDeliveryId(runId, 1));
    expect((await answered).json.run).toMatchObject({ status: "completed", output: "answered", turns: 1 });
  });
});

describe("a run a restart left in its turn", () => {
  it("is resumed under the same delivery id, and counts the turn once", async () => {
    const fake = hook(replyOutput("after the restart"));
    const id = (await call("POST", "/v1/sessions", { agent: "restart-hook" })).json.id as string;
    const { stub } = sessionStub("alpha", id);
    // What a crash mid-turn leaves: the run at its turn (the first, counted), and the watchdog the turn set.
    const started = Date.now();
    const runId = await runInDurableObject(stub, (instance: SessionDO, state) => {
      const sql = instance.ownSql();
      const run = newRun({
        id: `run_${"2".repeat(26)}_${id}`,
        session_id: id,
        agent: "restart-hook",
        max_turns: 10,
        now: started,
      });
      state.storage.transactionSync(() => {
        new RunStore(sql).save({ run: { ...run, turns: 1 }, step: "turn", resumes: 0 });
        new Timers(state.storage, sql, () => started).schedule(
          "run.resume",
          resumeAt(started, TIMEOUT_S * 1000),
          { run_id: run.id },
          { key: TIMER_KEYS.runResume },
        );
      });
      return run.id;
    });
    await evictDurableObject(stub);
    await setClock(stub, resumeAt(started, TIMEOUT_S * 1000));
    await drainDue(stub);
    const run = await until(
      async () => (await call("GET", `/v1/sessions/${id}/runs/${runId}`)).json,
      (r) => r.status !== "running",
    );
    expect(run).toMatchObject({ status: "completed", output: "after the restart", turns: 1 });
    expect(fake.deliveries).toHaveLength(1);
    expect(fake.deliveries[0]!.headers["webhook-id"]).toBe(turnDeliveryId(runId, 1));
  });
});
