import { describe, expect, it } from "vitest";
import { MEMORY_DDL, MemoryStore } from "../../../../durable-objects/session/memory/memory-store";
import { ALL_TABLES } from "../../../../durable-objects/shared/sql";
import { meteredSql, onScratchObject } from "../../schema-shape";

/** The memory's rows: written in place, read by key and parsed with their schema. */

const T0 = Date.UTC(2026, 10, 29, 10);

describe("the memory store", () => {
  it("puts, replaces in place, lists by key and removes", async () => {
    const seen = await onScratchObject("memory-store-tests", (plain, storage) => {
      for (const statement of MEMORY_DDL) plain.exec(statement);
      const { sql, written } = meteredSql(storage);
      const store = new MemoryStore(sql, ALL_TABLES);
      store.put({ key: "order.id", value: "A-1", agent: "support" }, T0);
      store.put({ key: "customer", value: "Ada", agent: null }, T0 + 1);
      written();
      store.put({ key: "order.id", value: "A-2", agent: null }, T0 + 2);
      const replaced = written();
      const listed = store.list();
      return {
        replaced,
        listed,
        removed: store.remove("customer"),
        again: store.remove("customer"),
        after: store.list(),
      };
    });
    expect(seen.replaced).toBe(1);
    expect(seen.listed).toEqual([
      { key: "customer", value: "Ada", agent: null, updated_at: new Date(T0 + 1).toISOString() },
      { key: "order.id", value: "A-2", agent: null, updated_at: new Date(T0 + 2).toISOString() },
    ]);
    expect(seen).toMatchObject({ removed: true, again: false });
    expect(seen.after.map((f) => f.key)).toEqual(["order.id"]);
  });

  it("reads nothing, and removes nothing, where the table was never made", async () => {
    const seen = await onScratchObject("memory-store-tests", (plain) => {
      const store = new MemoryStore(plain, { has: () => false });
      return { listed: store.list(), removed: store.remove("k") };
    });
    expect(seen).toEqual({ listed: [], removed: false });
  });

  it("refuses a row its schema does not allow rather than hand it on", async () => {
    const error = await onScratchObject("memory-store-tests", (plain) => {
      for (const statement of MEMORY_DDL) plain.exec(statement);
      plain`INSERT INTO memory (key, value, agent, updated_at) VALUES ('bad key', 'v', NULL, ${T0})`;
      try {
        new MemoryStore(plain, ALL_TABLES).list();
        return null;
      } catch (e) {
        return (e as Error).name;
      }
    });
    expect(error).toBe("ZodError");
  });
});
