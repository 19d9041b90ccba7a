import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { api, byTestId, launch, screenshot, textOf, type Watched, watchedPage } from "./browser";

/**
 * The dashboard and the API reference in headless Chromium against `wrangler dev`, as a
 * person would use them: sign in, route an input and start a session from the
 * playground, watch a handoff arrive live, approve an inbox item, find the audit record.
 * The steps build on each other, in order. Screenshots go to .test-results/screenshots/.
 */

const url = inject("relayUrl");
const key = inject("relayKey");

let browser: Browser;
let watched: Watched;
let page: Page;
/** Every URL the page asked for: all must be Relay's own (offline, no CDN). */
const requested = new Set<string>();

beforeAll(async () => {
  browser = await launch();
  watched = await watchedPage(browser);
  page = watched.page;
  page.on("request", (request) => requested.add(request.url()));
});

afterAll(async () => {
  await browser?.close();
});

/** Waits until some element with the test id contains the text. */
async function waitForText(testId: string, text: string, timeout = 20_000): Promise<void> {
  await page.waitForFunction(
    (selector, wanted) => [...document.querySelectorAll(selector)].some((el) => el.textContent?.includes(wanted)),
    { timeout },
    byTestId(testId),
    text,
  );
}

describe("the dashboard", () => {
  let sessionId = "";

  it("signs in with an API key kept in session storage, never in the URL; a wrong key is refused", async () => {
    await page.goto(`${url}/`, { waitUntil: "networkidle0" });
    await page.waitForSelector(byTestId("signin"));
    await screenshot(page, "sign-in");

    watched.expect(401, "/v1/agents");
    await page.type(byTestId("api-key"), "not-a-real-key-123");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.querySelector("[role=alert]")?.textContent?.includes("not accepted"));

    await page.$eval(byTestId("api-key"), (el) => ((el as HTMLInputElement).value = ""));
    await page.type(byTestId("api-key"), key);
    await page.keyboard.press("Enter");
    await page.waitForSelector(byTestId("sessions-table"));
    expect(page.url()).not.toContain(key);
    expect(await page.evaluate(() => Object.values(sessionStorage))).toContain(key);
    expect(await page.evaluate(() => Object.values(localStorage))).not.toContain(key);
  });

  it("routes an input in the playground, shows why, and starts a session from it", async () => {
    await page.click(byTestId("nav-playground"));
    await page.waitForSelector(byTestId("route-input"));
    await page.type(byTestId("route-input"), "hello, I need some help with my account");
    await page.click(byTestId("route-submit"));
    expect(await textOf(page, "decided-agent")).toBe("triage");
    expect(await textOf(page, "route-decision")).toMatch(/Confidence/);
    await screenshot(page, "playground");

    await page.click(byTestId("start-session"));
    await page.waitForFunction(() => /^#\/sessions\/ses_/.test(location.hash));
    sessionId = decodeURIComponent(await page.evaluate(() => location.hash.slice("#/sessions/".length)));
    await waitForText("current-agent", "triage");
    // The session was routed, not named: its audit trail says so.
    const audit = await api("GET", `/v1/sessions/${sessionId}/audit`);
    expect(audit.items.map((r: { action: string }) => r.action)).toContain("route.decided");
  });

  it("shows handoffs live: a run elsewhere hands the session on, then the API hands it back, and the open page follows", async () => {
    await waitForText("live-status", "live");
    const before = await page.$$(byTestId("handoff-entry"));
    expect(before).toHaveLength(0);

    // Another client talks to the session; the page only listens.
    const answer = await api("POST", `/v1/sessions/${sessionId}/messages`, {
      role: "user",
      content: "I was charged twice on my last invoice",
    });
    expect(answer.run.status).toBe("completed");

    await waitForText("handoff-entry", "billing");
    await waitForText("current-agent", "billing");
    const entry = await textOf(page, "handoff-entry");
    expect(entry).toMatch(/triage\s*→\s*billing/);
    expect(entry).toMatch(/completed/);
    expect(await textOf(page, "conversation")).toContain("I was charged twice");

    // A handoff with no run (made through the API) shows up live too.
    await api("POST", "/v1/handoffs", {
      session_id: sessionId,
      source_agent: "billing",
      mode: "return",
      reason: "sorted, back to the front desk",
    });
    await waitForText("handoff-entry", "sorted, back to the front desk");
    await waitForText("current-agent", "triage");
    expect(await page.$$(byTestId("handoff-entry"))).toHaveLength(2);
    await screenshot(page, "session");
  });

  it("approves an inbox item with a button, and the run it paused goes on", async () => {
    // An agent whose handoff to billing needs a person's approval.
    await api("PUT", "/v1/agents/gatekeeper", {
      name: "gatekeeper",
      title: "Gatekeeper",
      description: "Hands billing questions on, once a person approves.",
      kind: "llm",
      handoffs: [{ to: "billing", description: "Payments and invoices.", requires_approval: true }],
    });
    const session = await api("POST", "/v1/sessions", { agent: "gatekeeper" });
    const run = await api("POST", `/v1/sessions/${session.id}/messages`, {
      role: "user",
      content: "I was charged twice on my last invoice",
    });
    expect(run.run.status).toBe("awaiting_approval");

    await page.click(byTestId("nav-inbox"));
    const item = `${byTestId("inbox-item")}[data-session="${session.id}"]`;
    // The inbox index fills in a moment after the item opens; the page refreshes itself.
    await page.waitForSelector(item, { timeout: 20_000 });
    expect(await page.$eval(item, (el) => el.textContent)).toMatch(/approval/);
    await screenshot(page, "inbox");
    await page.click(`${item} ${byTestId("approve")}`);
    await page.waitForFunction(() =>
      document.querySelector("[data-testid=status]")?.textContent?.startsWith("Approved"),
    );
    expect(await textOf(page, "status")).toMatch(/run completed/);
    expect((await api("GET", `/v1/sessions/${session.id}`)).current_agent).toBe("billing");
    sessionId = session.id;
  });

  it("denies one with a reason: the handoff is not made and the agent is told why", async () => {
    const session = await api("POST", "/v1/sessions", { agent: "gatekeeper" });
    expect(
      (
        await api("POST", `/v1/sessions/${session.id}/messages`, {
          role: "user",
          content: "I was charged twice on my last invoice",
        })
      ).run.status,
    ).toBe("awaiting_approval");
    const item = `${byTestId("inbox-item")}[data-session="${session.id}"]`;
    await page.waitForSelector(item, { timeout: 20_000 });
    await page.type(`${item} input[name=reason]`, "not during the audit");
    await page.click(`${item} ${byTestId("deny")}`);
    await page.waitForFunction(() => document.querySelector("[data-testid=status]")?.textContent?.startsWith("Denied"));
    expect((await api("GET", `/v1/sessions/${session.id}`)).current_agent).toBe("gatekeeper");
    const messages = await api("GET", `/v1/sessions/${session.id}/messages`);
    expect(JSON.stringify(messages.items)).toContain("not during the audit");
  });

  it("answers a human agent's turn with a reply: the run completes with it, in the agent's name", async () => {
    // The demo supervisor is a person (kind: human); a session with it waits for their reply.
    const session = await api("POST", "/v1/sessions", { agent: "supervisor" });
    expect(
      (
        await api("POST", `/v1/sessions/${session.id}/messages`, {
          role: "user",
          content: "I want to speak to a manager",
        })
      ).run.status,
    ).toBe("awaiting_human");
    const item = `${byTestId("inbox-item")}[data-session="${session.id}"]`;
    await page.waitForSelector(item, { timeout: 20_000 });
    await page.type(`${item} textarea[name=reply]`, "Hello, I am the manager. How can I help?");
    await page.click(`${item} ${byTestId("resolve")}`);
    await page.waitForFunction(() =>
      document.querySelector("[data-testid=status]")?.textContent?.startsWith("Answered"),
    );
    const messages = await api("GET", `/v1/sessions/${session.id}/messages`);
    expect(messages.items.at(-1)).toMatchObject({
      role: "assistant",
      agent: "supervisor",
      content: "Hello, I am the manager. How can I help?",
    });
    // Leave the supervisor's seat free for anyone running the demo against this server.
    await api("DELETE", `/v1/sessions/${session.id}`);
  });

  it("finds the audit record of that approval's handoff", async () => {
    await page.click(byTestId("nav-audit"));
    await page.waitForSelector(byTestId("audit-form"));
    await page.type(byTestId("audit-session"), sessionId);
    await page.type("input[name=action]", "handoff.completed");
    // D1 hears of the session's records when its outbox flushes: search until it has.
    for (let attempt = 0; attempt < 40; attempt++) {
      await page.click(byTestId("audit-submit"));
      await page.waitForNetworkIdle({ idleTime: 100 });
      const rows = await page.$$eval(byTestId("audit-row"), (els) => els.map((el) => el.textContent ?? ""));
      if (rows.some((text) => text.includes("handoff.completed"))) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const rows = await page.$$eval(byTestId("audit-row"), (els) => els.map((el) => el.textContent ?? ""));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(/handoff\.completed/);
    expect(rows[0]).toMatch(/gatekeeper → billing/);
    await screenshot(page, "audit");
  });

  it("fits a 375 px screen without sideways scrolling, on every page", async () => {
    await page.setViewport({ width: 375, height: 812 });
    for (const [name, hash, ready] of [
      ["sessions", "#/sessions", "sessions-table"],
      ["session", `#/sessions/${sessionId}`, "handoff-timeline"],
      ["inbox", "#/inbox", "inbox-list"],
      ["audit", "#/audit", "audit-results"],
      ["playground", "#/playground", "route-input"],
    ] as const) {
      await page.goto(`${url}/${hash}`, { waitUntil: "networkidle0" });
      await page.waitForSelector(byTestId(ready));
      await screenshot(page, `${name}-375px`);
      // Tables scroll inside their own box; nothing else may push the page wider.
      expect(await page.evaluate(() => document.documentElement.scrollWidth), name).toBeLessThanOrEqual(375);
    }
    await page.setViewport({ width: 1280, height: 900 });
  });

  it("is reachable from the keyboard: Tab walks the skip link and every section of the navigation", async () => {
    await page.goto(`${url}/#/sessions`, { waitUntil: "networkidle0" });
    // A fresh load, so Tab starts from the top of the page.
    await page.reload({ waitUntil: "networkidle0" });
    await page.waitForSelector(byTestId("sessions-table"));
    const reached: string[] = [];
    for (let i = 0; i < 8; i++) {
      await page.keyboard.press("Tab");
      reached.push(
        await page.evaluate(
          () =>
            document.activeElement?.getAttribute("data-testid") ?? document.activeElement?.textContent?.trim() ?? "",
        ),
      );
    }
    expect(reached[0]).toBe("Skip to content");
    for (const id of ["nav-sessions", "nav-inbox", "nav-audit", "nav-playground"]) expect(reached).toContain(id);
    // The focused element is visibly outlined.
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).not.toBe("none");
  });
});

describe("the API reference at /docs", () => {
  it("renders every operation of /openapi.json, offline, and filters them", async () => {
    await page.goto(`${url}/docs`, { waitUntil: "networkidle0" });
    const spec = await (await fetch(`${url}/openapi.json`)).json();
    const count = Object.values(spec.paths as Record<string, object>).reduce(
      (n, item) => n + Object.keys(item).length,
      0,
    );
    await page.waitForSelector(byTestId("docs-operation"));
    expect(await page.$$eval(byTestId("docs-operation"), (els) => els.length)).toBe(count);
    await screenshot(page, "docs", false);
    await page.type(byTestId("docs-filter"), "inbox resolve");
    const visible = await page.$$eval(byTestId("docs-operation"), (els) =>
      els.filter((el) => !(el as HTMLElement).hidden).map((el) => el.querySelector("h3")?.textContent),
    );
    expect(visible).toEqual(["POST /v1/inbox/{id}/resolve"]);
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
    expect(requested.size).toBeGreaterThan(10);
  });
});
