import { runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { drainDue, sessionStub } from "../durable-objects/helpers";
import { eventually } from "../eventually";
import { answer, delayed, paced, sayAndCall } from "../fakes/openai";
import { ALPHA_KEY, call, newSession, putAgents } from "./helpers";
import { script } from "./run-fixtures";

/**
 * A crash while an answer streams (docs/runs.md, Restarts): the session's object is reset
 * (state.abort, a real crash) after five pieces of answer A went out. Pieces are not stored,
 * so the resumed run must tell subscribers that A is gone before it streams the new answer
 * B: a client replaying from the last stored event sees A retracted, then B from index 0,
 * and the conversation holds B only. The model is faked; the object, its alarm and its
 * storage are real.
 */

beforeAll(async () => {
  const agents = [
    { name: "teller", description: "Tells long stories", handoffs: ["archivist"] },
    { name: "archivist", description: "Finds old records" },
  ];
  await putAgents(agents);
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

const worker = () => (exports as unknown as { default: Fetcher }).default;

/** A WebSocket subscriber of the session's live events, from `after` when given. */
async function subscribe(id: string, after?: string) {
  const query = after ? `?after=${after}` : "";
  const response = await worker().fetch(`http://relay.test/v1/sessions/${id}/ws${query}`, {
    headers: { Upgrade: "websocket", Authorization: `Bearer ${ALPHA_KEY}` },
  });
  const ws = response.webSocket;
  if (!ws) throw new Error(`no upgrade: ${response.status}`);
  const frames: any[] = [];
  ws.accept();
  ws.addEventListener("message", (e) => frames.push(JSON.parse(e.data as string)));
  const until = (done: (frames: any[]) => boolean) =>
    eventually(async () => frames, done, { what: "the awaited WebSocket frames" });
  return { frames, until };
}

const STORY = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");

describe("a crash while an answer streams", () => {
  it("retracts the half-streamed answer before the resumed run streams a new one", async () => {
    script({ teller: [paced(answer(STORY), 30, 6), paced(answer("A fresh answer after the restart."), 10, 8)] });
    const id = await newSession("teller");
    const first = await subscribe(id);
    const running = call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "tell me a story" }).catch(
      () => undefined,
    );
    await first.until((f) => f.filter((x) => x.type === "message.delta").length >= 5);
    const lastStored = first.frames.filter((f) => typeof f.id === "string").at(-1).id as string;
    const ghost = first.frames.find((f) => f.type === "message.delta").data.message_id as string;

    // A crash: the object is reset with the answer half written (what a deploy or an exceeded limit does).
    await runInDurableObject(sessionStub("alpha", id).stub, (_instance, state) =>
      state.abort("crash under test"),
    ).catch(() => undefined);
    await running;

    // A client replays from the last stored event it had; the restart's resume timer is due at once.
    const replay = await subscribe(id, lastStored);
    await drainDue(sessionStub("alpha", id).stub);
    await replay.until((f) => f.some((x) => x.type === "run_completed"));

    const types = replay.frames.map((f) => `${f.type}:${f.data?.message_id ?? ""}`);
    const retracted = replay.frames.findIndex((f) => f.type === "message.retracted");
    expect(replay.frames[retracted]?.data).toEqual({ message_id: ghost, agent: "teller", code: "RUN_INTERRUPTED" });
    const fresh = replay.frames.filter((f) => f.type === "message.delta");
    expect(fresh.length).toBeGreaterThan(0);
    expect(fresh.every((f) => f.data.message_id !== ghost)).toBe(true);
    expect(fresh.map((f) => f.data.index)).toEqual(fresh.map((_, i) => i));
    // Retracted before anything of the new answer streams.
    expect(replay.frames.indexOf(fresh[0])).toBeGreaterThan(retracted);
    expect(types.filter((t) => t.startsWith("message.retracted"))).toHaveLength(1);

    const messages = (await call("GET", `/v1/sessions/${id}/messages?limit=50`)).json.items as any[];
    expect(messages.some((m) => m.id === ghost)).toBe(false);
    expect(messages.at(-1)).toMatchObject({
      role: "assistant",
      content: "A fresh answer after the restart.",
      id: fresh[0].data.message_id,
    });
  });

  it("retracts nothing when the streamed answer was stored before the crash", async () => {
    script({
      teller: [sayAndCall("Passing you to the archivist.", { name: "transfer_to_archivist" })],
      archivist: [delayed(3_000, answer("too late")), answer("From the archive.")],
    });
    const id = await newSession("teller");
    const first = await subscribe(id);
    const running = call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "find it" }).catch(
      () => undefined,
    );
    // The teller's streamed answer is stored; the archivist is thinking (nothing streamed yet).
    await first.until((f) => f.some((x) => x.type === "agent_started" && x.data.agent_name === "archivist"));
    const lastStored = first.frames.filter((f) => typeof f.id === "string").at(-1).id as string;
    await runInDurableObject(sessionStub("alpha", id).stub, (_instance, state) =>
      state.abort("crash under test"),
    ).catch(() => undefined);
    await running;

    const replay = await subscribe(id, lastStored);
    await drainDue(sessionStub("alpha", id).stub);
    await replay.until((f) => f.some((x) => x.type === "run_completed"));
    expect(replay.frames.some((f) => f.type === "message.retracted")).toBe(false);
    const messages = (await call("GET", `/v1/sessions/${id}/messages?limit=50`)).json.items as any[];
    expect(messages.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual([
      "Passing you to the archivist.",
      "From the archive.",
    ]);
  });
});
