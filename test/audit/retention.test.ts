import { describe, expect, it } from "vitest";
import { ulidFloor } from "../../src/audit/d1-store";
import {
  archiveKey,
  dayOf,
  firstKeptDay,
  idTime,
  lineId,
  mergeById,
  retentionDays,
  toLine,
} from "../../src/audit/retention";

async function* from<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe("retention policy", () => {
  it("reads AUDIT_RETENTION_DAYS as whole days; unset, empty, zero or not a number keeps everything", () => {
    expect([undefined, "", " ", "0", "-3", "1.5", "ninety"].map(retentionDays)).toEqual([
      null,
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
    expect(retentionDays("90")).toBe(90);
  });

  it("keeps the day `days` days back and everything after; older days go", () => {
    const now = Date.parse("2026-06-01T00:30:00Z");
    expect(firstKeptDay(now, 30)).toBe("2026-05-02");
    expect(firstKeptDay(now, 1)).toBe("2026-05-31");
    expect(dayOf(Date.parse("2026-05-01T23:59:59.999Z"))).toBe("2026-05-01");
  });

  it("a record's day is its id's time, a ULID's first ten characters", () => {
    for (const ms of [0, Date.parse("2026-05-01T23:59:59.999Z"), Date.parse("2099-12-31T00:00:00Z")])
      expect(idTime(ulidFloor(ms))).toBe(ms);
    expect(archiveKey("alpha", "2026-05-01")).toBe("audit/alpha/2026-05-01.ndjson");
  });

  it("merges two id-ordered sequences into one, each id once, the archived line kept", async () => {
    const line = (id: string, source: string) =>
      toLine({
        id,
        at: "2026-01-01T00:00:00.000Z",
        tenant: "t",
        session_id: null,
        handoff_id: null,
        action: "a.b",
        agent: null,
        actor: "x",
        actor_type: "user",
        details: { source },
      });
    const archived = ["A", "C", "E"].map((id) => line(id, "archive"));
    const kept = ["B", "C", "F"].map((id) => ({ id, line: line(id, "d1") }));
    const merged = await all(mergeById(from(archived), from(kept)));
    expect(merged.map(lineId)).toEqual(["A", "B", "C", "E", "F"]);
    expect(JSON.parse(merged[2]!).details.source).toBe("archive");
    expect(await all(mergeById(from([]), from(kept)))).toEqual(kept.map((k) => k.line));
    expect(await all(mergeById(from(archived), from([])))).toEqual(archived);
  });
});
