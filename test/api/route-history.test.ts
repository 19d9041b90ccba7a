import { beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../eventually";
import { team } from "../routing/router-fixtures";
import { forgedCursors } from "./forged-cursors";
import { BETA_KEY, call, putAgents } from "./helpers";

/**
 * `GET /v1/route/history` against the real router object: sessions routed through the API are
 * listed newest first with their decisions, by agent and kind, a page at a time; a bad query is
 * a stable code; another tenant's history never shows.
 */

const RULED = ["a refund please", "why was I charged twice", "the app crashes when I open it"];
/** Nothing in the team knows these words: under the rule strategy the fallback takes it. */
const ODD = "hmm, something odd";

interface Item {
  at: string;
  session_id: string;
  input: string;
  agent: string;
  method: string;
  confidence: number;
  fallback: boolean;
  low_confidence: boolean;
}

const list = async (query = "", key?: string) => {
  const res = await call("GET", `/v1/route/history${query}`, undefined, key ? { key } : {});
  if (res.status !== 200) throw new Error(JSON.stringify(res.json));
  return res.json as { items: Item[]; next_cursor: string | null; threshold: number };
};

async function routedSession(input: string, key?: string): Promise<string> {
  const res = await call("POST", "/v1/sessions", { input }, key ? { key } : {});
  if (res.status !== 201) throw new Error(JSON.stringify(res.json));
  return res.json.id;
}

const listed = (n: number, key?: string) =>
  eventually(
    () => list("", key),
    (page) => page.items.length === n,
    { what: `the history lists ${n} routed sessions` },
  );

beforeAll(async () => {
  await putAgents(team);
  for (const input of RULED) await routedSession(input);
  await listed(RULED.length);
  // The fallback's default agent takes what the rules cannot: a real fallback decision.
  const fallback = { strategy: "rule", fallback: "default_agent", default_agent: "technical" };
  expect((await call("PUT", "/v1/config/routing", fallback)).status).toBe(200);
  await routedSession(ODD);
  expect((await call("DELETE", "/v1/config/routing")).status).toBe(200);
  await listed(RULED.length + 1);
});

describe("GET /v1/route/history", () => {
  it("lists routed sessions newest first, with their decision, the time and the threshold", async () => {
    const page = await list();
    expect(page.threshold).toBe(80);
    expect(page.next_cursor).toBeNull();
    expect(page.items.map((i) => i.input)).toEqual([ODD, ...RULED.toReversed()]);
    expect(page.items[1]).toMatchObject({ input: RULED[2], agent: "technical", method: "rule", fallback: false });
    expect(page.items[1]!.confidence).toBeGreaterThanOrEqual(80);
    expect(page.items[1]!.low_confidence).toBe(false);
    expect(page.items[0]).toMatchObject({ input: ODD, agent: "technical", method: "fallback", fallback: true });
    expect(page.items[0]!.low_confidence).toBe(true);
    for (const item of page.items) {
      expect(item.session_id).toMatch(/^ses_/);
      expect(Date.parse(item.at)).not.toBeNaN();
    }
  });

  it("filters by agent and by kind, and by both", async () => {
    expect((await list("?agent=billing")).items.map((i) => i.input)).toEqual([RULED[1], RULED[0]]);
    const fallback = await list("?kind=fallback");
    expect(fallback.items.map((i) => [i.input, i.agent])).toEqual([[ODD, "technical"]]);
    expect((await list("?agent=billing&kind=fallback")).items).toEqual([]);
    expect((await list("?agent=technical&kind=fallback")).items.map((i) => i.input)).toEqual([ODD]);
    expect((await list("?agent=nobody")).items).toEqual([]);
  });

  it("reads low confidence against the tenant's threshold now", async () => {
    expect((await list("?kind=low_confidence")).items.map((i) => i.input)).toEqual([ODD]);
    // At 100 the rule decisions below it count too: the same rows, read against the new threshold.
    expect((await call("PUT", "/v1/config/routing", { threshold: 100 })).status).toBe(200);
    try {
      const all = await list();
      const low = await list("?kind=low_confidence");
      expect(low.threshold).toBe(100);
      expect(low.items).toEqual(all.items.filter((i) => i.confidence < 100));
      expect(low.items.length).toBeGreaterThan(1);
      expect(low.items.every((i) => i.low_confidence)).toBe(true);
    } finally {
      expect((await call("DELETE", "/v1/config/routing")).status).toBe(200);
    }
  });

  it("pages with limit and cursor, each row once, in order", async () => {
    const all = (await list()).items;
    const first = await list("?limit=3");
    expect(first.items).toEqual(all.slice(0, 3));
    expect(first.next_cursor).not.toBeNull();
    const second = await list(`?limit=3&cursor=${first.next_cursor}`);
    expect(second.items).toEqual(all.slice(3));
    expect(second.next_cursor).toBeNull();
    // A cursor keeps its filters' meaning: billing's second page.
    const billing = await list("?agent=billing&limit=1");
    const rest = await list(`?agent=billing&limit=1&cursor=${billing.next_cursor}`);
    expect([...billing.items, ...rest.items].map((i) => i.input)).toEqual([RULED[1], RULED[0]]);
    expect(rest.next_cursor).toBeNull();
    // Anything but the cursor as handed out is refused, spellings of the same position too.
    for (const forged of forgedCursors(first.next_cursor!)) {
      const res = await call("GET", `/v1/route/history?limit=3&cursor=${forged}`);
      expect([forged, res.status, res.json.error.code]).toEqual([forged, 400, "INVALID_CURSOR"]);
    }
  });

  it("refuses a bad query with a stable code", async () => {
    for (const [query, code] of [
      ["?limit=0", "VALIDATION_FAILED"],
      ["?limit=201", "VALIDATION_FAILED"],
      ["?limit=ten", "VALIDATION_FAILED"],
      ["?kind=rare", "VALIDATION_FAILED"],
      ["?agent=Not%20A%20Name", "VALIDATION_FAILED"],
      ["?since=2026-01-01", "VALIDATION_FAILED"],
      ["?cursor=%21%21", "INVALID_CURSOR"],
      [`?cursor=${btoa("ses_x")}`, "INVALID_CURSOR"],
    ] as const) {
      const res = await call("GET", `/v1/route/history${query}`);
      expect([query, res.status, res.json.error.code]).toEqual([query, 400, code]);
    }
  });

  it("asks for a key as every tenant read does", async () => {
    const anonymous = await call("GET", "/v1/route/history", undefined, { key: null });
    expect([anonymous.status, anonymous.json.error.code]).toEqual([401, "UNAUTHORIZED"]);
  });

  it("shows a tenant its own history only", async () => {
    expect((await list("", BETA_KEY)).items).toEqual([]);
    const billing = team.find((a) => a.name === "billing")!;
    expect((await call("PUT", "/v1/agents/billing", billing, { key: BETA_KEY })).status).toBe(201);
    const betaSession = await routedSession("a refund please", BETA_KEY);
    const beta = await listed(1, BETA_KEY);
    expect(beta.items.map((i) => i.session_id)).toEqual([betaSession]);
    const alpha = await list();
    expect(alpha.items.map((i) => i.session_id)).not.toContain(betaSession);
    expect(alpha.items).toHaveLength(RULED.length + 1);
    // A cursor is a position in the caller's own history: with alpha's, beta still reads only its own rows.
    const alphaPage = await list("?limit=1");
    expect((await list(`?cursor=${alphaPage.next_cursor}`, BETA_KEY)).items.map((i) => i.session_id)).toEqual([
      betaSession,
    ]);
  });
});
