import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, answers, type FakeServer, fakeServer } from "./fake-server";
import { collect, relay, startRelay } from "./run-cli";

/**
 * `relay chat`'s commands and Ctrl-C against a fake Relay (test/cli/fake-server.ts) that
 * speaks Relay's wire protocol where the test needs it, for what the real one does not do on
 * demand: answers of another shape, and a cancel that is refused.
 */

let fake: FakeServer;
beforeAll(async () => {
  fake = await fakeServer();
});
afterAll(() => fake.close());

const env = () => ({ env: { RELAY_URL: fake.url, RELAY_API_KEY: "fake-key" } });
const notFound = answers.json(404, { error: { code: "NOT_FOUND", message: "no" } });
const page = (items: unknown[]) => answers.json(200, { items, next_cursor: null, pending: 0 });

describe("chat commands: an answer of another shape ends the chat as BAD_REPLY", () => {
  it.each([
    [
      "/agents trace",
      "GET /v1/sessions/ses_1/trace",
      page([{ event_type: "llm_call" }]),
      "(timestamp: expected a string",
    ],
    ["/agents handoff-chain", "GET /v1/sessions/ses_1/audit", page([{ at: "t" }]), "(action: expected a string"],
    [
      "@billing hello",
      "POST /v1/handoffs",
      answers.json(200, { id: "hof_1" }),
      "(status: expected a string, got undefined)",
    ],
  ])("%s", async (line, route, answer, message) => {
    fake.answer(
      answers.byRoute(
        { [route]: answer, "GET /v1/sessions/ses_1": answers.json(200, { id: "ses_1", current_agent: "triage" }) },
        notFound,
      ),
    );
    const ran = await relay(["chat", "--session", "ses_1"], { ...env(), input: `${line}\n` });
    expect(ran.code).toBe(5);
    expect(ran.stderr.trimEnd().split("\n").at(-1)).toMatch(/^relay: BAD_REPLY: /);
    expect(ran.stderr).toContain(message);
    expect(ran.stderr).not.toMatch(/^\s+at\s/m);
  });
});

describe("Ctrl-C while a run streams, and the cancel is not done", () => {
  const RUN = { id: "run_1", status: "running", agent: "billing" };
  const frame = (type: string, data: unknown, id = "") =>
    `event: ${type}\ndata: ${JSON.stringify({ id, type, session_id: "ses_1", run_id: "run_1", at: "t", data })}\n\n`;

  /** A run that streams one piece and waits; the cancel gets `cancelled`, then the run ends as it would have. */
  function streaming(cancelled: Answer): Answer {
    let open: ServerResponse | null = null;
    return answers.byRoute(
      {
        "POST /v1/sessions/ses_1/messages": (_req, res) => {
          res.writeHead(200, { "Content-Type": "text/event-stream" });
          res.write(frame("run_started", RUN, "evt_1"));
          res.write(frame("message.delta", { message_id: "msg_1", agent: "billing", index: 0, delta: "Hel" }));
          open = res;
        },
        "POST /v1/sessions/ses_1/runs/run_1/cancel": (req, res) => {
          cancelled(req, res);
          const done = { ...RUN, status: "completed", output: "Hello", output_agent: "billing" };
          open?.end(
            frame("message.delta", { message_id: "msg_1", agent: "billing", index: 1, delta: "lo" }) +
              frame("message", { id: "msg_1", role: "assistant", agent: "billing", content: "Hello" }, "evt_2") +
              `event: result\ndata: ${JSON.stringify({ message: {}, run: done })}\n\n`,
          );
        },
      },
      notFound,
    );
  }

  async function interrupted(cancelled: Answer) {
    fake.answer(streaming(cancelled));
    const child = startRelay(["chat", "--session", "ses_1"], env());
    const stdout = collect(child.stdout!);
    const stderr = collect(child.stderr!);
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    child.stdin!.write("hello\n");
    await stdout.waitFor(/billing: Hel/);
    child.kill("SIGINT");
    await stdout.waitFor(/billing: Hello\n/);
    child.stdin!.end();
    return { code: await exited, stdout: stdout.text(), stderr: stderr.text() };
  }

  it("a run that ended meanwhile (RUN_NOT_CANCELLABLE) needs no cancelling: nothing more is said", async () => {
    const ran = await interrupted(
      answers.json(409, { error: { code: "RUN_NOT_CANCELLABLE", message: "The run has ended." } }),
    );
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe("billing: Hello\n");
    expect(ran.stderr).toMatch(/cancelling the run \(Ctrl-C again leaves\)\n$/);
    expect(fake.seen.map((s) => `${s.method} ${s.path}`)).toContain("POST /v1/sessions/ses_1/runs/run_1/cancel");
  });

  it("a cancel that fails is said on one line, and the run's stream goes on to its end", async () => {
    const ran = await interrupted(answers.text(500, "text/html", "<html><body>Bad gateway</body></html>"));
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe("billing: Hello\n");
    expect(ran.stderr).toMatch(/\nrelay: HTTP_500: .+\n$/);
    expect(ran.stderr).not.toMatch(/^\s+at\s/m);
  });
});
