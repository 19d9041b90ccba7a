import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, answers, type FakeServer, fakeServer, refusedUrl } from "./fake-server";
import { type Ran, relay } from "./run-cli";

/**
 * Whatever answers (or does not), every command family ends a failure as one coded line on
 * stderr, or one JSON object with --json, and an exit code: never a stack (docs/cli.md, Errors).
 */

const FAMILIES: Record<string, { args: string[]; input?: string }> = {
  ls: { args: ["agents", "ls"] },
  get: { args: ["agents", "get", "billing"] },
  chat: { args: ["chat", "--agent", "billing"], input: "hello\n" },
  tail: { args: ["tail", "ses_anything"] },
  audit: { args: ["audit"] },
  inbox: { args: ["inbox", "ls"] },
  route: { args: ["route", "hello"] },
  config: { args: ["config"] },
  memory: { args: ["memory", "ses_anything"] },
};

interface Expected {
  exit: number;
  code: string | RegExp;
}

/** The failure as stderr says it: one coded line (chat's notes may come before it), or one JSON object. */
function expectFailure(ran: Ran, json: boolean, expected: Expected, label: string): { code: string; message: string } {
  expect(ran.stderr, label).not.toContain("    at ");
  expect(ran.stderr, label).not.toMatch(/^\s+at\s/m);
  expect(ran.code, `${label}: exit code (stderr: ${ran.stderr})`).toBe(expected.exit);
  const lines = ran.stderr.trimEnd().split("\n");
  if (json) {
    expect(lines, label).toHaveLength(1);
    const { error } = JSON.parse(lines[0]!) as { error: { code: string; message: string } };
    expect(error.code, label).toMatch(expected.code);
    expect(typeof error.message, label).toBe("string");
    return error;
  }
  const last = lines.at(-1)!;
  // Before it, only chat's notes (where it is, the session it started).
  for (const note of lines.slice(0, -1))
    expect(note, label).toMatch(/^(Relay at \S+\. Type a message|session \S+ with )/);
  const match = /^relay: ([A-Z][A-Z0-9_]*): (.+)$/.exec(last);
  expect(match, `${label}: ${last}`).not.toBeNull();
  expect(match![1], label).toMatch(expected.code);
  return { code: match![1]!, message: match![2]! };
}

let fake: FakeServer;
beforeAll(async () => {
  fake = await fakeServer();
});
afterAll(() => fake.close());

const at = (url: string) => ({ env: { RELAY_URL: url, RELAY_API_KEY: "fake-key" } });

/** Each family against `answer`, in text and --json by turns (each family and each answer sees both). */
async function everyFamily(answer: Answer | string, expected: Expected, offset: number): Promise<void> {
  if (typeof answer !== "string") fake.answer(answer);
  const url = typeof answer === "string" ? answer : fake.url;
  const names = Object.keys(FAMILIES);
  for (const [i, name] of names.entries()) {
    const { args, input } = FAMILIES[name]!;
    const json = (i + offset) % 2 === 1;
    const ran = await relay(json ? [...args, "--json"] : args, { ...at(url), ...(input ? { input } : {}) });
    if (name === "chat" && json && expected.exit === 1) {
      // With --json, chat says a refusal on stdout, as one of its lines, and goes on (docs/cli.md, Chat).
      expect(ran.code).toBe(1);
      expect(ran.stderr).toBe("");
      const last = JSON.parse(ran.stdout.trim().split("\n").at(-1)!);
      expect(last.type).toBe("error");
      expect(last.error.code).toMatch(expected.code);
      continue;
    }
    expectFailure(ran, json, expected, `${name}${json ? " --json" : ""}`);
  }
}

describe("every command family, whatever answers", () => {
  it("a 2xx body that is not JSON: BAD_REPLY, exit 5", async () => {
    await everyFamily(
      answers.text(200, "application/json", "<html>\n  <p>Please sign in</p>\n</html>"),
      { exit: 5, code: "BAD_REPLY" },
      0,
    );
  });

  it("JSON of another shape: BAD_REPLY, exit 5", async () => {
    await everyFamily(answers.json(200, { items: "none", id: 7 }), { exit: 5, code: "BAD_REPLY" }, 1);
  });

  it("a 500 with an HTML page: HTTP_500, exit 3", async () => {
    await everyFamily(
      answers.text(500, "text/html", "<html>\n<body>Internal Server Error</body>\n</html>"),
      { exit: 3, code: "HTTP_500" },
      0,
    );
  });

  it("a connection dropped before any answer: UNREACHABLE, exit 3", async () => {
    await everyFamily(answers.drop(), { exit: 3, code: "UNREACHABLE" }, 1);
  });

  it("a connection refused: UNREACHABLE, exit 3", async () => {
    await everyFamily(await refusedUrl(), { exit: 3, code: "UNREACHABLE" }, 0);
  });

  it("an error body whose message tries to look like a stack: its code, on one line, exit 1", async () => {
    const body = { error: { code: "NOPE", message: "refused\n    at Object.<anonymous> (/srv/app.js:1:1)\u001b[31m" } };
    fake.answer(answers.json(400, body));
    for (const name of Object.keys(FAMILIES).filter((n) => n !== "chat")) {
      const { args } = FAMILIES[name]!;
      for (const json of [false, true]) {
        const ran = await relay(json ? [...args, "--json"] : args, at(fake.url));
        const error = expectFailure(ran, json, { exit: 1, code: "NOPE" }, name);
        // The line break and the escape sequence are spaces now: nothing a terminal would act on.
        expect(error.message).toMatch(/^refused at Object\.<anonymous> \(\/srv\/app\.js:1:1\) \[31m( \(HTTP 400\))?$/);
      }
    }
  });

  it("an error body that is not Relay's: HTTP_<status>, exit 1", async () => {
    await everyFamily(answers.json(418, { error: "teapot" }), { exit: 1, code: "HTTP_418" }, 1);
  });
});

describe("wrong shapes past the first request", () => {
  it("ls: a page whose item is not an agent names the field", async () => {
    fake.answer(answers.json(200, { items: [{ definition: null }], next_cursor: null }));
    const ran = await relay(["agents", "ls"], at(fake.url));
    const error = expectFailure(ran, false, { exit: 5, code: "BAD_REPLY" }, "ls");
    expect(error.message).toBe(
      `${fake.url} answered GET /v1/agents with JSON of another shape than this client reads (item 1.definition: expected an object, got null)`,
    );
  });

  it("a body cut off half-way: UNREACHABLE, exit 3", async () => {
    fake.answer(answers.cut());
    expectFailure(await relay(["audit", "--json"], at(fake.url)), true, { exit: 3, code: "UNREACHABLE" }, "audit");
  });

  it("config: the routing read, then a PUT answered with garbage", async () => {
    const view = { config: { threshold: 80 }, sources: { threshold: "env" }, stored: null, warnings: [] };
    fake.answer(
      answers.byRoute({ "GET /v1/config/routing": answers.json(200, view) }, answers.text(200, "text/plain", "ok")),
    );
    expectFailure(
      await relay(["config", "threshold", "70"], at(fake.url)),
      false,
      { exit: 5, code: "BAD_REPLY" },
      "config",
    );
  });

  it("inbox: an approval answered without its item", async () => {
    fake.answer(answers.json(200, { run: null }));
    const ran = await relay(["inbox", "approve", "inb_1", "--json"], at(fake.url));
    const error = expectFailure(ran, true, { exit: 5, code: "BAD_REPLY" }, "inbox approve");
    expect(error.message).toContain("(item: expected an object, got undefined)");
  });

  it("tail: the session is found, then the live socket is refused", async () => {
    fake.answer(answers.json(200, { id: "ses_1", current_agent: "billing" }));
    expectFailure(await relay(["tail", "ses_1"], at(fake.url)), false, { exit: 3, code: "UNREACHABLE" }, "tail");
  });

  describe("chat: the session starts, then the run's stream is not what chat reads", () => {
    const session = answers.json(201, { id: "ses_1", current_agent: "billing" });
    const stream = (text: string) =>
      answers.byRoute(
        {
          "POST /v1/sessions": session,
          "POST /v1/sessions/ses_1/messages": answers.text(200, "text/event-stream", text),
        },
        answers.json(404, { error: { code: "NOT_FOUND", message: "no" } }),
      );
    const chat = (json: boolean) =>
      relay(["chat", "--agent", "billing", ...(json ? ["--json"] : [])], { ...at(fake.url), input: "hello\n" });

    it("JSON where the event stream was asked for", async () => {
      fake.answer(answers.byRoute({ "POST /v1/sessions": session }, answers.json(200, { run: {} })));
      const error = expectFailure(await chat(true), true, { exit: 5, code: "BAD_REPLY" }, "chat");
      expect(error.message).toContain("application/json where an event stream was asked for");
    });

    it("an event whose data is not what its type says", async () => {
      const event = { id: "evt_1", type: "run_started", session_id: "ses_1", run_id: "run_1", at: "t", data: null };
      fake.answer(stream(`event: run_started\ndata: ${JSON.stringify(event)}\n\n`));
      for (const json of [false, true]) {
        const error = expectFailure(await chat(json), json, { exit: 5, code: "BAD_REPLY" }, "chat");
        expect(error.message).toContain(
          "(a run_started event) with JSON of another shape than this client reads (data: expected an object, got null)",
        );
      }
    });

    it("a result that is not JSON", async () => {
      fake.answer(stream("event: result\ndata: {oops\n\n"));
      const error = expectFailure(await chat(false), false, { exit: 5, code: "BAD_REPLY" }, "chat");
      expect(error.message).toContain("a result event that is not JSON");
    });

    it("a result whose run has no status", async () => {
      fake.answer(stream(`event: result\ndata: ${JSON.stringify({ message: {}, run: { id: "run_1" } })}\n\n`));
      expectFailure(await chat(true), true, { exit: 5, code: "BAD_REPLY" }, "chat");
    });

    it("a refusal is said and the conversation goes on: a coded line, or an error object on stdout with --json", async () => {
      fake.answer(answers.json(404, { error: { code: "AGENT_NOT_FOUND", message: "No agent\nnamed 'billing'." } }));
      const text = await chat(false);
      expect(text.code).toBe(4);
      expect(text.stderr.trimEnd().split("\n").at(-1)).toBe(
        "relay: AGENT_NOT_FOUND: No agent named 'billing'. (HTTP 404)",
      );
      const json = await chat(true);
      expect(json.code).toBe(4);
      expect(json.stderr).toBe("");
      expect(JSON.parse(json.stdout.trim())).toMatchObject({ type: "error", error: { code: "AGENT_NOT_FOUND" } });
    });
  });
});
