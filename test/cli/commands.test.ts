import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, inject, it } from "vitest";
import { cliEnv, collect, eventually, ROOT, relay, runMessage, startRelay, tempDir, testClient } from "./run-cli";

/** `relay route`, `config`, `agents`, `inbox`, `tail` and `audit` as processes against `wrangler dev`. */

const client = testClient();

describe("relay route", () => {
  it("prints the routing analysis: strategy, threshold, method, agent, confidence, matches, candidates, the LLM tier", async () => {
    const ran = await relay(["route", "I was charged twice for my subscription"]);
    expect(ran.code).toBe(0);
    const lines = ran.stdout.split("\n");
    expect(lines[0]).toBe("🎯 Routing via rule to billing (100%)");
    expect(ran.stdout).toMatch(/strategy\s+hybrid, threshold 80/);
    expect(ran.stdout).toMatch(/method\s+rule/);
    expect(ran.stdout).toMatch(/keywords\s+charged, subscription/);
    expect(ran.stdout).toMatch(/patterns\s+charged\\s\+\(twice\|two times\|double\)/);
    expect(ran.stdout).toMatch(/LLM tier\s+not needed: the rule tier's 100% reached the threshold 80/);
    expect(ran.stdout).toMatch(/candidates\n\s+billing\s+100%/);
  });

  it("--strategy llm: the LLM tier was needed, and which tool it called", async () => {
    const ran = await relay(["route", "my payments look strange lately", "--strategy", "llm"]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/^🎯 Routing via llm to billing\n/);
    expect(ran.stdout).toMatch(/LLM tier\s+needed: local \/ .+, called transfer_to_billing/);
  });

  it("nothing fits: the fallback and the agents to choose from", async () => {
    const ran = await relay(["route", "hmm, something odd"]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/^🎯 No agent fits \(fallback\)/);
    expect(ran.stdout).toMatch(/choose from\n\s+billing\s+Invoices/);
  });

  it("--json is the API's decision", async () => {
    const ran = await relay(["route", "I was charged twice for my subscription", "--json"]);
    expect(ran.code).toBe(0);
    const decision = JSON.parse(ran.stdout);
    expect(decision).toMatchObject({ agent: "billing", method: "rule", strategy: "hybrid", confidence: 100 });
    expect(decision.matched_keywords).toEqual(["charged", "subscription"]);
  });

  it("a strategy that is none of rule, llm, hybrid: exit 2", async () => {
    const ran = await relay(["route", "hello", "--strategy", "magic"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toBe('relay: USAGE: --strategy must be one of rule, llm, hybrid (got "magic")\n');
  });
});

describe("relay config", () => {
  afterAll(async () => {
    await client.api.DELETE("/v1/config/routing");
  });

  it("shows every routing value with the layer it came from", async () => {
    const ran = await relay(["config"]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/routing\.strategy\s+hybrid\s+env/);
    expect(ran.stdout).toMatch(/routing\.threshold\s+80\s+env/);
    expect(ran.stdout).toMatch(/routing\.enabled\s+true\s+default/);
    expect(ran.stdout).toMatch(/routing\.llm\.provider\s+local\s+/);
    expect(ran.stdout).toMatch(/routing\.record_inputs\s+true\s+default/);
    expect(ran.stdout.trim().split("\n")).toHaveLength(10); // a header and nine settings
  });

  it("sets a value in the tenant's layer, reads it back, and unsets it", async () => {
    const set = await relay(["config", "routing.threshold", "70"]);
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(/routing\.threshold\s+70\s+tenant/);
    const one = await relay(["config", "threshold", "--json"]);
    expect(JSON.parse(one.stdout)).toEqual({ key: "routing.threshold", value: 70, source: "tenant" });
    // The router uses it: 80.6% on the rule tier now decides alone where 80 was the bar already; at 90 it would not.
    const unset = await relay(["config", "routing.threshold", "--unset"]);
    expect(unset.stdout).toMatch(/routing\.threshold\s+80\s+env/);
  });

  it("sets a nested value with its type, and --reset clears the layer", async () => {
    expect((await relay(["config", "routing.llm.timeout_ms", "2500"])).stdout).toMatch(
      /routing\.llm\.timeout_ms\s+2500\s+tenant/,
    );
    expect((await relay(["config", "routing.enabled", "false"])).stdout).toMatch(/routing\.enabled\s+false\s+tenant/);
    expect((await relay(["config", "routing.record_inputs", "false"])).stdout).toMatch(
      /routing\.record_inputs\s+false\s+tenant/,
    );
    expect((await relay(["config", "routing.record_inputs", "maybe"])).stderr).toMatch(/true or false/);
    const view = JSON.parse((await relay(["config", "--json"])).stdout);
    expect(view.stored).toEqual({ llm: { timeout_ms: 2500 }, enabled: false, record_inputs: false });
    const reset = await relay(["config", "--reset", "--json"]);
    expect(JSON.parse(reset.stdout).stored).toBeNull();
  });

  it("an unknown setting: exit 2", async () => {
    const ran = await relay(["config", "routing.speed", "11"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/^relay: USAGE: unknown setting "routing.speed": one of routing.enabled, /);
  });
});

describe("relay agents push: what the files would move", () => {
  const dir = tempDir();
  writeFileSync(
    join(dir, "refunds.json"),
    JSON.stringify({
      name: "cli-refunds",
      description: "Refunds and double charges.",
      instructions: "Handle refunds.",
      // More of billing's own words and its pattern, at a higher priority: these inputs move.
      triggers: {
        keywords: ["charged", "subscription", "twice", "charge"],
        patterns: ["charged\\s+(twice|me twice)", "subscription\\s+charged"],
        priority: 100,
      },
    }),
  );
  // The first moves to the draft agent; the second stays with billing.
  const recorded = ["my subscription charged me twice", "where can I download my invoice"];

  it("--dry-run replays the routing history against the files and pushes nothing", async () => {
    await client.api.DELETE("/v1/route/history");
    for (const input of recorded) await client.api.POST("/v1/sessions", { body: { input } });
    // Sessions are recorded off the request path.
    await eventually(async () => {
      const replayed = await client.api.POST("/v1/route/replay", { body: { draft: {} } });
      return replayed.data?.totals.inputs === recorded.length ? true : undefined;
    });
    const ran = await relay(["agents", "push", dir, "--dry-run"]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe(
      "replayed 2 of 2 recorded inputs: 1 would move\n" +
        "  billing → cli-refunds: 1  e.g. “my subscription charged me twice”\n",
    );
    expect((await relay(["agents", "get", "cli-refunds"])).code).toBe(4);
    const json = JSON.parse((await relay(["agents", "push", dir, "--dry-run", "--json"])).stdout);
    expect(json.moves).toEqual([{ from: "billing", to: "cli-refunds", count: 1, examples: [recorded[0]] }]);
  });

  it("--max-moved refuses a push that moves more, and pushes one that moves no more", async () => {
    const refused = await relay(["agents", "push", dir, "--max-moved", "0"]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/^replayed 2 of 2 recorded inputs: 1 would move\n/);
    expect(refused.stderr).toBe(
      "relay: TOO_MANY_MOVED: nothing pushed: the files would move 1 recorded input, more than --max-moved 0\n",
    );
    expect((await relay(["agents", "get", "cli-refunds"])).code).toBe(4);
    const pushed = await relay(["agents", "push", dir, "--max-moved", "1"]);
    expect([pushed.code, pushed.stdout]).toEqual([0, "cli-refunds: created\n"]);
    await relay(["agents", "rm", "cli-refunds"]);
    expect((await relay(["agents", "push", dir, "--max-moved", "a few"])).code).toBe(2);
  });
});

describe("relay agents", () => {
  const dir = tempDir();
  writeFileSync(
    join(dir, "shipping.md"),
    "---\nname: cli-shipping\ntitle: Shipping\ndescription: Parcels and tracking.\ntriggers:\n  keywords: [parcel]\n---\nYou track parcels.\n",
  );
  writeFileSync(
    join(dir, "returns.json"),
    JSON.stringify({
      name: "cli-returns",
      title: "Returns",
      description: "Returns and exchanges.",
      instructions: "Handle returns.",
    }),
  );

  it("push creates agents from Markdown and JSON files, then replaces them", async () => {
    const first = await relay(["agents", "push", dir]);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe("cli-returns: created\ncli-shipping: created\n");
    const again = await relay(["agents", "push", join(dir, "shipping.md"), "--json"]);
    expect(JSON.parse(again.stdout)).toMatchObject([{ name: "cli-shipping", outcome: "replaced", status: 200 }]);
  });

  it("ls lists them, get shows one", async () => {
    const ls = await relay(["agents", "ls"]);
    expect(ls.stdout).toMatch(/^name\s+kind\s+enabled\s+title\n/);
    expect(ls.stdout).toMatch(/cli-shipping\s+llm\s+true\s+Shipping/);
    expect(ls.stdout).toMatch(/billing\s+llm\s+true\s+Billing specialist/);
    const get = await relay(["agents", "get", "cli-shipping"]);
    expect(get.stdout).toMatch(/keywords\s+parcel/);
    expect(get.stdout).toContain("You track parcels.");
    const json = JSON.parse((await relay(["agents", "get", "cli-returns", "--json"])).stdout);
    expect(json.definition).toMatchObject({ name: "cli-returns", title: "Returns" });
  });

  it("a file Relay refuses is reported with its code while the others are sent; exit 1", async () => {
    const bad = tempDir();
    writeFileSync(join(bad, "a-good.md"), "---\nname: cli-good\ndescription: Fine.\n---\nFine.\n");
    writeFileSync(
      join(bad, "b-bad.md"),
      "---\nname: cli-bad\ndescription: A pattern Relay refuses.\ntriggers:\n  patterns: ['(a)\\1']\n---\nNo.\n",
    );
    const ran = await relay(["agents", "push", bad]);
    expect(ran.code).toBe(1);
    expect(ran.stdout).toBe("cli-good: created\n");
    expect(ran.stderr).toMatch(/^cli-bad: INVALID_PATTERN: .+ \(HTTP 400\)\n$/);
    await relay(["agents", "rm", "cli-good"]);
  });

  it("a file with no agent name: nothing is sent, exit 1", async () => {
    const bad = tempDir();
    writeFileSync(join(bad, "a.md"), "---\nname: cli-never-sent\n---\nx\n");
    writeFileSync(join(bad, "b.md"), "no front matter here\n");
    const ran = await relay(["agents", "push", bad]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toBe(
      "relay: INVALID_AGENT_FILES: nothing sent: a file cannot be used\n  b.md: no agent name (front matter name:)\n",
    );
    expect((await relay(["agents", "get", "cli-never-sent"])).code).toBe(4);
  });

  it("npm run agents:push still works beside it", async () => {
    const own = tempDir();
    writeFileSync(join(own, "pushed.md"), "---\nname: cli-pushed\ndescription: Pushed by the script.\n---\nHello.\n");
    const { stdout } = await promisify(execFile)(
      "npm",
      ["run", "--silent", "agents:push", "--", "--url", inject("relayUrl"), "--dir", own],
      { cwd: ROOT, env: cliEnv() },
    );
    expect(stdout).toBe("cli-pushed: created\n");
    expect((await relay(["agents", "rm", "cli-pushed"])).code).toBe(0);
  });

  it("rm deletes them; a name that is not there is exit 4", async () => {
    const ran = await relay(["agents", "rm", "cli-shipping", "cli-returns"]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe("cli-shipping: deleted\ncli-returns: deleted\n");
    const again = await relay(["agents", "rm", "cli-shipping"]);
    expect(again.code).toBe(4);
    expect(again.stderr).toBe("cli-shipping: AGENT_NOT_FOUND: No agent named 'cli-shipping'. (HTTP 404)\n");
  });
});

describe("relay inbox", () => {
  it("ls shows a human turn; show, reply and a second answer's refusal", async () => {
    // A session the supervisor (a person) holds: its turn waits in the inbox.
    const session = await client.api.POST("/v1/sessions", { body: { agent: "supervisor" } });
    const sid = session.data!.id;
    const sent = await runMessage(client, sid, "I need a person, please");
    const inboxId = (sent.run.pending as { inbox_id: string }).inbox_id;

    // The tenant's list reads D1, which follows the session by about half a second.
    const listed = await eventually(async () => {
      const ran = await relay(["inbox", "ls", "--session", sid]);
      return ran.stdout.includes(inboxId) ? ran.stdout : undefined;
    });
    expect(listed).toMatch(/^kind\s+status\s+agent\s+created\s+reason\s+id\n/);
    expect(listed).toMatch(/human_turn\s+open\s+supervisor\s+/);
    const json = JSON.parse((await relay(["inbox", "ls", "--session", sid, "--json"])).stdout);
    expect(json).toMatchObject([{ id: inboxId, kind: "human_turn", status: "open" }]);

    const shown = await relay(["inbox", "show", inboxId]);
    expect(shown.stdout).toMatch(/kind\s+human_turn/);

    const reply = await relay(["inbox", "reply", inboxId, "We", "will", "call", "you", "--by", "dana"]);
    expect(reply.code).toBe(0);
    expect(reply.stdout).toBe(`${inboxId}: answered\nrun ${sent.run.id} completed: supervisor: We will call you\n`);

    const again = await relay(["inbox", "approve", inboxId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^relay: INBOX_ITEM_CLOSED: .+ \(HTTP 409\)\n$/);
    await client.api.DELETE("/v1/sessions/{id}", { params: { path: { id: sid } } });
  });

  it("a reply with no text, or a reason with a reply: exit 2", async () => {
    expect((await relay(["inbox", "reply", "inb_x"])).stderr).toBe(
      "relay: USAGE: inbox reply needs the reply's text\n",
    );
    expect((await relay(["inbox", "reply", "inb_x", "hi", "--reason", "r"])).code).toBe(2);
  });
});

describe("relay tail", () => {
  it("follows a session's events as they happen, and stops on Ctrl-C with exit 0", async () => {
    const session = await client.api.POST("/v1/sessions", { body: { agent: "triage" } });
    const sid = session.data!.id;
    const tail = startRelay(["tail", sid]);
    const stdout = collect(tail.stdout!);
    await collect(tail.stderr!).waitFor(/following/);
    await client.api.POST("/v1/sessions/{id}/messages", {
      params: { path: { id: sid } },
      body: { role: "user", content: "my invoice is wrong" },
    });
    const out = await stdout.waitFor(/run completed/);
    tail.kill("SIGINT");
    const code = await new Promise((resolve) => tail.on("close", resolve));
    expect(code).toBe(0);
    expect(out).toMatch(/\d\d:\d\d:\d\d\.\d{3} you: my invoice is wrong/);
    expect(out).toMatch(/↪ triage → billing: local lexical match: invoice/);
    expect(out).toMatch(/⇄ handoff triage → billing completed/);
    expect(out).toMatch(/billing: local provider \(offline, not a model\) answering/);
  });

  it("--after replays what came after an event, and --json prints one event a line", async () => {
    const session = await client.api.POST("/v1/sessions", { body: { agent: "billing" } });
    const sid = session.data!.id;
    const events = (await runMessage(client, sid, "refund please")).run.events;
    const tail = startRelay(["tail", sid, "--after", events[0]!.event_id, "--json"]);
    const out = await collect(tail.stdout!).waitFor(/"type":"run_completed"/);
    tail.kill("SIGINT");
    await new Promise((resolve) => tail.on("close", resolve));
    const replayed = out
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(replayed.every((e) => e.session_id === sid && e.id > events[0]!.event_id)).toBe(true);
    expect(replayed.map((e) => e.type)).toContain("agent_completed");
  });

  it("an --after that is no event id: exit 2", async () => {
    const ran = await relay(["tail", "ses_x", "--after", "evt_0"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/^relay: USAGE: --after takes an event id/);
  });

  it("a session that does not exist: the API's code, exit 4", async () => {
    const ran = await relay(["tail", "ses_nope"]);
    expect(ran.code).toBe(4);
    expect(ran.stderr).toMatch(/^relay: SESSION_NOT_FOUND: .+ \(HTTP 404\)\n$/);
  });
});

describe("relay audit", () => {
  it("filters the trail by session, action and time", async () => {
    const session = await client.api.POST("/v1/sessions", { body: { agent: "triage" } });
    const sid = session.data!.id;
    await client.api.POST("/v1/sessions/{id}/messages", {
      params: { path: { id: sid } },
      body: { role: "user", content: "my invoice is wrong" },
    });
    const records = await eventually(async () => {
      const ran = await relay(["audit", "--session", sid, "--json"]);
      const list = JSON.parse(ran.stdout) as { action: string }[];
      return list.some((r) => r.action === "handoff.completed") ? list : undefined;
    });
    expect(records.every((r) => (r as { session_id?: string }).session_id === sid)).toBe(true);
    expect(records.map((r) => r.action)).toContain("session.created");

    const handoffs = await relay(["audit", "--session", sid, "--action", "handoff.completed", "--since", "1h"]);
    expect(handoffs.code).toBe(0);
    const rows = handoffs.stdout.trim().split("\n");
    expect(rows[0]).toMatch(/^at\s+action\s+agent\s+actor\s+session\s+details$/);
    expect(rows.slice(1)).toHaveLength(1);
    expect(rows[1]).toMatch(/handoff\.completed\s+billing\s+/);

    const limited = JSON.parse((await relay(["audit", "--session", sid, "--limit", "2", "--json"])).stdout);
    expect(limited).toHaveLength(2);
  });

  it("a --since that is no time: exit 2", async () => {
    const ran = await relay(["audit", "--since", "last tuesday"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/^relay: USAGE: --since is an ISO time or a span/);
  });
});
