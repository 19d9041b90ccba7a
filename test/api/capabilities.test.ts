import { beforeAll, describe, expect, it } from "vitest";
import { encodeCursor } from "../../src/api/cursor";
import { expectForgedCursorsRefused } from "./forged-cursors";
import { loadAgents } from "./handoff-fixtures";
import { BETA_KEY, call } from "./helpers";

beforeAll(loadAgents);

describe("GET /v1/capabilities/match", () => {
  it("ranks the tenant's agents by proficiency-weighted score, with matched and missing", async () => {
    const res = await call("GET", "/v1/capabilities/match?capabilities=refunds,debugging");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ required: ["refunds", "debugging"], exclude: [], min_score: 0 });
    expect(
      res.json.items.map((m: { agent: string; score: number; matched: string[]; missing: string[] }) => [
        m.agent,
        m.score,
        m.matched,
        m.missing,
      ]),
    ).toEqual([
      ["technical", 0.55, ["refunds", "debugging"], []],
      ["billing", 0.45, ["refunds"], ["debugging"]],
    ]);
    expect(res.json.items[0].hits[1]).toMatchObject({
      required: "debugging",
      capability: "debugging",
      via: "name",
      weight: 0.8,
    });
  });

  it("matches tags at a lower weight, honours exclude and min_score", async () => {
    const tags = await call("GET", "/v1/capabilities/match?capabilities=payments");
    expect(tags.json.items).toEqual([
      expect.objectContaining({ agent: "billing", score: 0.64, matched: ["payments"] }),
    ]);
    const excluded = await call("GET", "/v1/capabilities/match?capabilities=refunds&exclude=billing");
    expect(excluded.json.items.map((m: { agent: string }) => m.agent)).toEqual(["technical"]);
    const strict = await call("GET", "/v1/capabilities/match?capabilities=refunds&min_score=0.5");
    expect(strict.json.items.map((m: { agent: string }) => m.agent)).toEqual(["billing"]);
    const none = await call("GET", "/v1/capabilities/match?capabilities=astrophysics");
    expect(none.json.items).toEqual([]);
  });

  it("is scoped to the tenant", async () => {
    const res = await call("GET", "/v1/capabilities/match?capabilities=refunds", undefined, { key: BETA_KEY });
    expect(res.json.items).toEqual([]);
  });

  it("pages the ranking with limit and an opaque cursor", async () => {
    const whole = await call("GET", "/v1/capabilities/match?capabilities=refunds,debugging");
    expect(whole.json.next_cursor).toBeNull();
    const first = await call("GET", "/v1/capabilities/match?capabilities=refunds,debugging&limit=1");
    expect(first.json.items.map((m: { agent: string }) => m.agent)).toEqual(["technical"]);
    expect(first.json.next_cursor).toEqual(expect.any(String));
    const second = await call(
      "GET",
      `/v1/capabilities/match?capabilities=refunds,debugging&limit=1&cursor=${first.json.next_cursor}`,
    );
    expect(second.json).toMatchObject({ required: ["refunds", "debugging"], next_cursor: null });
    expect([...first.json.items, ...second.json.items]).toEqual(whole.json.items);
    // An offset must be written as this list writes it: no sign, exponent or leading zero.
    for (const position of ["not-a-number", "-1", "1e0", "01", " 1"]) {
      const bad = await call("GET", `/v1/capabilities/match?capabilities=refunds&cursor=${encodeCursor(position)}`);
      expect(bad.status, position).toBe(400);
      expect(bad.json.error.code).toBe("INVALID_CURSOR");
    }
    await expectForgedCursorsRefused(
      "/v1/capabilities/match?capabilities=refunds,debugging&limit=1",
      first.json.next_cursor,
    );
  });

  it("refuses a missing capability list and a score out of range", async () => {
    expect((await call("GET", "/v1/capabilities/match")).status).toBe(400);
    expect((await call("GET", "/v1/capabilities/match?capabilities=,,")).status).toBe(400);
    expect((await call("GET", "/v1/capabilities/match?capabilities=a&min_score=2")).status).toBe(400);
    expect((await call("GET", "/v1/capabilities/match?capabilities=a&bogus=1")).status).toBe(400);
  });
});
