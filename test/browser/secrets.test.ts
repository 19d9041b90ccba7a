import { randomBytes, randomUUID } from "node:crypto";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { api, byTestId, launch, relayCall, screenshot, signIn, textOf, type Watched, watchedPage } from "./browser";

/**
 * The Secrets page in headless Chromium against `wrangler dev`, served under a policy that
 * refuses inline scripts and styles: store a secret from its write-only field, see it listed
 * without its value (nowhere in the page's HTML, its fields, its URL, its storage or its
 * requests' URLs), replace it, be refused a delete while an agent and a tool name it, delete it.
 * Agents and tools are made through the API, as another client would.
 */

const url = inject("relayUrl");
const key = inject("relayKey");

/** The policy the dashboard must work under: its own scripts and stylesheets only. */
const POLICY = "script-src 'self'; style-src 'self'";

const NAME = "browser-hook";
// Standard Webhooks secrets, as an agent's signing_secret must hold; random, so a trace of one is found.
const VALUE = `whsec_${randomBytes(32).toString("base64")}`;
const REPLACEMENT = `whsec_${randomBytes(32).toString("base64")}`;
const AGENT = "vault-user";
const TOOL = "vault-tool";

/** Serves every page the tab opens with {@link POLICY} added to its headers. */
async function underPolicy(page: Page): Promise<void> {
  const cdp = await page.createCDPSession();
  cdp.on("Fetch.requestPaused", async (event) => {
    const status = event.responseStatusCode ?? 200;
    // A redirect has no body to hand back: let it through, the page it leads to is caught too.
    if (status >= 300 && status < 400)
      return void (await cdp.send("Fetch.continueRequest", { requestId: event.requestId }));
    const { body, base64Encoded } = await cdp.send("Fetch.getResponseBody", { requestId: event.requestId });
    await cdp.send("Fetch.fulfillRequest", {
      requestId: event.requestId,
      responseCode: status,
      responseHeaders: [...(event.responseHeaders ?? []), { name: "Content-Security-Policy", value: POLICY }],
      body: base64Encoded ? body : Buffer.from(body).toString("base64"),
    });
  });
  await cdp.send("Fetch.enable", {
    patterns: [{ urlPattern: "*", resourceType: "Document", requestStage: "Response" }],
  });
}

let browser: Browser;
let watched: Watched;
let page: Page;
/** Every URL the page asked for, and the bodies of its PUTs to the vault. */
const requested: string[] = [];
const puts: string[] = [];
const deletes: string[] = [];
const pageNames = Array.from({ length: 51 }, (_, i) => `page-${String(i).padStart(3, "0")}`);

beforeAll(async () => {
  browser = await launch();
  watched = await watchedPage(browser);
  page = watched.page;
  await underPolicy(page);
  page.on("request", (request) => {
    requested.push(request.url());
    const path = new URL(request.url()).pathname;
    if (!path.startsWith("/v1/secrets/")) return;
    if (request.method() === "PUT") puts.push(request.postData() ?? "");
    if (request.method() === "DELETE") deletes.push(path);
  });
  await signIn(page, url, key);
});

afterAll(async () => {
  await relayCall("DELETE", `/v1/agents/${AGENT}`);
  await relayCall("DELETE", `/v1/tools/${TOOL}`);
  for (const name of [NAME, ...pageNames]) await relayCall("DELETE", `/v1/secrets/${name}`);
  await browser?.close();
});

const statusText = () => textOf(page, "status");
const fieldValue = (testId: string) => page.$eval(byTestId(testId), (el) => (el as HTMLInputElement).value);
const focused = () => page.evaluate(() => document.activeElement?.getAttribute("data-testid") ?? "");
const row = (name: string) => `${byTestId("secret-row")}[data-name="${name}"]`;

async function waitForStatus(text: string): Promise<string> {
  await page.waitForFunction(
    (wanted) => document.querySelector("[data-testid=status]")?.textContent?.includes(wanted),
    { timeout: 15_000 },
    text,
  );
  return statusText();
}

/** Empties a field, then types into it as a person would. */
async function fill(testId: string, text: string): Promise<void> {
  await page.$eval(byTestId(testId), (el) => ((el as HTMLInputElement).value = ""));
  await page.type(byTestId(testId), text);
}

/** Nowhere a page keeps or shows things: its HTML, its fields, its URL, its storage, the URLs it asked for. */
async function expectNoTrace(secret: string): Promise<void> {
  expect(await page.content()).not.toContain(secret);
  const kept = await page.evaluate(() => ({
    fields: [...document.querySelectorAll("input, textarea")].map((el) => (el as HTMLInputElement).value),
    url: location.href,
    local: Object.entries(localStorage).flat(),
    session: Object.entries(sessionStorage).flat(),
  }));
  expect(JSON.stringify(kept)).not.toContain(secret);
  expect(requested.filter((u) => u.includes(secret))).toEqual([]);
}

describe("the page's policy", () => {
  it("is in force in this browser: an inline style is refused and logged as an error", async () => {
    const probe = await browser.newPage();
    await underPolicy(probe);
    const errors: string[] = [];
    probe.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    await probe.goto(`${url}/`, { waitUntil: "networkidle0" });
    const color = await probe.evaluate(() => {
      const probeEl = document.createElement("p");
      probeEl.setAttribute("style", "color: rgb(255, 0, 0)");
      document.body.append(probeEl);
      return getComputedStyle(probeEl).color;
    });
    expect(color).not.toBe("rgb(255, 0, 0)");
    // So a violation on the watched page shows in its problems, checked at the end.
    await expect.poll(() => errors.join("\n")).toMatch(/Content Security Policy/);
    await probe.close();
  });
});

describe("the secrets page", () => {
  it("stores a secret from a write-only field: the answer says stored, the list shows its name, never its value", async () => {
    await page.click(byTestId("nav-secrets"));
    await page.waitForSelector(byTestId("secrets-table"));
    expect(
      await page.$eval(byTestId("secret-value"), (el) => {
        const input = el as HTMLInputElement;
        return [input.type, input.getAttribute("autocomplete"), input.hasAttribute("name"), input.labels?.length];
      }),
    ).toEqual(["password", "off", false, 1]);
    expect(await page.$eval(byTestId("secret-name"), (el) => (el as HTMLInputElement).labels?.length)).toBe(1);

    await fill("secret-name", NAME);
    await fill("secret-value", VALUE);
    await page.keyboard.press("Enter");
    expect(await waitForStatus("stored")).toBe(`Secret '${NAME}' stored.`);
    // The form sent the whole value, and let go of it.
    expect(puts.map((p) => JSON.parse(p))).toEqual([{ value: VALUE }]);
    expect(await fieldValue("secret-value")).toBe("");
    expect(await fieldValue("secret-name")).toBe("");

    await page.waitForSelector(row(NAME));
    expect(await page.$eval(`${row(NAME)} ${byTestId("secret-replaced")}`, (el) => el.textContent)).toBe("never");
    expect(await page.$eval(`${row(NAME)} ${byTestId("secret-used-by")}`, (el) => el.textContent)).toBe("nobody");
    expect(await page.$eval(`${row(NAME)} ${byTestId("secret-delete")}`, (el) => el.getAttribute("aria-label"))).toBe(
      `Delete ${NAME}`,
    );
    await expectNoTrace(VALUE);
    expect((await api("GET", `/v1/secrets/${NAME}`)).rotated_at).toBeNull();
    await screenshot(page, "secrets");
  });

  it("replaces it from its row: the name is prefilled, the value is not, the answer says replaced", async () => {
    await page.click(`${row(NAME)} ${byTestId("secret-replace")}`);
    expect(await fieldValue("secret-name")).toBe(NAME);
    expect(await fieldValue("secret-value")).toBe("");
    expect(await focused()).toBe("secret-value");
    expect(await textOf(page, "secret-store")).toBe("Replace value");

    await page.type(byTestId("secret-value"), REPLACEMENT);
    await page.click(byTestId("secret-store"));
    expect(await waitForStatus("replaced")).toBe(`Secret '${NAME}' replaced.`);
    expect(JSON.parse(puts.at(-1)!)).toEqual({ value: REPLACEMENT });
    expect(await fieldValue("secret-value")).toBe("");
    await page.waitForFunction(
      (selector) => document.querySelector(selector)?.textContent !== "never",
      {},
      `${row(NAME)} ${byTestId("secret-replaced")}`,
    );
    expect((await api("GET", `/v1/secrets/${NAME}`)).rotated_at).not.toBeNull();
    await expectNoTrace(VALUE);
    await expectNoTrace(REPLACEMENT);
  });

  it("shows a refused store as a coded message, and clears the value all the same", async () => {
    const before = await api("GET", `/v1/secrets/${NAME}`);

    watched.expect(400, "/v1/secrets/");
    const stray = `stray-${randomUUID()}`;
    await fill("secret-name", "1-starts-with-a-digit");
    await fill("secret-value", stray);
    await page.keyboard.press("Enter");
    expect(await waitForStatus("VALIDATION_FAILED")).toMatch(
      /^VALIDATION_FAILED: Invalid secret name\. must name a secret/,
    );
    expect(await page.$eval(byTestId("status"), (el) => (el as HTMLElement).dataset.kind)).toBe("error");
    expect(await fieldValue("secret-value")).toBe("");
    await expectNoTrace(stray);

    // Over 8 KiB: refused naming the rule, not the value; the stored one is untouched.
    watched.expect(400, `/v1/secrets/${NAME}`);
    await page.evaluate(() => document.querySelector("[data-testid=status]")!.replaceChildren());
    const long = `long-${randomUUID()}`.padEnd(8 * 1024 + 1, "x");
    await fill("secret-name", NAME);
    await page.$eval(byTestId("secret-value"), (el, text) => ((el as HTMLInputElement).value = text), long);
    await page.click(byTestId("secret-store"));
    expect(await waitForStatus("VALIDATION_FAILED")).toBe(
      "VALIDATION_FAILED: Invalid request body. value: must be at most 8192 bytes (UTF-8)",
    );
    expect(await fieldValue("secret-value")).toBe("");
    await expectNoTrace(long.slice(0, 41));
    expect(await api("GET", `/v1/secrets/${NAME}`)).toEqual(before);
  });

  it("will not delete a secret an agent and a tool name: the 409 says which, the agent a link", async () => {
    await api("PUT", `/v1/agents/${AGENT}`, {
      name: AGENT,
      description: "A webhook agent whose calls are signed with the vault's secret.",
      kind: "webhook",
      endpoint: "http://127.0.0.1:9/agent",
      signing_secret: NAME,
    });
    await api("PUT", `/v1/tools/${TOOL}`, {
      name: TOOL,
      kind: "http",
      url: "http://127.0.0.1:9/tool",
      headers: { Authorization: NAME },
    });

    // Asked first, and a "no" sends nothing.
    const asked = new Promise<string>((resolve) =>
      page.once("dialog", (dialog) => {
        resolve(dialog.message());
        void dialog.dismiss();
      }),
    );
    await page.click(`${row(NAME)} ${byTestId("secret-delete")}`);
    expect(await asked).toContain(NAME);
    await page.evaluate(() => undefined);
    expect(deletes).toEqual([]);

    // The list was drawn before they named it; the refusal says who does.
    watched.expect(409, `/v1/secrets/${NAME}`);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.click(`${row(NAME)} ${byTestId("secret-delete")}`);
    await page.waitForSelector(`${byTestId("secret-in-use")}:not([hidden])`);
    expect(await statusText()).toMatch(/^SECRET_IN_USE: /);
    const notice = await textOf(page, "secret-in-use");
    expect(notice).toContain(`agent ${AGENT}`);
    expect(notice).toContain(`tool ${TOOL}`);
    expect(await focused()).toBe("secret-in-use");
    expect(await page.$eval(`${row(NAME)} ${byTestId("secret-used-by")}`, (el) => el.textContent)).toBe(
      `agent ${AGENT}tool ${TOOL}`,
    );
    expect((await relayCall("GET", `/v1/secrets/${NAME}`)).status).toBe(200);
    await screenshot(page, "secret-in-use");

    await page.click(`${byTestId("secret-in-use")} a[href="#/agents/${AGENT}"]`);
    expect(await textOf(page, "agent-header")).toContain(AGENT);
  });

  it("deletes it once nothing names it, after asking", async () => {
    await api("DELETE", `/v1/agents/${AGENT}`);
    await api("DELETE", `/v1/tools/${TOOL}`);
    await page.click(byTestId("nav-secrets"));
    await page.waitForSelector(row(NAME));
    expect(await page.$eval(`${row(NAME)} ${byTestId("secret-used-by")}`, (el) => el.textContent)).toBe("nobody");

    page.once("dialog", (dialog) => void dialog.accept());
    await page.click(`${row(NAME)} ${byTestId("secret-delete")}`);
    expect(await waitForStatus("deleted")).toBe(`Secret '${NAME}' deleted.`);
    await page.waitForFunction((selector) => !document.querySelector(selector), {}, row(NAME));
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Stored secrets");
    expect((await relayCall("GET", `/v1/secrets/${NAME}`)).status).toBe(404);
  });

  it("pages a long list as the other lists do: Load more until the end", async () => {
    for (const name of pageNames) await api("PUT", `/v1/secrets/${name}`, { value: `v-${name}` });
    const all: string[] = [];
    for (let cursor: string | null = null; ; ) {
      const answer = await api("GET", `/v1/secrets?limit=200${cursor ? `&cursor=${cursor}` : ""}`);
      all.push(...answer.items.map((s: { name: string }) => s.name));
      cursor = answer.next_cursor;
      if (!cursor) break;
    }
    expect(all.length).toBeGreaterThan(50);

    await page.click(byTestId("secrets-refresh"));
    await page.waitForSelector(row(pageNames[0]!));
    const listed = () =>
      page.$$eval(byTestId("secret-row"), (els) => els.map((el) => (el as HTMLElement).dataset.name ?? ""));
    expect(await listed()).toEqual(all.slice(0, 50));
    while (await page.$eval(byTestId("secrets-more"), (el) => !(el as HTMLElement).hidden)) {
      const shown = (await listed()).length;
      await page.click(byTestId("secrets-more"));
      await page.waitForFunction(
        (selector, count) => document.querySelectorAll(selector).length > count,
        {},
        byTestId("secret-row"),
        shown,
      );
    }
    expect(await listed()).toEqual(all);
  });

  it("fits a 375 px screen and is used from the keyboard: Tab from the name to the value to the button", async () => {
    await page.setViewport({ width: 375, height: 812 });
    await page.goto(`${url}/#/secrets`, { waitUntil: "networkidle0" });
    await page.waitForSelector(byTestId("secrets-table"));
    await screenshot(page, "secrets-375px");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.setViewport({ width: 1280, height: 900 });

    await page.focus(byTestId("secret-name"));
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("secret-value");
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("secret-store");
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).not.toBe("none");
  });
});

describe("basics", () => {
  it("no console errors (a policy violation is one), no failed requests, nothing fetched from elsewhere", () => {
    expect(watched.problems).toEqual([]);
    const origin = new URL(url).origin;
    expect(requested.filter((u) => !u.startsWith(origin) && !u.startsWith("data:"))).toEqual([]);
  });
});
