import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { api, byTestId, launch } from "./browser";

/**
 * The pages under their Content-Security-Policy (public/_headers), in headless Chromium
 * against `wrangler dev`: signing in, a session watched live over its WebSocket while a run
 * hands it on (run timelines, whose bars are styled from script), and the API reference.
 * Any violation the page reports — a `securitypolicyviolation` event, or Chromium's console
 * line for one — fails the test, so a page that starts to need more than its policy allows
 * is caught here rather than by a user.
 */

const url = inject("relayUrl");
const key = inject("relayKey");

declare global {
  interface Window {
    violations?: string[];
  }
}

let browser: Browser;
let page: Page;
/** Chromium's console lines about the policy (it logs each violation as an error). */
const logged: string[] = [];
/** The policy each HTML document came with. */
const policies = new Map<string, string | undefined>();

/** Every violation reported so far, by event or in the console. */
async function violations(): Promise<string[]> {
  return [...((await page.evaluate(() => window.violations ?? [])) as string[]), ...logged];
}

beforeAll(async () => {
  browser = await launch();
  page = await browser.newPage();
  // Installed before any script of the page runs, on every document it loads.
  await page.evaluateOnNewDocument(() => {
    window.violations = [];
    document.addEventListener("securitypolicyviolation", (e) =>
      window.violations!.push(
        `${e.effectiveDirective} blocked ${e.blockedURI || "(inline)"} at ${e.sourceFile}:${e.lineNumber}`,
      ),
    );
  });
  page.on("console", (message) => {
    if (/Content Security Policy|Trusted Type/i.test(message.text())) logged.push(message.text());
  });
  page.on("response", (response) => {
    if (response.request().resourceType() === "document")
      policies.set(new URL(response.url()).pathname, response.headers()["content-security-policy"]);
  });
});

afterAll(async () => {
  await browser?.close();
});

describe("the pages under their Content-Security-Policy", () => {
  it("the dashboard signs in and follows a session live with nothing blocked", async () => {
    await page.goto(`${url}/`, { waitUntil: "networkidle0" });
    expect(policies.get("/")).toMatch(/default-src 'none'/);
    await page.waitForSelector(byTestId("api-key"));
    await page.type(byTestId("api-key"), key);
    await page.keyboard.press("Enter");
    await page.waitForSelector(byTestId("sessions-table"));

    const session = await api("POST", "/v1/sessions", { agent: "triage" });
    await page.goto(`${url}/#/sessions/${session.id}`, { waitUntil: "networkidle0" });
    await page.waitForFunction(
      (selector) => document.querySelector(selector)?.textContent?.includes("live") ?? false,
      { timeout: 20_000 },
      byTestId("live-status"),
    );
    const answer = await api("POST", `/v1/sessions/${session.id}/messages`, {
      role: "user",
      content: "I was charged twice on my last invoice",
    });
    expect(answer.run.status).toBe("completed");
    // Heard over the WebSocket: the handoff, and the run's timeline with its styled steps.
    await page.waitForFunction(
      (selector) => [...document.querySelectorAll(selector)].some((el) => el.textContent?.includes("billing")),
      { timeout: 20_000 },
      byTestId("handoff-entry"),
    );
    await page.waitForSelector(byTestId("run-step"), { timeout: 20_000 });
    const styled = await page.$eval(byTestId("run-step"), (el) => (el as HTMLElement).style.flexBasis);
    expect(styled).toMatch(/rem$/);
    expect(await violations()).toEqual([]);
  });

  it("the API reference renders every operation with nothing blocked", async () => {
    await page.goto(`${url}/docs`, { waitUntil: "networkidle0" });
    expect(policies.get("/docs")).toMatch(/default-src 'none'/);
    await page.waitForSelector(byTestId("docs-operation"));
    expect(await page.$$eval(byTestId("docs-operation"), (els) => els.length)).toBeGreaterThan(50);
    expect(await violations()).toEqual([]);
  });

  it("and the watch is live: a load the policy forbids is blocked and reported", async () => {
    await page.evaluate(() => {
      const img = document.createElement("img");
      img.src = "https://elsewhere.invalid/pixel.png";
      document.body.append(img);
    });
    await page.waitForFunction(() => (window.violations ?? []).length > 0, { timeout: 5_000 });
    expect((await violations()).join("\n")).toMatch(/img-src blocked https:\/\/elsewhere\.invalid\/pixel\.png/);
  });
});
