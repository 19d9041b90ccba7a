import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { tenantRpc } from "../../src/rpc/stubs";
import { RECENT_RUNS_MS } from "../../src/rpc/tenant";
import { flushOutbox, sessionStub, setClock } from "../durable-objects/helpers";
import { answer, httpError } from "../fakes/openai";
import type { TenantDO } from "../worker";
import { rpc, userMessage } from "./a2a-rpc";
import { call, putAgents, streamed } from "./helpers";
import { script } from "./run-fixtures";

/**
 * What an A2A task shows of its messages and how ListTasks finds tasks (docs/a2a.md): a
 * client's message keeps the client's `messageId` in the task's history; Relay's own messages
 * keep Relay's ids. ListTasks filters before it pages and counts every task that passes, in a
 * context and across the tenant, where a task made a moment ago is listed before D1 hears of
 * it. The model is faked; sessions, the tenant's object and D1 are real.
 */

const AGENTS = [
  { name: "desk", description: "Answers" },
  { name: "lister", description: "Answers in one context" },
  { name: "fresh", description: "Answers across contexts" },
  { name: "streamer", description: "Streams its answers" },
  { name: "clerk", kind: "human", description: "A person at the desk", timeout_s: 3600 },
];

beforeAll(async () => {
  await putAgents(AGENTS);
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

describe("the client's messageId", () => {
  it("is the user message's id in the SendMessage answer, GetTask and ListTasks; Relay's answer keeps its own id", async () => {
    script({ desk: [answer("First answer."), answer("Second answer.")] });
    const first = userMessage("hello");
    const sent = (await rpc("/a2a/desk", "SendMessage", first)).result.task;
    expect(sent.history.map((m: { messageId: string; role: string }) => [m.role, m.messageId])).toEqual([
      ["ROLE_USER", first.message.messageId],
      ["ROLE_AGENT", expect.stringMatching(/^msg_/)],
    ]);
    const second = userMessage("again", { contextId: sent.contextId });
    const next = (await rpc("/a2a/desk", "SendMessage", second)).result.task;

    const got = (await rpc("/a2a/desk", "GetTask", { id: next.id, historyLength: 2 })).result;
    expect(got.history.map((m: { messageId: string }) => m.messageId)).toEqual([
      second.message.messageId,
      expect.stringMatching(/^msg_/),
    ]);
    const listed = (await rpc("/a2a/desk", "ListTasks", { contextId: sent.contextId, historyLength: 1 })).result;
    expect(
      listed.tasks.map((t: { history: { messageId: string; role: string }[] }) => t.history.map((m) => m.role)),
    ).toEqual([["ROLE_AGENT"], ["ROLE_AGENT"]]);
    const withUser = (await rpc("/a2a/desk", "ListTasks", { contextId: sent.contextId, historyLength: 2 })).result;
    expect(withUser.tasks.map((t: { history: { messageId: string }[] }) => t.history[0]!.messageId)).toEqual([
      second.message.messageId,
      first.message.messageId,
    ]);
    // Relay's own API shows its own ids: the client's id is A2A's, kept beside the message.
    const history = (await call("GET", `/v1/sessions/${sent.contextId}/messages`)).json.items;
    expect(history.map((m: { id: string }) => m.id).every((id: string) => id.startsWith("msg_"))).toBe(true);
  });
});

type Listed = { tasks: { id: string }[]; nextPageToken: string; totalSize: number };

/** ListTasks at `path`: the ids listed, the token and the total. */
async function list(path: string, params: Record<string, unknown>) {
  const answer = await rpc(path, "ListTasks", params);
  if (!answer.result) throw new Error(JSON.stringify(answer.error));
  const listed = answer.result as Listed;
  return { ids: listed.tasks.map((t) => t.id), next: listed.nextPageToken, total: listed.totalSize };
}

const COMPLETED = "TASK_STATE_COMPLETED";
const FAILED = "TASK_STATE_FAILED";

describe("ListTasks filters before it pages", () => {
  it("in a context: a page holds pageSize tasks that pass, totalSize counts them all, no token once none is left", async () => {
    script({ lister: [answer("1"), httpError(400), answer("3"), httpError(400), answer("5")] });
    const first = (await rpc("/a2a/lister", "SendMessage", userMessage("1"))).result.task;
    const ids = [first.id as string];
    let between = "";
    for (const text of ["2", "3", "4", "5"]) {
      if (text === "4") between = new Date().toISOString();
      await new Promise((r) => setTimeout(r, text === "4" ? 5 : 0));
      const task = (await rpc("/a2a/lister", "SendMessage", userMessage(text, { contextId: first.contextId }))).result
        .task;
      ids.push(task.id);
    }
    const [t1, t2, t3, t4, t5] = ids;
    const context = { contextId: first.contextId };
    expect(await list("/a2a/lister", { ...context, status: COMPLETED, pageSize: 2 })).toEqual({
      ids: [t5, t3],
      next: t3,
      total: 3,
    });
    expect(await list("/a2a/lister", { ...context, status: COMPLETED, pageSize: 2, pageToken: t3 })).toEqual({
      ids: [t1],
      next: "",
      total: 3,
    });
    expect(await list("/a2a/lister", { ...context, status: FAILED, pageSize: 2 })).toEqual({
      ids: [t4, t2],
      next: "",
      total: 2,
    });
    expect(await list("/a2a/lister", { ...context, pageSize: 2 })).toEqual({ ids: [t5, t4], next: t4, total: 5 });
    // statusTimestampAfter is a time, whatever offset it is written with.
    const later = new Date(Date.parse(between));
    const offset = `${new Date(later.getTime() + 2 * 3_600_000).toISOString().slice(0, 23)}+02:00`;
    expect(await list("/a2a/lister", { ...context, statusTimestampAfter: offset })).toEqual({
      ids: [t5, t4],
      next: "",
      total: 2,
    });
    expect(await list("/a2a/lister", { ...context, status: "TASK_STATE_REJECTED" })).toEqual({
      ids: [],
      next: "",
      total: 0,
    });
  });

  it("across contexts: a task made a moment ago is listed before D1 has it; D1's list says the same once it has", async () => {
    script({ fresh: [answer("one"), httpError(400), answer("three"), answer("four")] });
    const made: { id: string; contextId: string }[] = [];
    for (const text of ["one", "two", "three"])
      made.push((await rpc("/a2a/fresh", "SendMessage", userMessage(text))).result.task);
    const [a, b, c] = made.map((t) => t.id) as [string, string, string];
    const check = async () => {
      // Only the runs that started with this agent (the desk's and the lister's are the tenant's too).
      expect(await list("/a2a/fresh", {})).toEqual({ ids: [c, b, a], next: "", total: 3 });
      expect(await list("/a2a/fresh", { status: COMPLETED, pageSize: 1 })).toEqual({ ids: [c], next: c, total: 2 });
      expect(await list("/a2a/fresh", { status: COMPLETED, pageSize: 1, pageToken: c })).toEqual({
        ids: [a],
        next: "",
        total: 2,
      });
      expect(await list("/a2a/fresh", { status: FAILED })).toEqual({ ids: [b], next: "", total: 1 });
    };
    // Straight away: the tenant's object names them, each read live from its session.
    await check();
    // Later: D1 has them, and the tenant's object has forgotten them.
    for (const task of made) await flushOutbox(sessionStub("alpha", task.contextId).stub);
    const tenant = env.TENANTS.get(env.TENANTS.idFromName("alpha")) as unknown as DurableObjectStub<TenantDO>;
    await runInDurableObject(tenant, (instance: TenantDO) => instance.clock.advance(RECENT_RUNS_MS + 1));
    const recent = await tenantRpc(env, "alpha").recentRuns("alpha");
    expect(recent.ok && recent.value.map((r) => r.run_id)).toEqual([]);
    await check();
    // One new task and D1's three: one list, in run order, counted together.
    const d = (await rpc("/a2a/fresh", "SendMessage", userMessage("four"))).result.task.id as string;
    expect(await list("/a2a/fresh", { pageSize: 2 })).toEqual({ ids: [d, c], next: c, total: 4 });
    expect(await list("/a2a/fresh", { pageSize: 2, pageToken: c })).toEqual({ ids: [b, a], next: "", total: 4 });
    expect(await list("/a2a/fresh", { status: COMPLETED, pageSize: 5 })).toEqual({
      ids: [d, c, a],
      next: "",
      total: 3,
    });
  });
});

describe("ListTasks across contexts, a streamed task", () => {
  it("is listed as soon as its client has the stream's first event, before D1 hears of it", async () => {
    script({ streamer: [answer("Streamed.")] });
    const id = (await call("POST", "/v1/sessions", { agent: "streamer" })).json.id as string;
    // The session's clock an hour ahead: its outbox does not flush while the test lists, so only
    // the tenant's object can name the run.
    await setClock(sessionStub("alpha", id).stub, Date.now() + 3_600_000);
    const response = await streamed(id, "stream it");
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const first = (await reader.read()).value!;
    const runId = /"run_id":"(run_[^"]+)"/.exec(first)?.[1];
    expect(runId).toBeDefined();
    expect(await list("/a2a/streamer", {})).toEqual({ ids: [runId], next: "", total: 1 });
    let rest = first;
    for (let part = await reader.read(); !part.done; part = await reader.read()) rest += part.value;
    expect(rest).toContain("event: result");
  });
});

describe("ListTasks across contexts while D1 lags", () => {
  it("a task whose status moved since D1 heard of it is not listed under its old status; D1's count catches up", async () => {
    const tenant = env.TENANTS.get(env.TENANTS.idFromName("alpha")) as unknown as DurableObjectStub<TenantDO>;
    const task = (await rpc("/a2a/clerk", "SendMessage", userMessage("may I?"))).result.task;
    expect(task.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const { stub } = sessionStub("alpha", task.contextId);
    await flushOutbox(stub);
    await runInDurableObject(tenant, (instance: TenantDO) => instance.clock.advance(RECENT_RUNS_MS + 1));
    // A person answers through the inbox (no user message, so the tenant's object is not told);
    // the session's clock is an hour ahead, so its outbox flushes only when the test says.
    await setClock(stub, Date.now() + 3_600_000);
    const inbox = (await call("GET", `/v1/sessions/${task.contextId}/inbox`)).json.items;
    expect((await call("POST", `/v1/inbox/${inbox[0].id}/resolve`, { reply: "Yes." })).status).toBe(200);
    const waiting = "TASK_STATE_INPUT_REQUIRED";
    // D1 still says it waits: it is counted there, but read live it has completed, so no page shows it.
    expect(await list("/a2a/clerk", { status: waiting })).toEqual({ ids: [], next: "", total: 1 });
    expect(await list("/a2a/clerk", { status: COMPLETED })).toEqual({ ids: [], next: "", total: 0 });
    await flushOutbox(stub);
    expect(await list("/a2a/clerk", { status: waiting })).toEqual({ ids: [], next: "", total: 0 });
    expect(await list("/a2a/clerk", { status: COMPLETED })).toEqual({ ids: [task.id], next: "", total: 1 });
  });
});
