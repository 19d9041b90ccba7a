import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { api, byTestId, launch, SCREENSHOTS, screenshot, signIn, textOf, type Watched, watchedPage } from "./browser";

/**
 * The team pages in headless Chromium against `wrangler dev`: the handoff graph of the demo
 * team (checked in the DOM), an agent's definition as a Markdown file, a run's steps as a
 * live timeline, a fan-out's lanes, and the same pages at 375 px and from the keyboard.
 * Runs and fan-outs are made through the API, as another client would; the page only watches.
 */

const url = inject("relayUrl");
const key = inject("relayKey");

let browser: Browser;
let watched: Watched;
let page: Page;
const requested = new Set<string>();
/** A stand-in for two services behind webhook agents: one answers 500, one too late. */
let hooks: Server;
let hookUrl = "";
/** What the tests add to the dev tenant, removed at the end so other files see the demo team. */
const added = new Set<string>();
const sessions = new Set<string>();

async function putAgent(agent: { name: string } & Record<string, unknown>): Promise<void> {
  await api("PUT", `/v1/agents/${agent.name}`, agent);
  added.add(agent.name);
}

async function newSession(agent: string): Promise<string> {
  const { id } = await api("POST", "/v1/sessions", { agent });
  sessions.add(id);
  return id;
}

beforeAll(async () => {
  hooks = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      if (request.url?.startsWith("/fail")) response.writeHead(500).end("the ledger is down");
      else setTimeout(() => response.writeHead(200, { "Content-Type": "application/json" }).end("{}"), 3000);
    });
  });
  await new Promise<void>((resolve) => hooks.listen(0, "127.0.0.1", resolve));
  hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`;

  browser = await launch();
  watched = await watchedPage(browser);
  page = watched.page;
  page.on("request", (request) => requested.add(request.url()));
  await signIn(page, url, key);
});

afterAll(async () => {
  for (const id of sessions) await api("DELETE", `/v1/sessions/${id}`).catch(() => undefined);
  for (const name of added) await api("DELETE", `/v1/agents/${name}`).catch(() => undefined);
  await browser?.close();
  hooks?.close();
});

async function open(hash: string, ready: string): Promise<void> {
  await page.goto(`${url}/${hash}`, { waitUntil: "networkidle0" });
  await page.waitForSelector(byTestId(ready), { timeout: 20_000 });
}

/** The steps of the run on the page, in order: kind, agent and text. */
const stepsOn = (run: string) =>
  page.$$eval(`[data-run="${run}"] ${byTestId("run-step")}`, (els) =>
    els.map((el) => ({
      kind: (el as HTMLElement).dataset.kind,
      agent: (el as HTMLElement).dataset.agent,
      text: el.textContent ?? "",
      open: el.classList.contains("open"),
    })),
  );

const DEMO_EDGES = [
  "billing->supervisor",
  "billing->technical",
  "sales->billing",
  "sales->supervisor",
  "technical->billing",
  "technical->supervisor",
  "triage->billing",
  "triage->sales",
  "triage->supervisor",
  "triage->technical",
];

describe("the agents page", () => {
  it("draws the registry's handoff graph: a node per agent with kind and status, an edge per handoff entry, conditions on the edges", async () => {
    await page.click(byTestId("nav-agents"));
    await page.waitForSelector(byTestId("graph-node"));
    const registry = (await api("GET", "/v1/agents?limit=200")).items.map((a: any) => a.definition);

    // Targets nobody registered (none in the demo team) are drawn as missing nodes: left out here.
    const nodes = (
      await page.$$eval(byTestId("graph-node"), (els) =>
        els.map((el) => ({ ...(el as HTMLElement).dataset }) as Record<string, string>),
      )
    ).filter((n) => n.kind !== "missing");
    expect(nodes.map((n) => n.agent).sort()).toEqual(registry.map((d: any) => d.name).sort());
    const byName = Object.fromEntries(nodes.map((n) => [n.agent, n]));
    for (const name of ["triage", "billing", "technical", "sales"]) expect(byName[name]?.kind).toBe("llm");
    expect(byName.supervisor?.kind).toBe("human");
    for (const n of nodes) expect(["idle", "busy", "full", "paused", "disabled"]).toContain(n.status);

    const edges = await page.$$eval(byTestId("graph-edge"), (els) =>
      els.map((el) => ({
        id: `${(el as HTMLElement).dataset.from}->${(el as HTMLElement).dataset.to}`,
        text: el.textContent ?? "",
        classes: el.getAttribute("class") ?? "",
      })),
    );
    const expected = registry.flatMap((d: any) => d.handoffs.map((e: any) => `${d.name}->${e.to}`)).sort();
    expect(edges.map((e) => e.id).sort()).toEqual(expected);
    for (const id of DEMO_EDGES) expect(edges.map((e) => e.id)).toContain(id);

    // The conditional edge says its condition (and its filter); the drawing marks it conditional.
    const conditional = edges.find((e) => e.id === "billing->supervisor")!;
    expect(conditional.text).toContain("if refund_amount > 500");
    expect(conditional.text).toContain("filter: PII redacted");
    expect(conditional.classes).toContain("conditional");
    expect(edges.find((e) => e.id === "triage->supervisor")!.text).toContain("filter: PII redacted, last 20 items");

    // The text alternative: one row per edge, the condition in words.
    expect(await page.$$eval(byTestId("handoff-row"), (els) => els.length)).toBe(expected.length);
    const row = await page.$eval(
      `${byTestId("handoff-row")}[data-from="billing"][data-to="supervisor"]`,
      (el) => el.textContent,
    );
    expect(row).toContain("refund_amount > 500");
    // The agents table: kind, status, load against capacity, triggers, tools.
    const supervisor = await page.$eval(`${byTestId("agent-row")}[data-agent="supervisor"]`, (el) => el.textContent);
    expect(supervisor).toMatch(/human/);
    expect(supervisor).toMatch(/of 5 seats/);
    expect(supervisor).toMatch(/priority 90/);
    await screenshot(page, "agents");
  });

  it("shows an agent's definition, read-only, as a Markdown file the API takes back as the same agent", async () => {
    await page.click(`${byTestId("agent-row")}[data-agent="billing"] a`);
    await page.waitForSelector(byTestId("agent-markdown"));
    expect(await textOf(page, "agent-kind")).toBe("llm");
    const markdown = await page.$eval(byTestId("agent-markdown"), (el) => (el as HTMLTextAreaElement).value);
    expect(await page.$eval(byTestId("agent-markdown"), (el) => (el as HTMLTextAreaElement).readOnly)).toBe(true);
    expect(markdown).toMatch(/^---\nname: billing\n/);
    expect(markdown).toContain("condition: refund_amount > 500");

    const before = (await api("GET", "/v1/agents/billing")).definition;
    const put = await api("PUT", "/v1/agents/billing", markdown, "text/markdown");
    expect(put.definition).toEqual(before);

    await page.click(byTestId("agent-markdown-copy"));
    await page.waitForFunction(() =>
      /Copied|Selected/.test(document.querySelector("[data-testid=status]")?.textContent ?? ""),
    );
    await screenshot(page, "agent");
  });
});

describe("the session page", () => {
  let sessionId = "";

  it("shows a run with two handoffs and an approval as a timeline, step by step while it runs", async () => {
    await putAgent({
      name: "intake",
      title: "Intake",
      description: "Takes refund requests.",
      handoffs: [{ to: "billing", description: "Payments, refunds and invoices.", requires_approval: true }],
    });
    sessionId = await newSession("intake");
    await api("PATCH", `/v1/sessions/${sessionId}/state`, { set: { refund_amount: 900 } });
    await open(`#/sessions/${sessionId}`, "run-timelines");
    await page.waitForFunction(() => document.querySelector("[data-testid=live-status]")?.textContent === "live");

    // Another client sends the message; the run pauses for an approval and the page shows it waiting.
    const asked = await api("POST", `/v1/sessions/${sessionId}/messages`, {
      role: "user",
      content: "I want a refund of 900 dollars for my subscription",
    });
    expect(asked.run.status).toBe("awaiting_approval");
    const run = asked.run.id;
    await page.waitForSelector(`[data-run="${run}"] ${byTestId("run-step")}[data-kind="approval"].open`);
    expect((await stepsOn(run)).map((s) => s.kind)).toEqual(["model", "approval"]);

    // Approved: intake hands to billing, billing (the refund is over the limit) to the supervisor, a person.
    const approved = await api("POST", `/v1/inbox/${asked.run.pending.approvals[0].inbox_id}/resolve`, {
      decision: "approve",
      by: "ops",
    });
    expect(approved.run.status).toBe("awaiting_human");
    await page.waitForSelector(`[data-run="${run}"] ${byTestId("run-step")}[data-kind="person"].open`);
    await api("POST", `/v1/inbox/${approved.run.pending.inbox_id}/resolve`, { reply: "Refund of $900 approved." });
    await page.waitForSelector(`[data-run="${run}"][data-status="completed"]`);

    const steps = await stepsOn(run);
    expect(steps.map((s) => `${s.kind}:${s.agent}`)).toEqual([
      "model:intake",
      "approval:intake",
      "handoff:intake",
      "model:billing",
      "handoff:billing",
      "person:supervisor",
    ]);
    expect(steps[1]!.text).toContain("approved by ops");
    expect(steps[2]!.text).toContain("intake → billing");
    expect(steps[4]!.text).toContain("billing → supervisor");
    expect(steps[5]!.text).toContain("answered from the inbox");
    expect(steps.every((s) => !s.open)).toBe(true);
    // Each step carries its offset and duration.
    for (const s of steps) expect(s.text).toMatch(/\+\d+(\.\d)? m?s · \d+(\.\d)? m?s/);
    await screenshot(page, "session-run-timeline");
  });

  it("opens the team graph from the session with the session's edge marked", async () => {
    await page.click(byTestId("session-graph-link"));
    await page.waitForSelector(`${byTestId("graph-edge")}[data-current="true"]`);
    const current = await page.$$eval(`${byTestId("graph-edge")}[data-current="true"]`, (els) =>
      els.map((el) => `${(el as HTMLElement).dataset.from}->${(el as HTMLElement).dataset.to}`),
    );
    expect(current).toEqual(["billing->supervisor"]);
    expect(
      await page.$eval(`${byTestId("graph-node")}[data-current="true"]`, (el) => (el as HTMLElement).dataset.agent),
    ).toBe("supervisor");
    expect(await textOf(page, "graph-session")).toContain("intake › billing › supervisor");
    await screenshot(page, "agents-from-session");
  });

  it("shows a fan-out of three tasks as three lanes ending in their states, the aggregate below", async () => {
    await putAgent({ name: "ledger", description: "The ledger service", kind: "webhook", endpoint: `${hookUrl}/fail` });
    await putAgent({
      name: "archive",
      description: "The slow archive",
      kind: "webhook",
      endpoint: `${hookUrl}/slow`,
      timeout_s: 1,
    });
    await putAgent({
      name: "coordinator",
      description: "Closes the month",
      handoffs: ["billing", "ledger", "archive"],
    });
    const id = await newSession("coordinator");
    await open(`#/sessions/${id}`, "run-timelines");

    const failed = await api("POST", `/v1/sessions/${id}/fan-out`, {
      decomposition: {
        original_query: "Close the month",
        tasks: [
          { task_id: "invoices", agent: "billing", instruction: "List the open invoices" },
          { task_id: "post", agent: "ledger", instruction: "Post the ledger" },
          { task_id: "receipts", agent: "archive", instruction: "Archive the receipts", timeout_s: 1 },
        ],
      },
    });
    expect(failed.state).toBe("FAILED");
    // Nothing tells the page a fan-out started through the API: it looks now and then.
    const card = `${byTestId("fanout")}[data-fanout="${failed.id}"]`;
    await page.waitForSelector(card, { timeout: 20_000 });
    const lanes = await page.$$eval(`${card} ${byTestId("fanout-lane")}`, (els) =>
      els.map((el) => ({ ...(el as HTMLElement).dataset, text: el.textContent ?? "" }) as Record<string, string>),
    );
    expect(lanes.map((l) => [l.task, l.agent, l.state])).toEqual([
      ["invoices", "billing", "succeeded"],
      ["post", "ledger", "failed"],
      ["receipts", "archive", "timed_out"],
    ]);
    expect(lanes[1]!.text).toContain("WEBHOOK_ERROR");
    expect(lanes[2]!.text).toContain("TASK_TIMEOUT");
    expect(lanes[2]!.text).toMatch(/of 1\.0 s/);
    expect(await page.$eval(`${card} ${byTestId("fanout-state")}`, (el) => el.textContent)).toBe("FAILED");
    expect(await page.$eval(`${card} ${byTestId("fanout-aggregate")}`, (el) => el.textContent)).toContain(
      "receipts ran out of time",
    );

    // One that completes: its aggregate (Relay's own, offline) below its lanes.
    const done = await api("POST", `/v1/sessions/${id}/fan-out`, {
      decomposition: {
        original_query: "Close the month, again",
        tasks: [
          { task_id: "invoices", agent: "billing", instruction: "List the open invoices" },
          { task_id: "post", agent: "ledger", instruction: "Post the ledger" },
          { task_id: "receipts", agent: "billing", instruction: "Count the receipts" },
        ],
      },
    });
    expect(done.state).toBe("COMPLETED");
    const second = `${byTestId("fanout")}[data-fanout="${done.id}"]`;
    await page.waitForSelector(second, { timeout: 20_000 });
    expect(
      await page.$$eval(`${second} ${byTestId("fanout-lane")}`, (els) =>
        els.map((el) => (el as HTMLElement).dataset.state),
      ),
    ).toEqual(["succeeded", "failed", "succeeded"]);
    const aggregate = await page.$eval(`${second} ${byTestId("fanout-aggregate")}`, (el) => el.textContent ?? "");
    expect(aggregate).toContain("Not answered: ledger (WEBHOOK_ERROR).");
    await screenshot(page, "session-fan-out");
  });
});

describe("the new pages", () => {
  it("fit a 375 px screen without sideways scrolling", async () => {
    await page.setViewport({ width: 375, height: 812 });
    const [run] = [...sessions];
    for (const [name, hash, ready] of [
      ["agents", "#/agents", "graph-node"],
      ["agent", "#/agents/billing", "agent-markdown"],
      ["session-runs", `#/sessions/${run}`, "run-step"],
      ["session-fan-outs", `#/sessions/${[...sessions][1]}`, "fanout-lane"],
    ] as const) {
      await open(hash, ready);
      await screenshot(page, `${name}-375px`);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), name).toBeLessThanOrEqual(375);
    }
    await page.setViewport({ width: 1280, height: 900 });
  });

  /** Presses Tab until the focused element matches, and says how many presses it took. */
  async function tabTo(selector: string, most = 60): Promise<number> {
    for (let i = 1; i <= most; i++) {
      await page.keyboard.press("Tab");
      if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return i;
    }
    throw new Error(`Tab never reached ${selector}`);
  }

  it("are reachable from the keyboard: the nav link, the graph's agents (Enter opens one), the copy button, a run's steps", async () => {
    await page.goto(`${url}/#/sessions`, { waitUntil: "networkidle0" });
    await page.reload({ waitUntil: "networkidle0" });
    await page.waitForSelector(byTestId("sessions-table"));
    await tabTo(byTestId("nav-agents"));
    await page.keyboard.press("Enter");
    await page.waitForSelector(byTestId("graph-node"));

    await tabTo(byTestId("graph-node"));
    const focused = await page.evaluate(() => (document.activeElement as HTMLElement).dataset.agent);
    // Focus says the agent's handoffs in words, and the box is outlined.
    expect(await textOf(page, "graph-details")).toContain(`${focused} hands off to`);
    const stroke = await page.evaluate(
      () => getComputedStyle(document.activeElement!.querySelector("rect")!).strokeWidth,
    );
    expect(stroke).toBe("4px");
    await page.keyboard.press("Enter");
    await page.waitForFunction((name) => location.hash === `#/agents/${name}`, {}, focused);
    await page.waitForSelector(byTestId("agent-markdown"));
    await tabTo(byTestId("agent-markdown-copy"));

    await page.goto(`${url}/#/sessions/${[...sessions][0]}`, { waitUntil: "networkidle0" });
    await page.waitForSelector(byTestId("run-step"));
    await tabTo(".run-track");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toMatch(/^Steps of run run_/);
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).not.toBe("none");
  });

  it("stay readable at fifty agents: every box apart, every name whole", async () => {
    // A desk handing to seven leads, each to its specialists; a specialist hands back to its
    // lead, across to the next department (on a condition), and up to the supervisor (approved).
    const existing = (await api("GET", "/v1/agents?limit=200")).items.length;
    const leads = Array.from({ length: 7 }, (_, i) => `lead-${i + 1}`);
    const specialists = Array.from({ length: 50 - existing - 8 }, (_, i) => `spec-${String(i + 1).padStart(2, "0")}`);
    await putAgent({ name: "desk", description: "The front desk", handoffs: [...leads, "supervisor"] });
    for (const [d, lead] of leads.entries())
      await putAgent({ name: lead, description: `Lead ${d + 1}`, handoffs: specialists.filter((_, i) => i % 7 === d) });
    for (const [i, name] of specialists.entries())
      await putAgent({
        name,
        description: `Specialist ${i + 1}`,
        handoffs: [
          leads[i % 7]!,
          { to: leads[(i + 1) % 7]!, condition: `topic == ${(i + 1) % 7}` },
          { to: "supervisor", requires_approval: true },
        ],
      });
    expect((await api("GET", "/v1/agents?limit=200")).items).toHaveLength(50);
    await open("#/agents", "graph-node");
    const boxes = await page.$$eval(byTestId("graph-node"), (els) =>
      els.map((el) => {
        const r = el.querySelector("rect")!.getBoundingClientRect();
        const name = el.querySelector(".node-name")!.textContent ?? "";
        return { agent: (el as HTMLElement).dataset.agent!, name, x: r.x, y: r.y, w: r.width, h: r.height };
      }),
    );
    expect(boxes).toHaveLength(50);
    for (const b of boxes) expect(b.name).toBe(b.agent);
    const overlaps = boxes.flatMap((a, i) =>
      boxes
        .slice(i + 1)
        .filter((b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h)
        .map((b) => `${a.agent}×${b.agent}`),
    );
    expect(overlaps).toEqual([]);
    // The whole drawing, fitted to the page's width, for review.
    await page.click(byTestId("graph-fit"));
    await page.mouse.move(0, 0);
    const box = await page.$(byTestId("graph-box"));
    await box!.screenshot({ path: `${SCREENSHOTS}/agents-50-graph.png` });
    await screenshot(page, "agents-50", false);
  });
});

describe("basics", () => {
  it("no console errors, no failed requests, nothing fetched from anywhere but Relay", () => {
    expect(watched.problems).toEqual([]);
    const origin = new URL(url).origin;
    const foreign = [...requested].filter(
      (u) => !u.startsWith(origin) && !u.startsWith("data:") && !u.startsWith(origin.replace("http", "ws")),
    );
    expect(foreign).toEqual([]);
  });
});
