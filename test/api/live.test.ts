import { evictDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { sessionStub } from "../durable-objects/helpers";
import { answer, callTool, delayed } from "../fakes/openai";
import { ALPHA_KEY, BETA_KEY, call, streamed } from "./helpers";
import { script } from "./run-fixtures";

/**
 * Live events (docs/runs.md, Live events): a message's run streamed as Server-Sent Events, and hibernatable
 * WebSockets that every subscriber of a session receives the same events on, replayed from
 * storage after a reconnect with `?after=`.
 */

beforeAll(async () => {
  for (const agent of [
    { name: "front", description: "Front", handoffs: ["back"] },
    { name: "back", description: "Back" },
  ]) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(JSON.stringify(res.json));
  }
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

const worker = () => (exports as unknown as { default: Fetcher }).default;

async function session(): Promise<string> {
  return (await call("POST", "/v1/sessions", { agent: "front" })).json.id;
}

interface SseFrame {
  id?: string;
  event: string;
  data: any;
}

/** Reads a whole SSE response into frames (comments skipped). */
async function readSse(response: Response): Promise<SseFrame[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "" && !block.startsWith(":"))
    .map((block) => {
      const frame: Partial<SseFrame> = {};
      for (const line of block.split("\n")) {
        const [field, ...rest] = line.split(": ");
        const value = rest.join(": ");
        if (field === "id") frame.id = value;
        if (field === "event") frame.event = value;
        if (field === "data") frame.data = JSON.parse(value);
      }
      return frame as SseFrame;
    });
}

/** A WebSocket subscriber through the Worker, collecting what it is sent. */
async function subscribe(
  id: string,
  { after, key = ALPHA_KEY, protocols }: { after?: string; key?: string | null; protocols?: string } = {},
) {
  const headers: Record<string, string> = { Upgrade: "websocket" };
  if (key && !protocols) headers.Authorization = `Bearer ${key}`;
  if (protocols) headers["Sec-WebSocket-Protocol"] = protocols;
  const response = await worker().fetch(`http://relay.test/v1/sessions/${id}/ws${after ? `?after=${after}` : ""}`, {
    headers,
  });
  const ws = response.webSocket;
  const frames: any[] = [];
  const waiters: (() => void)[] = [];
  if (ws) {
    ws.accept();
    ws.addEventListener("message", (e) => {
      frames.push(JSON.parse(e.data as string));
      for (const w of waiters.splice(0)) w();
    });
  }
  /** Resolves once a frame satisfies `done` (at most 5 s). */
  const until = async (done: (frame: any) => boolean) => {
    for (let i = 0; i < 500 && !frames.some(done); i++)
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 10);
      });
    if (!frames.some(done)) throw new Error(`no such frame in ${JSON.stringify(frames.map((f) => f.type))}`);
  };
  const events = () => frames.filter((f) => f.type !== "subscribed");
  /** What is stored (and replayed): every event but the pieces of an answer, which carry no id. */
  const stored = () => events().filter((f) => f.id !== undefined);
  return { response, ws, frames, events, stored, until };
}

/** Event types with each run of consecutive answer pieces shown once, as `message.delta…`. */
function collapsed(types: string[]): string[] {
  return types
    .filter((t, i) => t !== "message.delta" || types[i - 1] !== "message.delta")
    .map((t) => (t === "message.delta" ? "message.delta…" : t));
}

describe("Server-Sent Events", () => {
  it("streams the run's events in order as they happen, ending with the JSON response's object", async () => {
    script({ front: [callTool("transfer_to_back", { reason: "deep" })], back: [answer("Done.")] });
    const id = await session();
    const response = await streamed(id, "help");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const frames = await readSse(response);
    // The second agent's answer streams between its start and its model call's end.
    expect(collapsed(frames.map((f) => (f.event === "message" ? `message:${f.data.data.role}` : f.event)))).toEqual([
      "run_started",
      "message:user",
      "agent_started",
      "llm_call",
      "tool_call",
      "message:assistant",
      "handoff",
      "agent_started",
      "message:tool",
      "message.delta…",
      "llm_call",
      "agent_completed",
      "message:assistant",
      "run_completed",
      "result",
    ]);
    const deltas = frames.filter((f) => f.event === "message.delta").map((f) => f.data);
    const stored = frames.filter((f) => f.event === "message" && f.data.data.role === "assistant").at(-1)!.data.data;
    expect(deltas.map((d) => d.data.index)).toEqual(deltas.map((_, i) => i));
    expect(deltas.every((d) => d.data.message_id === stored.id && d.data.agent === "back")).toBe(true);
    expect(deltas.map((d) => d.data.delta).join("")).toBe(stored.content);
    expect(frames.filter((f) => f.event === "message.delta").every((f) => f.id === undefined)).toBe(true);
    const ids = frames.filter((f) => f.id).map((f) => f.id!);
    expect([...ids].sort()).toEqual(ids);
    const result = frames.at(-1)!.data;
    expect(result.message).toMatchObject({ role: "user", content: "help" });
    expect(result.run).toMatchObject({ status: "completed", output: "Done.", output_agent: "back" });
    // The stream's trace events are the run's trace, id for id.
    const traced = frames.filter((f) => f.data?.data?.event_id).map((f) => f.id);
    expect(traced).toEqual(result.run.events.map((e: { event_id: string }) => e.event_id));
    // The same run as JSON afterwards.
    expect((await call("GET", `/v1/sessions/${id}/runs/${result.run.id}`)).json).toMatchObject({
      status: "completed",
      output: "Done.",
    });
  });

  it("a refused message is a JSON error, not a stream; no key is 401", async () => {
    const id = await session();
    const headers = { "Content-Type": "application/json", Accept: "text/event-stream" };
    const body = JSON.stringify({ role: "user", content: "hi" });
    const unauthorized = await worker().fetch(`http://relay.test/v1/sessions/${id}/messages`, {
      method: "POST",
      headers,
      body,
    });
    expect(unauthorized.status).toBe(401);
    const missing = await worker().fetch(`http://relay.test/v1/sessions/ses_${"0".repeat(52)}/messages`, {
      method: "POST",
      headers: { ...headers, Authorization: `Bearer ${ALPHA_KEY}` },
      body,
    });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.code).toBe("SESSION_NOT_FOUND");
  });
});

describe("WebSockets", () => {
  it("two subscribers receive the same events, in order", async () => {
    script({ front: [answer("Hello!")] });
    const id = await session();
    const a = await subscribe(id);
    const b = await subscribe(id);
    expect(a.response.status).toBe(101);
    await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "hi" });
    await a.until((f) => f.type === "run_completed");
    await b.until((f) => f.type === "run_completed");
    expect(collapsed(a.events().map((e) => e.type))).toEqual([
      "run_started",
      "message",
      "agent_started",
      "message.delta…",
      "llm_call",
      "agent_completed",
      "message",
      "run_completed",
    ]);
    expect(b.events()).toEqual(a.events());
    expect(a.events().every((e) => e.session_id === id)).toBe(true);
  });

  it("a reconnect with ?after= replays what it missed from storage: nothing lost, nothing twice", async () => {
    script({ front: [answer("one")] });
    const id = await session();
    const steady = await subscribe(id);
    const flaky = await subscribe(id);
    await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "first" });
    await flaky.until((f) => f.type === "run_completed");
    const seen = flaky.stored();
    flaky.ws!.close(1000, "bye");
    // While it is away, a second run happens.
    script({ front: [answer("two")] });
    await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "second" });
    await steady.until((f) => f.type === "run_completed" && f.data.output === "two");
    const back = await subscribe(id, { after: seen.at(-1)!.id });
    await back.until((f) => f.type === "run_completed" && f.data.output === "two");
    // What is past comes back whole: the stored events, the answer as its message (its pieces are not replayed).
    expect([...seen, ...back.events()]).toEqual(steady.stored());
  });

  it("subscribers survive the object's eviction (hibernation) and keep receiving", async () => {
    const id = await session();
    const sub = await subscribe(id);
    await evictDurableObject(sessionStub("alpha", id).stub);
    script({ front: [answer("after eviction")] });
    await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "still there?" });
    await sub.until((f) => f.type === "run_completed");
    expect(sub.events().find((e) => e.type === "run_completed").data.output).toBe("after eviction");
  });

  it("auth: a browser passes the key as a subprotocol; no key is 401; another tenant's key finds no session", async () => {
    const id = await session();
    const browser = await subscribe(id, { protocols: `relay.v1, bearer.${ALPHA_KEY}` });
    expect(browser.response.status).toBe(101);
    expect(browser.response.headers.get("Sec-WebSocket-Protocol")).toBe("relay.v1");
    const anonymous = await subscribe(id, { key: null });
    expect(anonymous.response.status).toBe(401);
    const other = await subscribe(id, { key: BETA_KEY });
    expect(other.response.status).toBe(404);
    // `after` is a live event id as the socket sends it, or the position is refused.
    for (const after of [
      "not-an-id",
      "%00%ff",
      "fg",
      "EVT_01JABCDEFGHJKMNPQRSTVWXYZ0",
      "evt_01jabcdefghjkmnpqrstvwxyz0%00",
    ]) {
      const badAfter = await subscribe(id, { after });
      expect(badAfter.response.status, after).toBe(400);
      expect(((await badAfter.response.json()) as any).error.code, after).toBe("INVALID_CURSOR");
    }
    const plain = await call("GET", `/v1/sessions/${id}/ws`);
    expect(plain.status).toBe(400);
  });

  it("a slow model: the socket hears the run start before the answer exists", async () => {
    script({ front: [delayed(300, answer("slow"))] });
    const id = await session();
    const sub = await subscribe(id);
    const sent = call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "hi" });
    await sub.until((f) => f.type === "agent_started");
    expect(sub.events().some((e) => e.type === "run_completed")).toBe(false);
    await sent;
    await sub.until((f) => f.type === "run_completed");
  });

  it("every handoff's status changes reach subscribers, whatever started it (here the API, with no run)", async () => {
    const id = await session();
    const ws = await subscribe(id);
    const started = await call("POST", "/v1/handoffs", {
      session_id: id,
      source_agent: "front",
      target_agent: "back",
      reason: "by hand",
    });
    expect(started.status).toBe(200);
    await ws.until((f) => f.type === "handoff_status" && f.data.status === "completed");
    const steps = ws.events().filter((e) => e.type === "handoff_status");
    expect(steps.every((e) => e.data.handoff_id === started.json.id && e.run_id === null && e.session_id === id)).toBe(
      true,
    );
    expect(steps[0].data).toMatchObject({
      action: "handoff.initiated",
      source: "front",
      target: "back",
      reason: "by hand",
    });
    expect(steps.map((e) => e.data.status)).toEqual(started.json.transitions.map((t: { to: string }) => t.to));
    // The same steps as the session's audit trail, one event per record.
    const audit = await call("GET", `/v1/sessions/${id}/audit`);
    expect(steps.map((e) => e.data.action)).toEqual(
      audit.json.items
        .filter((r: { action: string }) => r.action.startsWith("handoff."))
        .map((r: { action: string }) => r.action),
    );
  });
});
