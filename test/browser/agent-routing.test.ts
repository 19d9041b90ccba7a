import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { eventually } from "../eventually";
import { api, byTestId, launch, screenshot, signIn, textOf, type Watched, watchedPage } from "./browser";

/**
 * An agent's page and the routing history in headless Chromium against `wrangler dev`: an edit
 * to an agent's keywords, replayed over sessions the router really routed, shows what it would
 * move before it is saved (the API's own answer); the inputs an agent took unsure and those the
 * fallback took are listed, and one click adds one to an agent's examples through the registry
 * write, which the audit trail records. What the page did is checked through the API.
 */

const url = inject("relayUrl");
const key = inject("relayKey");

/** Two agents of this file's own, on words nothing else in the suite says. */
const COURIER = {
  name: "courier",
  title: "Courier",
  description: "Parcels in transit and their couriers.",
  triggers: { keywords: ["zorblat", "parcel"] },
};
const BURSAR = {
  name: "bursar",
  title: "Bursar",
  description: "Account ledgers and balances.",
  triggers: { keywords: ["quimble"] },
};
/** Routed to the courier by its keyword. */
const ZORBLAT = ["where is my zorblat", "my zorblat has not arrived"];
/** The rules are unsure (no keyword); the LLM tier (offline, by the words of the agents' tools) picks the courier. */
const UNSURE = "a word with the courier team please";
/** Nothing knows these words: the fallback takes it. */
const ODD = "blorp fnord wibble";

let browser: Browser;
let watched: Watched;
let page: Page;

interface Item {
  input: string;
  agent: string;
  method: string;
}
const history = async (query: string) => (await api("GET", `/v1/route/history${query}`)).items as Item[];
const listed = (query: string, input: string) =>
  eventually(
    () => history(query),
    (items) => items.some((i) => i.input === input),
    { what: `the routing history lists "${input}" (${query})`, timeout: 15_000 },
  );
const routed = async (input: string) => (await api("POST", "/v1/sessions", { input })).route as Item;

beforeAll(async () => {
  await api("PUT", "/v1/agents/courier", COURIER);
  await api("PUT", "/v1/agents/bursar", BURSAR);
  browser = await launch();
  watched = await watchedPage(browser);
  page = watched.page;
  await signIn(page, url, key);
});

afterAll(async () => {
  await browser?.close();
});

/** The agent's page, loaded afresh (a hash change alone to the page already shown would redraw nothing). */
async function openAgent(name: string): Promise<void> {
  await page.evaluate((hash) => {
    location.hash = hash;
  }, `#/agents/${name}`);
  await page.reload({ waitUntil: "networkidle0" });
  await page.waitForSelector(byTestId("agent-markdown"));
}

/** Edit → the file with the bursar's keywords widened → "What would this change move?"; the API's answer. */
async function replayEdit(): Promise<any> {
  await page.click(byTestId("agent-edit"));
  expect(await page.$eval(byTestId("agent-markdown"), (el) => (el as HTMLTextAreaElement).readOnly)).toBe(false);
  const before = await page.$eval(byTestId("agent-markdown"), (el) => (el as HTMLTextAreaElement).value);
  expect(before).toContain("quimble");
  // Typed as a person would: the whole file, with the keyword added.
  await page.click(byTestId("agent-markdown"));
  await page.keyboard.down("Control");
  await page.keyboard.press("KeyA");
  await page.keyboard.up("Control");
  await page.keyboard.type(before.replace(/quimble/, "quimble, zorblat"));
  const answer = page.waitForResponse((r) => r.url().endsWith("/v1/route/replay"));
  await page.click(byTestId("agent-replay"));
  return (await answer).json();
}

describe("an agent's editor", () => {
  it("says plainly when there is no routing history to replay", async () => {
    await api("DELETE", "/v1/route/history");
    await openAgent("bursar");
    const report = await replayEdit();
    expect(report.totals.inputs).toBe(0);
    expect(await textOf(page, "replay-empty")).toMatch(/routing history is empty/);
  });

  it("shows what a keyword edit would move over recorded sessions, as the API answers it, before saving", async () => {
    for (const input of ZORBLAT) expect((await routed(input)).agent).toBe("courier");
    await listed("?agent=courier", ZORBLAT[1]!);
    await listed("?agent=courier", ZORBLAT[0]!);
    await openAgent("bursar");
    const report = await replayEdit();
    const move = `${byTestId("replay-move")}[data-from="courier"][data-to="bursar"]`;
    await page.waitForSelector(move);
    // The page shows the API's answer, and computes nothing of its own.
    const shown = report.moves.find((m: any) => m.from === "courier" && m.to === "bursar");
    expect(shown.examples.length).toBeGreaterThan(0);
    const row = await page.$eval(move, (el) => el.textContent ?? "");
    for (const example of shown.examples) expect(row).toContain(example);
    expect(row).toContain(String(shown.count));
    expect(await page.$$eval(byTestId("replay-move"), (els) => els.length)).toBe(report.moves.length);
    expect(await textOf(page, "replay-summary")).toContain(
      `${report.totals.moved} of ${report.totals.replayed} recorded inputs would move.`,
    );
    expect(await textOf(page, "replay-fallback")).toContain(`Newly to the fallback${report.fallback.entered.count}`);
    await screenshot(page, "agent-replay");
    // Nothing was saved by trying it.
    expect((await api("GET", "/v1/agents/bursar")).definition.triggers.keywords).toEqual(["quimble"]);

    await page.click(byTestId("agent-save"));
    await page.waitForFunction(() => document.querySelector("[data-testid=status]")?.textContent === "Saved bursar.");
    expect((await api("GET", "/v1/agents/bursar")).definition.triggers.keywords).toEqual(["quimble", "zorblat"]);
    expect(await page.$eval(byTestId("agent-markdown"), (el) => (el as HTMLTextAreaElement).readOnly)).toBe(true);
  });
});

describe("inputs to learn from", () => {
  it("lists what the courier took unsure and what the fallback took, and adds one as an example in one click", async () => {
    expect(await routed(UNSURE)).toMatchObject({ agent: "courier", method: "llm" });
    // The fallback gives what nothing fits to the courier while the tenant's config says so.
    const { stored } = await api("GET", "/v1/config/routing");
    await api("PUT", "/v1/config/routing", { ...stored, fallback: "default_agent", default_agent: "courier" });
    try {
      expect(await routed(ODD)).toMatchObject({ agent: "courier", method: "fallback" });
    } finally {
      if (stored) await api("PUT", "/v1/config/routing", stored);
      else await api("DELETE", "/v1/config/routing");
    }
    await listed("?agent=courier&kind=low_confidence", UNSURE);
    await listed("?kind=fallback", ODD);

    await openAgent("courier");
    const unsure = `${byTestId("agent-low-confidence")} ${byTestId("history-row")}[data-input="${UNSURE}"]`;
    const odd = `${byTestId("fallback-inputs")} ${byTestId("history-row")}[data-input="${ODD}"]`;
    await page.waitForSelector(unsure);
    await page.waitForSelector(odd);
    expect(await page.$eval(unsure, (el) => el.textContent)).toContain("llm");
    // Rules-sure inputs are not in the unsure list.
    expect(await page.$(`${byTestId("agent-low-confidence")} [data-input="${ZORBLAT[0]}"]`)).toBeNull();
    await screenshot(page, "agent-history");

    const before = await api("GET", "/v1/agents/courier");
    const version = (await api("GET", "/v1/route/stats")).registry_version;
    await page.click(`${unsure} ${byTestId("add-example")}`);
    await page.waitForSelector(`${unsure} ${byTestId("history-example-known")}`);
    expect(await textOf(page, "agent-examples")).toContain(UNSURE);
    const after = await api("GET", "/v1/agents/courier");
    expect(after.definition.triggers.examples).toEqual([UNSURE]);
    // Only the example changed, through the registry write: a new version, a new updated_at.
    expect({ ...after.definition, triggers: { ...after.definition.triggers, examples: [] } }).toEqual(
      before.definition,
    );
    expect(after.updated_at).not.toBe(before.updated_at);
    const written = (await api("GET", "/v1/route/stats")).registry_version;
    expect(written).toBeGreaterThan(version);
    // The write is in the audit trail, as the Audit page reads it: the fields changed, not the example.
    const audited = await eventually(
      async () => (await api("GET", "/v1/audit?agent=courier&action=agent.updated")).items as any[],
      (items) => items.some((r) => r.details.registry_version === written),
      { what: "the agent.updated record of the example added", timeout: 15_000 },
    );
    const record = audited.find((r) => r.details.registry_version === written);
    expect(record).toMatchObject({
      action: "agent.updated",
      agent: "courier",
      session_id: null,
      actor: "api",
      actor_type: "user",
      details: { registry_version: written, changed: ["triggers"] },
    });
    expect(JSON.stringify(record)).not.toContain(UNSURE);
  });

  it("adds a fallback input as an example of another agent, from that agent's page", async () => {
    await openAgent("bursar");
    const odd = `${byTestId("fallback-inputs")} ${byTestId("history-row")}[data-input="${ODD}"]`;
    await page.waitForSelector(odd);
    expect(await page.$eval(odd, (el) => el.textContent)).toContain("courier");
    expect(await page.$eval(`${odd} ${byTestId("add-example")}`, (el) => el.textContent)).toBe(
      "Add as example of bursar",
    );
    await page.click(`${odd} ${byTestId("add-example")}`);
    await page.waitForSelector(`${odd} ${byTestId("history-example-known")}`);
    expect((await api("GET", "/v1/agents/bursar")).definition.triggers.examples).toEqual([ODD]);
    expect(await textOf(page, "status")).toBe("Added to bursar's examples.");
  });

  it("left nothing unexpected: no console errors, no failed requests", () => {
    expect(watched.problems).toEqual([]);
  });
});
