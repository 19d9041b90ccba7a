import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SESSION_MIGRATIONS, SESSION_SCHEMA } from "../../../durable-objects/session/session-store";
import { createSql, migrate, type SchemaMigration, schemaVersion } from "../../../durable-objects/shared/sql";
import { agentStub } from "../helpers";

/**
 * A new session object is made with SESSION_SCHEMA in one step; an older one is migrated
 * version by version. Both must end with the same tables, columns, constraints and indexes.
 */

let counter = 0;

interface Shape {
  version: number;
  objects: { type: string; name: string; sql: string }[];
  columns: Record<string, unknown[]>;
}

/** The schema an empty scratch object ends with after `steps` (each a migrate call). */
async function schemaAfter(
  steps: { migrations: readonly SchemaMigration[]; current?: SchemaMigration }[],
): Promise<Shape> {
  return runInDurableObject(agentStub("schema-tests", `scratch-${++counter}`).stub, (_instance, state) => {
    const sql = createSql(state.storage);
    for (const step of steps) migrate(state.storage, sql, step.migrations, step.current);
    // SQLite keeps each table's text as written, edited by ALTER: compare it without layout or quoting.
    const normal = (text: string) =>
      text
        .replace(/"/g, "")
        .replace(/\s+/g, " ")
        .replace(/\s*([(),])\s*/g, "$1")
        .trim();
    const objects = sql<{ type: string; name: string; sql: string }>`SELECT type, name, sql FROM sqlite_master
      WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND name <> '_schema' ORDER BY type, name`.map((o) => ({
      ...o,
      sql: normal(o.sql),
    }));
    const columns = Object.fromEntries(
      objects
        .filter((o) => o.type === "table")
        .map((t) => [t.name, sql`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(${t.name})`]),
    );
    return { version: schemaVersion(sql), objects, columns };
  });
}

describe("the session object's schema", () => {
  it("made new in one step equals every migration applied in turn", async () => {
    const stepwise = await schemaAfter([{ migrations: SESSION_MIGRATIONS }]);
    const direct = await schemaAfter([{ migrations: SESSION_MIGRATIONS, current: SESSION_SCHEMA }]);
    expect(direct).toEqual(stepwise);
    expect(direct.version).toBe(SESSION_MIGRATIONS.at(-1)!.version);
    expect(Object.keys(direct.columns)).toContain("runs");
  });

  it("an object made by an older version is migrated from where it is, not made again", async () => {
    const stepwise = await schemaAfter([{ migrations: SESSION_MIGRATIONS }]);
    const old = SESSION_MIGRATIONS.filter((m) => m.version <= 3);
    const upgraded = await schemaAfter([
      { migrations: old },
      { migrations: SESSION_MIGRATIONS, current: SESSION_SCHEMA },
    ]);
    expect(upgraded).toEqual(stepwise);
  });

  it("has fewer statements than the migrations it stands for", () => {
    expect(SESSION_SCHEMA.statements.length).toBeLessThan(SESSION_MIGRATIONS.flatMap((m) => m.statements).length);
  });
});
