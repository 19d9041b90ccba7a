import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unwrap } from "../../client/src/index.ts";
import { type RemoteAgent, startRemoteAgent } from "../interop/remote-agent";
import { collect, startRelay, testClient } from "./run-cli";

/**
 * Ctrl-C in `relay chat` (docs/cli.md, Chat): while a run streams it cancels the run, whose
 * partial answer stays, marked cut, and the chat goes on; a second Ctrl-C, or one at the
 * prompt, leaves. The slow answer comes from a remote A2A agent served by the A2A SDK
 * (test/interop/remote-agent.ts), which streams it a word every few milliseconds.
 */

const client = testClient();
const REMOTE_PORT = 8855;
/** Thousands of pieces: seconds of streaming, far more than the test waits before its Ctrl-C. */
const LONG = `Once upon a time ${"and then ".repeat(3000)}the end.`;

let remote: RemoteAgent;

beforeAll(async () => {
  remote = await startRemoteAgent(REMOTE_PORT);
  await unwrap(
    client.api.PUT("/v1/agents/{name}", {
      params: { path: { name: "storyteller" } },
      body: {
        name: "storyteller",
        kind: "a2a",
        description: "Tells long stories.",
        card_url: `${remote.url}/.well-known/agent-card.json`,
      },
    }),
  );
});

afterAll(async () => {
  await client.api.DELETE("/v1/agents/{name}", { params: { path: { name: "storyteller" } } });
  await remote?.stop();
});

/** A chat with its input kept open, as a person's terminal keeps it. */
function openChat(args: string[]) {
  const child = startRelay(["chat", ...args]);
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  return { child, stdout: collect(child.stdout!), stderr: collect(child.stderr!), exited };
}

const sessionOf = (stderr: string) => /session (ses_\w+) with/.exec(stderr)?.[1] ?? "";

const interrupt = (child: ChildProcess) => child.kill("SIGINT");

describe("relay chat: Ctrl-C", () => {
  it("while a run streams: the run is cancelled, its partial answer kept and marked cut; the chat goes on", async () => {
    remote.script({ answer: LONG });
    const chat = openChat(["--agent", "storyteller"]);
    chat.child.stdin!.write("tell me a story\n");
    await chat.stdout.waitFor(/storyteller: Once upon a time and then/);
    interrupt(chat.child);
    await chat.stdout.waitFor(/✗ the run was cancelled\n/);
    chat.child.stdin!.end("/agents handoff-chain\n");
    expect(await chat.exited).toBe(0);

    const lines = chat.stdout.text().split("\n");
    // The story streams a word at a time: the cut may fall after either word.
    expect(lines[0]).toMatch(/^storyteller: Once upon a time ((and|then) )+ ?✂ cut$/);
    expect(lines[1]).toBe("✗ the run was cancelled");
    // The chat went on to the next line typed.
    expect(lines[2]).toBe("no handoffs yet");
    expect(chat.stderr.text()).toContain("cancelling the run (Ctrl-C again leaves)\n");

    const session = sessionOf(chat.stderr.text());
    const audit = await unwrap(client.api.GET("/v1/sessions/{id}/audit", { params: { path: { id: session } } }));
    expect(audit.items.map((r) => r.action)).toContain("run.cancelled");
    const messages = await unwrap(client.api.GET("/v1/sessions/{id}/messages", { params: { path: { id: session } } }));
    const answer = messages.items.at(-1)!;
    expect(answer).toMatchObject({ role: "assistant", agent: "storyteller", cut: true });
    // What was written, and no more: the answer had not come to its end.
    expect(answer.content).toMatch(/^Once upon a time (and then )+/);
    expect(answer.content).not.toContain("the end.");
    // The pieces shown are what was kept.
    expect(lines[0]).toContain(answer.content.trimEnd());
  });

  it("a second Ctrl-C leaves, with the input still open", async () => {
    remote.script({ answer: LONG });
    const chat = openChat(["--agent", "storyteller"]);
    chat.child.stdin!.write("another story, please\n");
    await chat.stdout.waitFor(/storyteller: Once upon a time and then/);
    interrupt(chat.child);
    await chat.stderr.waitFor(/cancelling the run/);
    interrupt(chat.child);
    expect(await chat.exited).toBe(0);
    expect(chat.stderr.text()).not.toMatch(/relay: [A-Z_]+:/);
  });

  it("Ctrl-C at the prompt leaves", async () => {
    const chat = openChat(["--agent", "storyteller"]);
    await chat.stderr.waitFor(/Type a message/);
    interrupt(chat.child);
    expect(await chat.exited).toBe(0);
    expect(chat.stdout.text()).toBe("");
  });
});
