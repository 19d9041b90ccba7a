import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../eventually";
import { answer, paced, rawStream, sayAndCall, streamChunks, whole } from "../fakes/openai";
import { ALPHA_KEY, call, streamed } from "./helpers";
import { script } from "./run-fixtures";

/**
 * Answers streamed as they are written (docs/runs.md, Live events): the fake model streams the
 * chunks OpenAI sends; Relay hands each piece of text on as a `message.delta` live event on
 * the run's Server-Sent Events and the session's WebSocket, between the step events, and
 * keeps the whole message only.
 */

beforeAll(async () => {
  for (const agent of [
    { name: "front", description: "Front", handoffs: ["back"] },
    { name: "back", description: "Back" },
    {
      name: "judge",
      description: "Answers in JSON",
      guardrails: { output_schema: { type: "object", required: ["verdict"] }, on_failure: "reject" },
    },
  ]) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(JSON.stringify(res.json));
  }
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

const worker = () => (exports as unknown as { default: Fetcher }).default;
const session = async (agent = "front"): Promise<string> => (await call("POST", "/v1/sessions", { agent })).json.id;

interface Frame {
  id?: string;
  event: string;
  data: any;
}

function parseFrames(text: string): Frame[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "" && !block.startsWith(":"))
    .map((block) => {
      const frame: Partial<Frame> = {};
      for (const line of block.split("\n")) {
        const at = line.indexOf(": ");
        const field = line.slice(0, at);
        const value = line.slice(at + 2);
        if (field === "id") frame.id = value;
        if (field === "event") frame.event = value;
        if (field === "data") frame.data = JSON.parse(value);
      }
      return frame as Frame;
    });
}

async function subscribe(id: string) {
  const response = await worker().fetch(`http://relay.test/v1/sessions/${id}/ws`, {
    headers: { Upgrade: "websocket", Authorization: `Bearer ${ALPHA_KEY}` },
  });
  const ws = response.webSocket!;
  const frames: any[] = [];
  ws.accept();
  ws.addEventListener("message", (e) => frames.push(JSON.parse(e.data as string)));
  const until = (done: (frames: any[]) => boolean) =>
    eventually(async () => frames, done, { what: "the awaited WebSocket frames" });
  return { ws, frames, until };
}

const until = <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> =>
  eventually(read, done, { what: "the run's awaited state" });

const history = async (id: string) => (await call("GET", `/v1/sessions/${id}/messages?limit=100`)).json.items;

describe("a streamed run through a handoff", () => {
  it("text, then a tool call in pieces, then usage; the handoff between one agent's last piece and the next one's first; SSE and the WebSocket agree", async () => {
    script({
      front: [
        sayAndCall("Let me pass you to the back office.", { name: "transfer_to_back", arguments: { reason: "deep" } }),
      ],
      back: [answer("Back here: your refund is on its way.")],
    });
    const id = await session();
    const socket = await subscribe(id);
    const response = await streamed(id, "refund please");
    const frames = parseFrames(await response.text());
    const kinds = frames.map((f) => (f.event === "message" ? `message:${f.data.data.role}` : f.event));
    const firstBack = frames.findIndex((f) => f.event === "message.delta" && f.data.data.agent === "back");
    const lastFront = frames.findLastIndex((f) => f.event === "message.delta" && f.data.data.agent === "front");
    const handoff = kinds.indexOf("handoff");
    expect(lastFront).toBeGreaterThan(0);
    expect(lastFront).toBeLessThan(handoff);
    expect(handoff).toBeLessThan(firstBack);

    // Each agent's pieces, in order, are its stored message, under the stored message's id.
    const stored = (await history(id)).filter((m: { role: string }) => m.role === "assistant");
    for (const agent of ["front", "back"]) {
      const pieces = frames
        .filter((f) => f.event === "message.delta" && f.data.data.agent === agent)
        .map((f) => f.data.data);
      const message = stored.find((m: { agent: string }) => m.agent === agent);
      expect(pieces.map((p) => p.index)).toEqual(pieces.map((_, i) => i));
      expect(new Set(pieces.map((p) => p.message_id))).toEqual(new Set([message.id]));
      expect(pieces.map((p) => p.delta).join("")).toBe(message.content);
    }
    expect(stored[0]).toMatchObject({
      content: "Let me pass you to the back office.",
      tool_calls: [{ name: "transfer_to_back" }],
    });
    // The model call's trace says it streamed, with the usage of the last chunk.
    const llm = frames.filter((f) => f.event === "llm_call").map((f) => f.data.data.details);
    expect(llm).toEqual([
      expect.objectContaining({ streamed: true, tokens: { prompt: 42, completion: 7, total: 49 } }),
      expect.objectContaining({ streamed: true }),
    ]);

    // The WebSocket saw the same events, pieces included, in the same order.
    await socket.until((f) => f.some((x) => x.type === "run_completed"));
    const runId = frames[0]!.data.run_id;
    const overSocket = socket.frames.filter((f) => f.run_id === runId);
    expect(overSocket).toEqual(frames.filter((f) => f.event !== "result").map((f) => f.data));
  });

  it("a provider that answers whole: no pieces, one message, and the trace says it did not stream", async () => {
    script({ front: [whole(answer("All in one go."))] });
    const id = await session();
    const frames = parseFrames(await (await streamed(id, "hi")).text());
    expect(frames.some((f) => f.event === "message.delta")).toBe(false);
    expect(frames.find((f) => f.event === "llm_call")!.data.data.details.streamed).toBe(false);
    expect(frames.at(-1)!.data.run).toMatchObject({ status: "completed", output: "All in one go." });
  });

  it("a subscriber that connects mid-message gets the stored events, then the message's pieces so far, then the rest", async () => {
    script({ front: [paced(answer("one two three four five six seven eight nine ten"), 40, 4)] });
    const id = await session();
    const first = await subscribe(id);
    const running = call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "count" });
    await first.until((f) => f.filter((x) => x.type === "message.delta").length >= 3);
    const late = await subscribe(id);
    await running;
    await late.until((f) => f.some((x) => x.type === "run_completed"));
    const pieces = late.frames.filter((f) => f.type === "message.delta");
    expect(pieces.map((p) => p.data.index)).toEqual(pieces.map((_, i) => i));
    expect(pieces.map((p) => p.data.delta).join("")).toBe("one two three four five six seven eight nine ten");
  });
});

describe("a stream that goes wrong: a coded run error, the partial text kept as cut, nothing stuck", () => {
  const chunks = streamChunks("fake-model", { kind: "content", content: "I will look into it right away" });
  const cases = {
    "cut in the middle": rawStream(chunks.slice(0, 4)),
    "a chunk that is not JSON": rawStream([...chunks.slice(0, 4), "{oops", ...chunks.slice(4)]),
    "a tool call whose arguments never close": rawStream(
      streamChunks("fake-model", {
        kind: "tools",
        content: "I will look into it",
        calls: [{ name: "transfer_to_back", arguments: '{"reason": "dee' }],
      }).slice(0, -3),
    ),
  };
  for (const [name, reply] of Object.entries(cases)) {
    it(name, async () => {
      script({ front: [reply, answer("Fine now.")] });
      const id = await session();
      const frames = parseFrames(await (await streamed(id, "help")).text());
      const run = frames.at(-1)!.data.run;
      expect(run).toMatchObject({ status: "failed", error: { code: "MODEL_ERROR" } });
      const pieces = frames.filter((f) => f.event === "message.delta").map((f) => f.data.data);
      const kept = (await history(id)).find((m: { role: string }) => m.role === "assistant");
      expect(kept).toMatchObject({ cut: true, id: pieces[0].message_id, content: pieces.map((p) => p.delta).join("") });
      // Not stuck: the next message runs.
      expect(
        (await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "again" })).json.run,
      ).toMatchObject({ status: "completed", output: "Fine now." });
    });
  }
});

describe("cancelling mid-stream", () => {
  const long = "Counting slowly: one, two, three, four, five, six, seven, eight, nine, ten, eleven, twelve.";

  it("stops the model call, keeps what was written as cut, and ends the run cancelled", async () => {
    const fake = script({ front: [paced(answer(long), 50, 3)] });
    const id = await session();
    const socket = await subscribe(id);
    const running = call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "count" });
    await socket.until((f) => f.filter((x) => x.type === "message.delta").length >= 2);
    const runId = socket.frames.find((f) => f.type === "run_started").run_id;
    const cancelled = await call("POST", `/v1/sessions/${id}/runs/${runId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.json).toMatchObject({ status: "cancelled", error: { code: "RUN_CANCELLED" } });
    expect((await running).json.run.status).toBe("cancelled");
    const kept = (await history(id)).find((m: { role: string }) => m.role === "assistant");
    expect(kept.cut).toBe(true);
    expect(long.startsWith(kept.content)).toBe(true);
    expect(kept.content.length).toBeLessThan(long.length);
    // The model request itself was stopped, not left to run on.
    await until(
      async () => fake.aborted(),
      (n) => n >= 1,
    );
    await socket.until((f) => f.some((x) => x.type === "run_cancelled"));
    // Ended: a second cancel is refused, and the session takes the next message.
    expect((await call("POST", `/v1/sessions/${id}/runs/${runId}/cancel`)).json.error.code).toBe("RUN_NOT_CANCELLABLE");
    script({ front: [answer("Next.")] });
    expect((await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "hi" })).json.run.status).toBe(
      "completed",
    );
  });

  it("a client that goes away mid-stream, with nobody else listening, cancels the run", async () => {
    script({ front: [paced(answer(long), 50, 3)] });
    const id = await session();
    const response = await streamed(id, "count");
    const reader = response.body!.getReader();
    let seen = "";
    while (!seen.includes("event: message.delta")) seen += new TextDecoder().decode((await reader.read()).value);
    const runId = parseFrames(seen).find((f) => f.event === "run_started")!.data.run_id;
    await reader.cancel();
    const run = await until(
      async () => (await call("GET", `/v1/sessions/${id}/runs/${runId}`)).json,
      (r) => r.status !== "running",
    );
    expect(run).toMatchObject({ status: "cancelled", error: { code: "RUN_CANCELLED" } });
  });

  it("an unknown or another session's run is RUN_NOT_FOUND", async () => {
    const id = await session();
    expect((await call("POST", `/v1/sessions/${id}/runs/run_nothing/cancel`)).json.error.code).toBe("RUN_NOT_FOUND");
  });
});

describe("a guardrail that refuses a streamed answer", () => {
  it("retracts it: a coded message.retracted event after its pieces, and the run fails GUARDRAIL_FAILED", async () => {
    script({ judge: [answer("I think it is fine, honestly.")] });
    const id = await session("judge");
    const frames = parseFrames(await (await streamed(id, "judge this")).text());
    const pieces = frames.filter((f) => f.event === "message.delta");
    const retracted = frames.find((f) => f.event === "message.retracted")!;
    expect(pieces.length).toBeGreaterThan(0);
    expect(retracted.data.data).toEqual({
      message_id: pieces[0]!.data.data.message_id,
      agent: "judge",
      code: "GUARDRAIL_FAILED",
    });
    expect(frames.indexOf(retracted)).toBeGreaterThan(frames.indexOf(pieces.at(-1)!));
    expect(frames.at(-1)!.data.run).toMatchObject({ status: "failed", error: { code: "GUARDRAIL_FAILED" } });
    expect((await history(id)).some((m: { role: string }) => m.role === "assistant")).toBe(false);
  });
});
