import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { readSse } from "../../src/lib/sse";
import { flushOutbox, sessionStub } from "../durable-objects/helpers";
import { eventually } from "../eventually";
import { answer, callTool, paced } from "../fakes/openai";
import { post, rpc, userMessage } from "./a2a-rpc";
import { ALPHA_KEY, BETA_KEY, call, newSession } from "./helpers";
import { answerAfterUnreadableEvents, script } from "./run-fixtures";

/**
 * Relay's agents as A2A 1.0 agents over JSON-RPC (docs/a2a.md): cards (who may read them),
 * SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask, the
 * A2A-Version header and A2A's error codes, on the wire. The model is faked; sessions and D1
 * are real. The Node interop suite drives the same endpoints with the official A2A client.
 */

const AGENTS = [
  {
    name: "triage",
    title: "Triage",
    description: "Sorts requests",
    triggers: { keywords: ["help"], examples: ["I need help"] },
    handoffs: ["billing"],
  },
  {
    name: "billing",
    title: "Billing",
    description: "Invoices and refunds",
    triggers: { keywords: ["invoice", "refund"], priority: 90 },
    capabilities: [{ name: "refunds", tags: ["money"] }],
  },
  { name: "slow", description: "Takes its time" },
  { name: "off", description: "Disabled", enabled: false },
];

beforeAll(async () => {
  for (const agent of AGENTS) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(`PUT ${agent.name}: ${JSON.stringify(res.json)}`);
  }
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

async function getCard(path: string, key?: string) {
  const res = await (exports as any).default.fetch(
    new Request(`http://relay.test${path}`, key ? { headers: { Authorization: `Bearer ${key}` } } : {}),
  );
  return { status: res.status, json: (await res.json()) as any };
}

describe("cards", () => {
  it("with the tenant's key: the agent's card, its JSON-RPC interface, skills, bearer scheme and the handoff extension", async () => {
    const { status, json } = await getCard("/a2a/billing/.well-known/agent-card.json", ALPHA_KEY);
    expect(status).toBe(200);
    expect(json).toMatchObject({
      name: "Billing",
      description: "Invoices and refunds",
      supportedInterfaces: [
        { url: "http://relay.test/a2a/billing", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      ],
      capabilities: { streaming: true, extendedAgentCard: true },
      securitySchemes: { relay_api_key: { httpAuthSecurityScheme: { scheme: "Bearer" } } },
      securityRequirements: [{ schemes: { relay_api_key: {} } }],
    });
    expect(json.capabilities.extensions[0].uri).toBe("urn:relay:a2a:extension:handoff:v1");
    expect(json.skills.map((s: { id: string }) => s.id)).toEqual(["billing", "billing.refunds"]);
    expect(json.skills[0].tags).toEqual(["invoice", "refund", "refunds"]);
  });

  it("the front door's card has a skill per enabled agent", async () => {
    const { json } = await getCard("/a2a/.well-known/agent-card.json", ALPHA_KEY);
    expect(json.name).toBe("Relay");
    expect(json.supportedInterfaces[0].url).toBe("http://relay.test/a2a");
    expect(json.skills.map((s: { id: string }) => s.id)).toEqual(["billing", "slow", "triage"]);
  });

  it("without a key every address answers the same card, which tells nothing; a wrong key is 401; another tenant's agent is 404", async () => {
    const known = await getCard("/a2a/billing/.well-known/agent-card.json");
    const unknown = await getCard("/a2a/no-such-agent/.well-known/agent-card.json");
    expect(known.status).toBe(200);
    // One generic skill (A2A 1.0 requires one), nothing of the agent's own.
    expect(known.json.skills.map((s: { id: string }) => s.id)).toEqual(["relay"]);
    expect({ ...known.json, supportedInterfaces: [] }).toEqual({ ...unknown.json, supportedInterfaces: [] });
    expect(JSON.stringify(known.json)).not.toContain("Invoices");
    expect((await getCard("/a2a/billing/.well-known/agent-card.json", "nope")).status).toBe(401);
    expect((await getCard("/a2a/billing/.well-known/agent-card.json", BETA_KEY)).status).toBe(404);
  });
});

describe("SendMessage", () => {
  it("runs the agent in a new session: the task is the run (completed, the answer as its artifact), the context the session", async () => {
    script({ billing: [answer("Your invoice is paid.")] });
    const { id, result } = await rpc("/a2a/billing", "SendMessage", userMessage("is my invoice paid?"));
    expect(id).toBe(7);
    const task = result.task;
    expect(task.id).toMatch(/^run_/);
    expect(task.contextId).toMatch(/^ses_/);
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(task.artifacts).toEqual([
      expect.objectContaining({ name: "answer", parts: [{ text: "Your invoice is paid." }] }),
    ]);
    expect(task.history.map((m: { role: string }) => m.role)).toEqual(["ROLE_USER", "ROLE_AGENT"]);
    // The same run through Relay's own API.
    const run = await call("GET", `/v1/sessions/${task.contextId}/runs/${task.id}`);
    expect(run.json).toMatchObject({ status: "completed", output: "Your invoice is paid.", agent: "billing" });
    // A second message in the same context is a new task of the same session.
    script({ billing: [answer("Anything else?")] });
    const next = await rpc("/a2a/billing", "SendMessage", userMessage("thanks", { contextId: task.contextId }));
    expect(next.result.task.contextId).toBe(task.contextId);
    expect(next.result.task.id).not.toBe(task.id);
  });

  it("the front door routes the message, and the handoff is in the task's history", async () => {
    script({ triage: [callTool("transfer_to_billing", { reason: "a refund" })], billing: [answer("Refund sent.")] });
    const { result } = await rpc("/a2a", "SendMessage", userMessage("I need help"));
    expect(result.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(result.task.metadata.relay).toMatchObject({ output_agent: "billing" });
    const handoff = result.task.history.find((m: { parts: { data?: unknown }[] }) => m.parts.some((p) => p.data));
    expect(handoff.parts[1].data).toEqual({
      relay: { handoff: { from: "triage", to: "billing", reason: "a refund" } },
    });
  });

  it("returnImmediately answers WORKING; GetTask reads it later; ListTasks lists the context's tasks", async () => {
    script({ slow: [paced(answer("done at last"), 60)] });
    const { result } = await rpc("/a2a/slow", "SendMessage", {
      ...userMessage("take your time"),
      configuration: { returnImmediately: true },
    });
    expect(result.task.status.state).toBe("TASK_STATE_WORKING");
    const task = await eventually(
      async () => (await rpc("/a2a/slow", "GetTask", { id: result.task.id })).result,
      (t: any) => t.status.state !== "TASK_STATE_WORKING",
      { what: "the task past working" },
    );
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    const listed = (await rpc("/a2a/slow", "ListTasks", { contextId: task.contextId })).result;
    expect(listed.tasks.map((t: { id: string }) => t.id)).toEqual([task.id]);
    expect(listed.nextPageToken).toBe("");
    expect(listed.tasks[0].artifacts).toBeUndefined();
  });
});

describe("ListTasks across contexts", () => {
  it("at an agent's endpoint lists the runs that started with it, newest first, from the audit trail; pages by token", async () => {
    script({ slow: [answer("a"), answer("b"), answer("c")] });
    const ids: string[] = [];
    for (const text of ["one", "two", "three"]) {
      const task = (await rpc("/a2a/slow", "SendMessage", userMessage(text))).result.task;
      ids.push(task.id);
      await flushOutbox(sessionStub("alpha", task.contextId).stub);
    }
    const first = (await rpc("/a2a/slow", "ListTasks", { pageSize: 2 })).result;
    expect(first.tasks.map((t: { id: string }) => t.id)).toEqual([ids[2], ids[1]]);
    expect(first.nextPageToken).not.toBe("");
    const second = (await rpc("/a2a/slow", "ListTasks", { pageSize: 2, pageToken: first.nextPageToken })).result;
    expect(second.tasks.map((t: { id: string }) => t.id)).toContain(ids[0]);
    const completed = (await rpc("/a2a/slow", "ListTasks", { status: "TASK_STATE_COMPLETED" })).result;
    expect(completed.tasks.every((t: { status: { state: string } }) => t.status.state === "TASK_STATE_COMPLETED")).toBe(
      true,
    );
    expect((await rpc("/a2a/slow", "ListTasks", { pageSize: 500 })).error?.code).toBe(-32602);
    // UNRECOGNIZED, what the SDK's client sends for a status left unset, filters nothing.
    const unset = (await rpc("/a2a/slow", "ListTasks", { status: "UNRECOGNIZED" })).result;
    expect(unset.tasks.map((t: { id: string }) => t.id)).toEqual(expect.arrayContaining(ids));
    // What the spec refuses and the SDK would take: each -32602, naming the field.
    const refused: [string, unknown][] = [
      ["ListTasks", { status: "TASK_STATE_BOGUS" }],
      ["ListTasks", { historyLength: -3 }],
      ["ListTasks", { statusTimestampAfter: "not-a-date" }],
      ["GetTask", { id: ids[0], historyLength: -3 }],
      ["SendMessage", { message: { role: "ROLE_USER", parts: [{ text: "no id" }] } }],
    ];
    for (const [method, params] of refused) {
      const answer = await rpc("/a2a/slow", method, params);
      expect(answer.error?.code, JSON.stringify(params)).toBe(-32602);
      expect(answer.error?.message).toMatch(/historyLength|status|messageId/);
    }
  });

  it("takes back only a page token of the list's own shape; anything else is -32602", async () => {
    script({ slow: [answer("a"), answer("b")] });
    const tasks: { id: string; contextId: string }[] = [];
    for (const text of ["one", "two"]) {
      const task = (await rpc("/a2a/slow", "SendMessage", userMessage(text))).result.task;
      tasks.push(task);
      await flushOutbox(sessionStub("alpha", task.contextId).stub);
    }
    const token = (await rpc("/a2a/slow", "ListTasks", { pageSize: 1 })).result.nextPageToken as string;
    expect((await rpc("/a2a/slow", "ListTasks", { pageSize: 1, pageToken: token })).result.tasks).toHaveLength(1);
    // The token is the last run's id: an audit record id (a ULID) is not one, nor anything near a run id.
    const auditId = "01KB2M9Y3ZQ8X7W6V5T4S3R2P1";
    for (const bad of ["fg", token.toUpperCase(), `${token}\u0000`, btoa(token), auditId, token.slice(0, 30)]) {
      expect((await rpc("/a2a/slow", "ListTasks", { pageToken: bad })).error?.code, bad).toBe(-32602);
    }
    // In a context, the token is a run of that context: not another's, nor an audit record id.
    const [a, b] = tasks as [{ id: string; contextId: string }, { id: string; contextId: string }];
    expect((await rpc("/a2a/slow", "ListTasks", { contextId: a.contextId, pageToken: a.id })).result.tasks).toEqual([]);
    for (const bad of [b.id, auditId, `${a.id}\u0000`]) {
      const listed = await rpc("/a2a/slow", "ListTasks", { contextId: a.contextId, pageToken: bad });
      expect(listed.error?.code, bad).toBe(-32602);
    }
  });
});

describe("errors", () => {
  it("A2A's own codes: task not found, not cancelable, unsupported operation, version not supported, push notifications", async () => {
    expect((await rpc("/a2a/billing", "GetTask", { id: "run_nope" })).error?.code).toBe(-32001);
    script({ billing: [answer("ok")] });
    const done = (await rpc("/a2a/billing", "SendMessage", userMessage("hi"))).result.task;
    expect((await rpc("/a2a/billing", "CancelTask", { id: done.id })).error?.code).toBe(-32002);
    const again = await rpc("/a2a/billing", "SendMessage", userMessage("more", { taskId: done.id }));
    expect(again.error?.code).toBe(-32004);
    const old = await rpc("/a2a/billing", "GetTask", { id: done.id }, { version: null });
    expect(old.error?.code).toBe(-32009);
    expect((await rpc("/a2a/billing", "GetTask", { id: done.id }, { version: "2.0" })).error?.code).toBe(-32009);
    expect(
      (await rpc("/a2a/billing", "CreateTaskPushNotificationConfig", { taskId: done.id, url: "https://x.test" })).error
        ?.code,
    ).toBe(-32003);
    expect((await rpc("/a2a/billing", "NoSuchMethod", {})).error?.code).toBe(-32601);
    // Another tenant's task is not found.
    expect((await rpc("/a2a", "GetTask", { id: done.id }, { key: BETA_KEY })).error?.code).toBe(-32001);
  });

  it("a body that is not JSON is a parse error, one that is no request an invalid request, never a 500; no key is 401; a disabled agent is refused", async () => {
    const send = async (body: string, version: string | null = "1.0") => {
      const headers: Record<string, string> = { Authorization: `Bearer ${ALPHA_KEY}` };
      if (version) headers["A2A-Version"] = version;
      const res = await (exports as any).default.fetch(
        new Request("http://relay.test/a2a/billing", { method: "POST", headers, body }),
      );
      expect(res.status).toBe(200);
      return (await res.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
    };
    expect(await send("{nope")).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: "Parse error: the body is not JSON." },
    });
    // The envelope is checked before the version: a client that sends none still learns what is wrong.
    expect((await send("{nope", null)).error.code).toBe(-32700);
    const request = { jsonrpc: "2.0", id: 7, method: "GetTask", params: { id: "x" } };
    const invalid: [unknown, unknown][] = [
      [[request], null],
      ["just a string", null],
      [{ ...request, jsonrpc: "1.0" }, 7],
      [{ jsonrpc: "2.0", id: "a", params: {} }, "a"],
      [{ ...request, method: "" }, 7],
      [{ ...request, id: { not: "an id" } }, null],
    ];
    for (const [body, id] of invalid) {
      const answer = await send(JSON.stringify(body));
      expect(answer.error.code, JSON.stringify(body)).toBe(-32600);
      expect(answer.id).toBe(id);
    }
    // A2A's own media type: taken as JSON, and answered in when the client accepts it.
    const typed = await (exports as any).default.fetch(
      new Request("http://relay.test/a2a/billing", {
        method: "POST",
        headers: {
          Authorization: `Bearer ${ALPHA_KEY}`,
          "A2A-Version": "1.0",
          "Content-Type": "application/a2a+json",
          Accept: "application/a2a+json",
        },
        body: JSON.stringify({ ...request, method: "GetTask", params: { id: "run_nope" } }),
      }),
    );
    expect(typed.headers.get("Content-Type")).toBe("application/a2a+json");
    expect(((await typed.json()) as { error: { code: number } }).error.code).toBe(-32001);
    // A well-formed request with bad params is still invalid params.
    expect(
      (await send(JSON.stringify({ ...request, method: "ListTasks", params: { pageSize: 500 } }))).error.code,
    ).toBe(-32602);
    const anonymous = await (exports as any).default.fetch(
      new Request("http://relay.test/a2a/billing", { method: "POST", body: "{}" }),
    );
    expect(anonymous.status).toBe(401);
    expect((await post("/a2a/off", "GetTask", { id: "x" })).status).toBe(422);
  });
});

describe("streaming", () => {
  it("SendStreamingMessage: the task, WORKING, the answer's pieces as artifact updates, the whole answer, COMPLETED", async () => {
    script({ billing: [paced(answer("Your refund is on its way."), 5, 6)] });
    const res = await post("/a2a/billing", "SendStreamingMessage", userMessage("refund?"));
    expect(res.headers.get("Content-Type")).toContain("text/event-stream");
    const events: any[] = [];
    const ids: (string | undefined)[] = [];
    for await (const frame of readSse(res.body!)) {
      events.push(JSON.parse(frame.data).result);
      ids.push(frame.id);
    }
    const kinds = events.map((e) => Object.keys(e)[0]);
    expect(kinds[0]).toBe("task");
    expect(kinds.at(-1)).toBe("statusUpdate");
    expect(events.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    const pieces = events.filter((e) => e.artifactUpdate && !e.artifactUpdate.lastChunk);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.map((p) => p.artifactUpdate.artifact.parts[0].text).join("")).toBe("Your refund is on its way.");
    expect(pieces[1].artifactUpdate.append).toBe(true);
    const whole = events.find((e) => e.artifactUpdate?.lastChunk);
    expect(whole.artifactUpdate.artifact).toMatchObject({
      artifactId: pieces[0].artifactUpdate.artifact.artifactId,
      parts: [{ text: "Your refund is on its way." }],
    });
    // Stored events carry their live event id (resumable with Last-Event-ID); pieces carry none.
    expect(ids.at(-1)).toMatch(/^evt_/);
    const task = await rpc("/a2a/billing", "GetTask", { id: events[0].task.id });
    expect(task.result.status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("skips a stored event it cannot read, and streams the rest to COMPLETED with the real answer", async () => {
    const sessionId = await newSession("billing");
    const fake = answerAfterUnreadableEvents(sessionId, paced(answer("Refunded in full."), 0, 5));
    const res = await post("/a2a/billing", "SendStreamingMessage", userMessage("refund?", { contextId: sessionId }));
    const events: any[] = [];
    for await (const frame of readSse(res.body!)) events.push(JSON.parse(frame.data));
    expect(fake.requests).toHaveLength(1);
    expect(events.filter((e) => e.error)).toEqual([]);
    const results = events.map((e) => e.result);
    expect(results.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    const whole = results.filter((e) => e.artifactUpdate?.lastChunk);
    expect(whole.map((e) => e.artifactUpdate.artifact.parts[0].text)).toEqual(["Refunded in full."]);
    expect(JSON.stringify(results)).not.toContain("not the answer");
  });

  it("SubscribeToTask joins a running task (the task first, then what follows) and resumes after Last-Event-ID; CancelTask cancels it", async () => {
    script({ slow: [paced(answer("one two three four five six seven eight"), 40, 4)] });
    const started = (
      await rpc("/a2a/slow", "SendMessage", { ...userMessage("go"), configuration: { returnImmediately: true } })
    ).result.task;
    const res = await post("/a2a/slow", "SubscribeToTask", { id: started.id });
    const reader = readSse(res.body!);
    const first = await reader.next();
    expect(JSON.parse(first.value!.data).result.task.id).toBe(started.id);
    const second = await reader.next();
    expect(Object.keys(JSON.parse(second.value!.data).result)[0]).toBe("artifactUpdate");
    const cancelled = await rpc("/a2a/slow", "CancelTask", { id: started.id });
    expect(cancelled.result.status.state).toBe("TASK_STATE_CANCELED");
    const rest: any[] = [];
    let lastId: string | undefined;
    for await (const frame of reader) {
      rest.push(JSON.parse(frame.data).result);
      lastId = frame.id ?? lastId;
    }
    expect(rest.at(-1).statusUpdate.status.state).toBe("TASK_STATE_CANCELED");
    // The task has ended: subscribing again is UnsupportedOperation.
    expect((await rpc("/a2a/slow", "SubscribeToTask", { id: started.id })).error?.code).toBe(-32004);
    expect(lastId).toMatch(/^evt_/);
  });
});
