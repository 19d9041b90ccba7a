import { describe, expect, inject, it } from "vitest";
import {
  createRelayClient,
  type LiveEvent,
  RelayConnectionError,
  unwrap,
  type WebSocketConstructor,
} from "../../client/src/index.ts";
import { runMessage, testClient } from "../cli/run-cli";

/** subscribe(): a session's WebSocket as an async iterator that resumes after the last event it saw. */

const relay = testClient();

async function session(): Promise<string> {
  return (await unwrap(relay.api.POST("/v1/sessions", { body: { agent: "billing" } }))).id;
}

/** Reads events until one of `type` arrives for the run. */
async function until(events: AsyncIterator<LiveEvent>, type: string, seen: LiveEvent[]): Promise<void> {
  for (;;) {
    const next = await events.next();
    if (next.done) throw new Error(`the subscription ended before ${type}`);
    seen.push(next.value);
    if (next.value.type === type) return;
  }
}

describe("subscribe", () => {
  it("delivers every event of the session as it happens", async () => {
    const id = await session();
    const sub = relay.subscribe(id);
    await sub.ready;
    const seen: LiveEvent[] = [];
    const reading = until(sub[Symbol.asyncIterator](), "run_completed", seen);
    const { run } = await runMessage(relay, id, "refund please");
    await reading;
    sub.close();
    expect(seen[0]!.type).toBe("run_started");
    // Each trace event of the run is a live event with the same id.
    expect(run.events.map((e) => e.event_id).every((e) => seen.some((s) => s.id === e))).toBe(true);
    expect(sub.lastEventId).toBe(seen.at(-1)!.id);
  });

  it("after: replays what came after an event id, nothing before it", async () => {
    const id = await session();
    await runMessage(relay, id, "refund please");
    const { run } = await runMessage(relay, id, "and my invoice");
    const firstOfSecondRun = run.events[0]!.event_id;
    const sub = relay.subscribe(id, { after: firstOfSecondRun });
    const seen: LiveEvent[] = [];
    await until(sub[Symbol.asyncIterator](), "run_completed", seen);
    sub.close();
    expect(seen.every((e) => e.id > firstOfSecondRun)).toBe(true);
    expect(seen.every((e) => e.run_id === run.id || e.run_id === null)).toBe(true);
  });

  it("reconnects when the socket drops and resumes after the last event: none lost, none twice", async () => {
    const sockets: WebSocket[] = [];
    const Recording = class extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols);
        sockets.push(this);
      }
    } as WebSocketConstructor;
    const watched = createRelayClient({ url: relay.url, apiKey: inject("relayKey"), WebSocket: Recording });
    const id = await session();
    const states: string[] = [];
    const sub = watched.subscribe(id, { onState: (s) => states.push(s) });
    await sub.ready;
    const events = sub[Symbol.asyncIterator]();
    const seen: LiveEvent[] = [];
    const first = await runMessage(relay, id, "refund please");
    await until(events, "run_completed", seen);

    // The connection drops; a run happens while it is down; the subscription comes back after the last event it saw.
    const lastBeforeDrop = sub.lastEventId!;
    sockets[0]!.close();
    const second = await runMessage(relay, id, "and my invoice");
    await until(events, "run_completed", seen);
    sub.close();

    expect(sockets.length).toBeGreaterThanOrEqual(2);
    expect(new URL(sockets[1]!.url).searchParams.get("after")).toBe(lastBeforeDrop);
    expect(states.slice(0, 3)).toEqual(["live", "reconnecting", "live"]);
    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort());
    // Every trace event of both runs arrived, the second's made while the socket was down.
    for (const { run } of [first, second])
      expect(run.events.map((e) => e.event_id).every((e) => ids.includes(e))).toBe(true);
  });

  it("a key Relay refuses: the subscription fails instead of retrying", async () => {
    const wrong = createRelayClient({ url: relay.url, apiKey: "not-a-key-of-this-relay" });
    const sub = wrong.subscribe(await session());
    await expect(sub.ready).rejects.toBeInstanceOf(RelayConnectionError);
    await expect(sub[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(RelayConnectionError);
  });
});
