import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unwrap, verifyWebhook } from "../../client/src/index.ts";
import { type Received, receiver, relay, testClient } from "./run-cli";

/**
 * `relay chat` driven through its standard input, as a script (or a person typing) drives it,
 * against the demo team on `wrangler dev` with the offline `local` provider.
 */

const client = testClient();

describe("relay chat", () => {
  it("routes the first message and streams the run to the agent's answer", async () => {
    const ran = await relay(["chat"], { input: "I was charged twice for my subscription\n" });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe(
      "🎯 Routing via rule to billing (100%)\n" +
        "billing: local provider (offline, not a model) answering: “I was charged twice for my subscription”\n",
    );
    expect(ran.stderr).toMatch(
      /^Relay at http:\/\/127\.0\.0\.1:\d+\. Type a message; \/help for commands, \/quit to leave\.\nsession ses_\w+ with billing\n$/,
    );
  });

  it("shows a handoff as it happens, and a human turn answered inline is the run's answer", async () => {
    const ran = await relay(["chat", "--agent", "triage"], {
      input: "I want to file a complaint with a human\nWe are sorry; a refund is on its way.\n/quit\n",
    });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe(
      "↪ triage → supervisor: local lexical match: complaint, human\n" +
        "✋ supervisor is a person: answer as supervisor ('supervisor' answers from the inbox.)\n" +
        "supervisor: We are sorry; a refund is on its way.\n",
    );
  });

  it("asks which agent when nothing fits, then goes on with the one typed", async () => {
    const ran = await relay(["chat"], { input: "hmm, something odd\nsales\n" });
    expect(ran.code).toBe(0);
    const lines = ran.stdout.split("\n");
    expect(lines[0]).toBe("🎯 No agent fits (fallback)");
    expect(lines[1]).toMatch(/^no rule matched; .+ Choose one of: billing, sales, supervisor, technical, triage/);
    expect(lines[2]).toBe("sales: local provider (offline, not a model) answering: “hmm, something odd”");
  });

  it("leaves a question waiting when input ends, and says how to answer it later", async () => {
    const ran = await relay(["chat", "--agent", "supervisor"], { input: "hello?\n" });
    expect(ran.code).toBe(0);
    expect(ran.stderr).toMatch(/Left waiting: relay inbox reply inb_\w+ <text>\n$/);
  });

  it("--json: one JSON object a line — the route, the session, each live event, the result", async () => {
    const ran = await relay(["chat", "--json"], { input: "I was charged twice for my subscription\n" });
    expect(ran.code).toBe(0);
    expect(ran.stderr).toBe("");
    const lines = ran.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ type: "route", decision: { agent: "billing", method: "rule" } });
    expect(lines[1]).toMatchObject({ type: "session", session: { current_agent: "billing" } });
    const types = lines.slice(2).map((l) => l.type);
    expect(types[0]).toBe("run_started");
    expect(types).toContain("agent_completed");
    expect(types.at(-2)).toBe("run_completed");
    expect(lines.at(-1)).toMatchObject({ type: "result", run: { status: "completed", output_agent: "billing" } });
  });

  it("a refusal is said with its code and the conversation goes on; the exit code says it happened", async () => {
    const ran = await relay(["chat", "--session", "ses_gone"], { input: "hello\n" });
    expect(ran.code).toBe(4);
    expect(ran.stderr).toMatch(/relay: SESSION_NOT_FOUND: .+ \(HTTP 404\)\n$/);
  });
});

describe("relay chat: approvals inline", () => {
  const RECEIVER_PORT = 8857;
  let tool: Awaited<ReturnType<typeof receiver>>;
  let secret: string;

  beforeAll(async () => {
    tool = await receiver(RECEIVER_PORT, (r: Received) => `refund issued (${JSON.parse(r.body).data.tool_call_id})`);
    secret = (await unwrap(client.api.GET("/v1/config/signing-secret"))).secret;
    await unwrap(
      client.api.PUT("/v1/tools/{name}", {
        params: { path: { name: "issue_refund" } },
        body: {
          name: "issue_refund",
          kind: "http",
          description: "Issue a refund for an order",
          url: `${tool.url}/refund`,
        },
      }),
    );
    await unwrap(
      client.api.PUT("/v1/agents/{name}", {
        params: { path: { name: "refunds" } },
        body: {
          name: "refunds",
          description: "Issues refunds for orders.",
          instructions: "You issue refunds.",
          tools: { allow: ["issue_refund"], confirmation: { require: ["issue_refund"] } },
        },
      }),
    );
  });

  afterAll(async () => {
    await client.api.DELETE("/v1/agents/{name}", { params: { path: { name: "refunds" } } });
    await client.api.DELETE("/v1/tools/{name}", { params: { path: { name: "issue_refund" } } });
    await tool.close();
  });

  it("approved: the call runs (a signed delivery the client's verifier accepts) and the run goes on", async () => {
    const ran = await relay(["chat", "--agent", "refunds"], { input: "please issue a refund for order 42\ny\n" });
    expect(ran.code).toBe(0);
    const lines = ran.stdout.trim().split("\n");
    expect(lines[0]).toBe(
      '⚙ refunds called issue_refund({"reason":"local lexical match: issue, order, refund"}): approval required',
    );
    expect(lines[1]).toBe(
      "✋ 'refunds' wants to call 'issue_refund' with {\"reason\":\"local lexical match: issue, order, refund\"}.",
    );
    expect(lines[2]).toMatch(/^⚙ refunds called issue_refund\(.+\): approved by relay chat$/);
    expect(lines[3]).toMatch(/^⚙ refunds called issue_refund\(.+\): ok$/);
    expect(lines[4]).toBe(
      "refunds: local provider (offline, not a model) answering: “please issue a refund for order 42”",
    );

    expect(tool.received).toHaveLength(1);
    const delivery = await verifyWebhook(
      secret,
      tool.received[0]!.headers as Record<string, string>,
      tool.received[0]!.body,
    );
    expect(delivery.payload).toMatchObject({ type: "tool.call", data: { agent: "refunds", tool: "issue_refund" } });
  });

  it("denied with a reason: the call is not made and the model is told why", async () => {
    const before = tool.received.length;
    const ran = await relay(["chat", "--agent", "refunds"], {
      input: "please issue a refund for order 7\nn over the limit\n",
    });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/⚙ refunds called issue_refund\(.+\): denied by relay chat\n/);
    expect(tool.received).toHaveLength(before);
  });
});
