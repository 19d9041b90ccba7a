import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { api, byTestId, launch, screenshot, signIn, textOf, type Watched, watchedPage } from "./browser";

/**
 * The session page's Memory panel in headless Chromium against `wrangler dev`: add a fact
 * from its form, see one another client wrote, edit a value in place, delete one, and be
 * told when the memory is full. What the page did is checked through the API.
 */

const url = inject("relayUrl");
const key = inject("relayKey");

let browser: Browser;
let watched: Watched;
let page: Page;
let sessionId = "";

beforeAll(async () => {
  browser = await launch();
  watched = await watchedPage(browser);
  page = watched.page;
  await signIn(page, url, key);
  sessionId = (await api("POST", "/v1/sessions", { agent: "triage" })).id;
  await page.goto(`${url}/#/sessions/${sessionId}`, { waitUntil: "networkidle0" });
  await page.waitForSelector(byTestId("memory-panel"));
});

afterAll(async () => {
  await browser?.close();
});

const memoryOf = async () => (await api("GET", `/v1/sessions/${sessionId}/memory`)) as { facts: any[] };
const row = (factKey: string) => `${byTestId("memory-fact")}[data-key="${factKey}"]`;
const valueIn = (factKey: string) =>
  page.$eval(`${row(factKey)} ${byTestId("memory-fact-value")}`, (el) => el.textContent ?? "");

/** Empties a field, then types into it as a person would. */
async function fill(selector: string, text: string): Promise<void> {
  await page.$eval(selector, (el) => ((el as HTMLInputElement).value = ""));
  await page.type(selector, text);
}

async function waitForStatus(text: string): Promise<string> {
  await page.waitForFunction(
    (wanted) => document.querySelector("[data-testid=status]")?.textContent?.includes(wanted),
    { timeout: 15_000 },
    text,
  );
  return textOf(page, "status");
}

describe("the Memory panel", () => {
  it("starts empty, with the memory's limits", async () => {
    // The panel is there at once; what it shows comes with the page's first read.
    await page.waitForFunction(() => document.querySelector("[data-testid=memory-summary]")?.textContent, {
      timeout: 15_000,
    });
    expect(await textOf(page, "memory-summary")).toContain("0 of 50, 0 of 8000 characters");
    expect(await textOf(page, "memory-table")).toContain("No facts yet.");
  });

  it("adds a fact from its form, as a person's", async () => {
    await page.type(byTestId("memory-key"), "customer");
    await page.type(byTestId("memory-value"), "Ada Lovelace");
    await page.click(byTestId("memory-add"));
    await page.waitForSelector(row("customer"));
    expect(await valueIn("customer")).toBe("Ada Lovelace");
    expect(await page.$eval(row("customer"), (el) => el.textContent)).toContain("a person");
    expect(await textOf(page, "memory-summary")).toContain("1 of 50");
    expect((await memoryOf()).facts).toMatchObject([{ key: "customer", value: "Ada Lovelace", agent: null }]);
    // The form is ready for the next fact, and says when a key would replace one.
    expect(await page.$eval(byTestId("memory-key"), (el) => (el as HTMLInputElement).value)).toBe("");
    await page.type(byTestId("memory-key"), "customer");
    expect(await textOf(page, "memory-add")).toBe("Replace");
    await fill(byTestId("memory-key"), "");
  });

  it("shows a fact another client wrote, without a reload", async () => {
    await api("PUT", `/v1/sessions/${sessionId}/memory/order.id`, { value: "A-1042" });
    await page.waitForSelector(row("order.id"), { timeout: 15_000 });
    expect(await valueIn("order.id")).toBe("A-1042");
  });

  it("edits a value in place", async () => {
    await page.click(`${row("order.id")} ${byTestId("memory-edit")}`);
    await page.waitForSelector(byTestId("memory-edit-value"));
    await fill(byTestId("memory-edit-value"), "A-2001");
    await page.click(byTestId("memory-save"));
    await page.waitForFunction(
      (selector) => document.querySelector(selector)?.textContent === "A-2001",
      { timeout: 15_000 },
      `${row("order.id")} ${byTestId("memory-fact-value")}`,
    );
    expect((await memoryOf()).facts.find((f) => f.key === "order.id")).toMatchObject({ value: "A-2001" });
    await screenshot(page, "session-memory");
  });

  it("deletes a fact once the person confirms", async () => {
    page.once("dialog", (dialog) => void dialog.accept());
    await page.click(`${row("order.id")} ${byTestId("memory-delete")}`);
    await page.waitForFunction((selector) => !document.querySelector(selector), { timeout: 15_000 }, row("order.id"));
    expect(await waitForStatus("forgotten")).toContain("order.id");
    expect((await memoryOf()).facts.map((f) => f.key)).toEqual(["customer"]);
  });

  it("says why a full memory refuses another fact, and keeps what it holds", async () => {
    for (let i = 1; i < 50; i++) await api("PUT", `/v1/sessions/${sessionId}/memory/k${i}`, { value: "v" });
    watched.expect(409, `/v1/sessions/${sessionId}/memory/`);
    await fill(byTestId("memory-key"), "one-more");
    await fill(byTestId("memory-value"), "v");
    await page.click(byTestId("memory-add"));
    expect(await waitForStatus("MEMORY_FULL")).toMatch(/50 facts/);
    expect((await memoryOf()).facts).toHaveLength(50);
  });

  it("left nothing unexpected: no console errors, no failed requests", () => {
    expect(watched.problems).toEqual([]);
  });
});
