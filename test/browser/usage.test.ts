import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { eventually } from "../eventually";
import { api, byTestId, launch, screenshot, signIn, textOf, type Watched, watchedPage } from "./browser";

/**
 * The Usage page in headless Chromium against `wrangler dev`, under the pages' own policy
 * (public/_headers): the last 30 days of one counter as bars drawn from script, switched to
 * another, the totals, the models and the quotas, as `GET /v1/usage` answers them. A
 * conversation is had through the API first, so there is something to count.
 */

const url = inject("relayUrl");
const key = inject("relayKey");

let browser: Browser;
let watched: Watched;
let page: Page;
/** Chromium's console lines about the policy (it logs each violation as an error). */
const blocked: string[] = [];
let report: any;

beforeAll(async () => {
  const session = await api("POST", "/v1/sessions", { agent: "triage" });
  await api("POST", `/v1/sessions/${session.id}/messages`, { role: "user", content: "I was charged twice" });
  // Usage follows use by about a second.
  report = await eventually(
    () => api("GET", "/v1/usage"),
    (r) => r.totals.runs > 0,
    { timeout: 15_000, what: "the run counted" },
  );
  browser = await launch();
  watched = await watchedPage(browser);
  page = watched.page;
  page.on("console", (message) => {
    if (/Content Security Policy|Trusted Type/i.test(message.text())) blocked.push(message.text());
  });
  await signIn(page, url, key);
});

afterAll(async () => {
  await browser?.close();
});

const bars = () =>
  page.$$eval(byTestId("usage-bar"), (els) =>
    els.map((el) => ({ height: Number(el.getAttribute("height")), title: el.querySelector("title")?.textContent })),
  );

describe("the usage page", () => {
  it("charts the last 30 days, one bar a day, today's with the requests made", async () => {
    await page.click(byTestId("nav-usage"));
    await page.waitForSelector(byTestId("usage-chart"));
    const drawn = await bars();
    expect(drawn).toHaveLength(30);
    const today = new Date().toISOString().slice(0, 10);
    expect(drawn.at(-1)!.title).toMatch(new RegExp(`^${today}: [\\d,]+$`));
    expect(drawn.at(-1)!.height).toBeGreaterThan(0);
    expect(await textOf(page, "usage-caption")).toMatch(/^Requests: [\d,]+ in 30 days/);
    await screenshot(page, "usage");
  });

  it("shows another counter when asked: the runs the API reports", async () => {
    await page.select(byTestId("usage-metric"), "runs");
    await page.waitForFunction(
      (selector) => document.querySelector(selector)?.textContent?.startsWith("Runs:"),
      { timeout: 5_000 },
      byTestId("usage-caption"),
    );
    const caption = await textOf(page, "usage-caption");
    const runs = Number(/^Runs: ([\d,]+)/.exec(caption)![1]!.replaceAll(",", ""));
    expect(runs).toBeGreaterThanOrEqual(report.totals.runs);
    expect((await bars()).at(-1)!.height).toBeGreaterThan(0);
  });

  it("lists the totals, the models called and each quota with its use now", async () => {
    expect(await textOf(page, "usage-totals")).toMatch(/Sessions\s*[\d,]+/);
    expect(await textOf(page, "usage-models")).toMatch(/local/);
    const quotas = await page.$$eval(byTestId("quota-row"), (rows) =>
      rows.map((row) => [row.getAttribute("data-limit"), ...[...row.children].map((c) => c.textContent?.trim())]),
    );
    expect(quotas.map((q) => q[0])).toEqual([
      "requests_per_minute",
      "sessions_per_day",
      "runs_per_minute",
      "model_tokens_per_day",
      "agents",
      "tools",
    ]);
    // The suite's server sets sessions a day (test/browser/global-setup.ts); the rest are off.
    const sessions = quotas.find((q) => q[0] === "sessions_per_day")!;
    expect(sessions.slice(1, 3)).toEqual(["Sessions a day", "5,000"]);
    expect(Number(sessions[3]!.replaceAll(",", ""))).toBeGreaterThanOrEqual(1);
    expect(quotas.find((q) => q[0] === "tools")![2]).toBe("none");
  });

  it("did all of it with nothing blocked and no error", async () => {
    expect(blocked).toEqual([]);
    expect(watched.problems).toEqual([]);
  });
});
