import { runInDurableObject } from "cloudflare:test";
import { createSql, type Sql, type SqlValue, schemaVersion } from "../../durable-objects/shared/sql";
import { agentStub } from "./helpers";

/** What an object's schema is: its version, tables and indexes (their text), and each table's columns. */
export interface Shape {
  version: number;
  objects: { type: string; name: string; sql: string }[];
  columns: Record<string, unknown[]>;
}

/**
 * The object's schema as SQLite holds it. SQLite keeps each table's text as written, edited
 * by ALTER: compared here without layout or quoting.
 */
export function shapeOf(sql: Sql): Shape {
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
}

/** The object's tables made `WITHOUT ROWID`, by name. */
export function rowlessTables(sql: Sql): string[] {
  return sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%WITHOUT ROWID'`
    .map((r) => r.name)
    .sort();
}

let scratchCount = 0;

/**
 * `fn` over an empty scratch object's storage (an AgentDO never called: any SQLite-backed
 * class will do, and nothing of it runs), under `tenant` so each file's objects are its own.
 */
export function onScratchObject<R>(tenant: string, fn: (sql: Sql, storage: DurableObjectStorage) => R): Promise<R> {
  return runInDurableObject(agentStub(tenant, `scratch-${++scratchCount}`).stub, (_instance, state) =>
    fn(createSql(state.storage), state.storage),
  );
}

/**
 * A Sql over `storage` that counts the rows its statements wrote (each cursor's
 * `rowsWritten`, as billed); `written()` answers the count since it was last asked.
 */
export function meteredSql(storage: DurableObjectStorage): { sql: Sql; written: () => number } {
  let count = 0;
  const exec = <T>(query: string, ...binds: SqlValue[]): T[] => {
    const cursor = storage.sql.exec(query, ...binds);
    const rows = cursor.toArray() as T[];
    count += cursor.rowsWritten;
    return rows;
  };
  const sql = Object.assign(
    <T>(strings: TemplateStringsArray, ...values: SqlValue[]) => exec<T>(strings.join("?"), ...values),
    { exec },
  ) as Sql;
  const written = () => {
    const n = count;
    count = 0;
    return n;
  };
  return { sql, written };
}
