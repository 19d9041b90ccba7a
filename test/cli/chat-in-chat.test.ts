import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RoutingConfigView, unwrap } from "../../client/src/index.ts";
import { relay, testClient } from "./run-cli";

/**
 * The in-chat commands of `relay chat` (docs/cli.md, Chat commands), typed on its standard
 * input against the demo team on `wrangler dev` with the offline `local` provider.
 */

const client = testClient();
const ANSWER = "local provider (offline, not a model) answering:";

const sessionOf = (stderr: string) => /session (ses_\w+) with/.exec(stderr)?.[1] ?? "";

/** The session's user messages, as stored. */
async function userMessages(session: string): Promise<string[]> {
  const page = await unwrap(client.api.GET("/v1/sessions/{id}/messages", { params: { path: { id: session } } }));
  return page.items.filter((m) => m.role === "user").map((m) => m.content);
}

describe("relay chat: /help and refused commands", () => {
  it("/help lists every in-chat command, and sends nothing", async () => {
    const ran = await relay(["chat"], { input: "/help\n" });
    expect(ran.code).toBe(0);
    const usages = ran.stdout.split("\n").map((line) => line.trim().split(/\s{2,}/)[0]);
    expect(usages).toEqual([
      "<text>",
      '@auto "…" [--strategy=rule|llm]',
      '@<agent> "…"',
      "/agents config routing",
      "/agents config routing.<key> <value>",
      '/agents route "…" [--strategy=…]',
      "/agents trace",
      "/agents handoff-chain",
      "/help",
      "/quit, /exit, Ctrl-C",
      "//…, @@…",
      "",
    ]);
    expect(ran.stderr).not.toContain("session ");
  });

  it("an unknown /command is refused with a hint and never sent; the chat goes on", async () => {
    const ran = await relay(["chat", "--agent", "triage"], { input: "hello\n/frobnicate the invoice\n/quit\nlater\n" });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain(
      "relay: USAGE: unknown command /frobnicate; /help lists the commands (// sends a message that starts with /)\n",
    );
    expect(ran.stdout).toBe(`triage: ${ANSWER} “hello”\n`);
    // /quit still leaves: the line after it is not sent either.
    expect(await userMessages(sessionOf(ran.stderr))).toEqual(["hello"]);
  });

  it("before the first message, a refused command starts no session", async () => {
    const ran = await relay(["chat"], { input: "/agents dance\n" });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/relay: USAGE: unknown command \/agents dance; \/help lists the commands\n$/);
    expect(ran.stderr).not.toContain("session ");
  });
});

describe("relay chat: @auto and @<agent>", () => {
  it("@auto in a session routes the message and hands the session to the agent chosen", async () => {
    const ran = await relay(["chat", "--agent", "triage"], {
      input: 'hello\n@auto "I was charged twice for my subscription"\n/agents handoff-chain\n',
    });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe(
      `triage: ${ANSWER} “hello”\n` +
        "🎯 Routing via rule to billing (100%)\n" +
        "↪ triage → billing: routed via rule (relay chat @auto)\n" +
        `billing: ${ANSWER} “I was charged twice for my subscription”\n` +
        "1. triage → billing: routed via rule (relay chat @auto)\n",
    );
    const session = await unwrap(
      client.api.GET("/v1/sessions/{id}", { params: { path: { id: sessionOf(ran.stderr) } } }),
    );
    expect(session.current_agent).toBe("billing");
  });

  it("@auto --strategy=llm starts a session with the LLM tier's pick", async () => {
    const ran = await relay(["chat"], { input: '@auto "my payments look strange lately" --strategy=llm\n' });
    expect(ran.code).toBe(0);
    const [routed, answer] = ran.stdout.split("\n");
    const agent = /^🎯 Routing via llm to (\w+)$/.exec(routed ?? "")?.[1];
    expect(agent).toBeDefined();
    expect(answer).toBe(`${agent}: ${ANSWER} “my payments look strange lately”`);
    expect(ran.stderr).toContain(`with ${agent}\n`);
  });

  it("@auto when nothing fits: the fallback is said and nothing is sent", async () => {
    const ran = await relay(["chat", "--agent", "triage"], { input: "hello\n@auto hmm, something odd\n" });
    expect(ran.code).toBe(1);
    expect(ran.stdout.split("\n")[1]).toBe("🎯 No agent fits (fallback)");
    expect(ran.stderr).toMatch(
      /relay: NO_ROUTE: .+; nothing was sent\. Name one with @<agent> "…": billing, sales, supervisor, technical, triage\n$/,
    );
    expect(await userMessages(sessionOf(ran.stderr))).toEqual(["hello"]);
  });

  it("@<agent> starts a session with it, then hands a session to another; a refused handoff sends nothing", async () => {
    const ran = await relay(["chat"], {
      input: '@technical "my app crashes"\n@billing "and refund me"\n@sales "buy more?"\n/agents handoff-chain\n',
    });
    expect(ran.code).toBe(1);
    expect(ran.stdout).toBe(
      `technical: ${ANSWER} “my app crashes”\n` +
        "↪ technical → billing: asked for by the user in relay chat\n" +
        `billing: ${ANSWER} “and refund me”\n` +
        "1. technical → billing: asked for by the user in relay chat\n" +
        "2. billing → sales failed (HANDOFF_NOT_ALLOWED): asked for by the user in relay chat\n",
    );
    expect(ran.stderr).toMatch(/relay: HANDOFF_NOT_ALLOWED: 'billing' may not hand off to 'sales'.+\(HTTP 422\)\n/);
    expect(await userMessages(sessionOf(ran.stderr))).toEqual(["my app crashes", "and refund me"]);
  });
});

describe("relay chat: /agents", () => {
  let stored: RoutingConfigView["stored"];

  beforeAll(async () => {
    stored = (await unwrap(client.api.GET("/v1/config/routing"))).stored;
  });

  afterAll(async () => {
    // The tenant's layer as it was, for the files after this one.
    await client.api.PUT("/v1/config/routing", { body: stored ?? {} });
  });

  it("/agents config routing shows every value and its layer; routing.<key> <value> sets one, as relay config does", async () => {
    const before = await relay(["config"]);
    const ran = await relay(["chat"], {
      input: "/agents config routing\n/agents config routing.threshold 72\n/agents config routing.bogus 1\n",
    });
    expect(ran.code).toBe(2);
    // The whole table as relay config prints it, then the one value set.
    expect(ran.stdout).toBe(`${before.stdout}setting            value  layer\nrouting.threshold  72     tenant\n`);
    expect(ran.stderr).toMatch(/relay: USAGE: unknown setting "routing\.bogus": one of routing\.enabled, .+\n$/);
    const view = await unwrap(client.api.GET("/v1/config/routing"));
    expect(view.config.threshold).toBe(72);
    expect(view.sources.threshold).toBe("tenant");
  });

  it('/agents route "…" is the routing analysis relay route prints, and runs nothing', async () => {
    const ran = await relay(["chat"], { input: '/agents route "I was charged twice for my subscription"\n' });
    const analysed = await relay(["route", "I was charged twice for my subscription"]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe(analysed.stdout);
    expect(ran.stdout).toMatch(/^🎯 Routing via rule to billing \(100%\)\n {2}strategy {4}/);
    expect(ran.stdout).toMatch(/\n {2}LLM tier {4}not needed: /);
    expect(ran.stderr).not.toContain("session ");
  });

  it("/agents trace lists the session's steps with times, durations and the totals", async () => {
    const ran = await relay(["chat", "--agent", "billing"], { input: "where is my invoice?\n/agents trace\n" });
    expect(ran.code).toBe(0);
    const lines = ran.stdout.split("\n");
    expect(lines[0]).toBe(`billing: ${ANSWER} “where is my invoice?”`);
    expect(lines[1]).toMatch(/^time\s+agent\s+step\s+ms\s+tokens\s+detail$/);
    const steps = lines.slice(2, -2);
    const trace = await unwrap(
      client.api.GET("/v1/sessions/{id}/trace", { params: { path: { id: sessionOf(ran.stderr) } } }),
    );
    expect(steps.map((l) => l.split(/\s+/).slice(1, 3))).toEqual(trace.items.map((t) => [t.agent_name, t.event_type]));
    expect(steps[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3}\s+billing\s+agent_start\s+\d+\s+run started$/);
    expect(steps.find((l) => l.includes("llm_call"))).toMatch(/\s+llm_call\s+\d+\s+.*local/);
    expect(lines.at(-2)).toMatch(
      new RegExp(`^${trace.items.length} steps, \\d+ ms, \\d+ tokens \\(\\d+ in, \\d+ out\\)$`),
    );
  });

  it("/agents trace and handoff-chain before the first message say there is no session yet", async () => {
    const ran = await relay(["chat"], { input: "/agents trace\n/agents handoff-chain\n" });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe("no session yet: the first message starts one\n".repeat(2));
  });

  it("--json: one object a line for each command, its type saying which", async () => {
    const ran = await relay(["chat", "--json", "--agent", "triage"], {
      input:
        '/help\n/agents route "refund please"\n/agents config routing.strategy\nhello\n/agents trace\n/agents handoff-chain\n/nope\n',
    });
    expect(ran.code).toBe(2);
    const objects = ran.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const ours = objects.filter((o) =>
      ["help", "route_analysis", "routing_config", "trace", "handoff_chain", "error"].includes(o.type),
    );
    expect(ours.map((o) => o.type)).toEqual([
      "help",
      "route_analysis",
      "routing_config",
      "trace",
      "handoff_chain",
      "error",
    ]);
    expect(ours[0].commands).toHaveLength(11);
    expect(ours[1].decision).toMatchObject({ method: expect.any(String), matched_keywords: expect.any(Array) });
    expect(ours[2]).toMatchObject({ key: "routing.strategy", value: expect.any(String), source: expect.any(String) });
    expect(ours[3].items.map((s: { event_type: string }) => s.event_type)).toContain("llm_call");
    expect(ours[4].items).toEqual([]);
    expect(ours[5]).toEqual({
      type: "error",
      error: { code: "USAGE", message: expect.stringMatching(/^unknown command \/nope;/) },
    });
  });
});
