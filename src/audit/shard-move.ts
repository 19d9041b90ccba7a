import type { MoveCursor } from "./shard-assignment";

/**
 * The rows a move copies and deletes (docs/operations.md, Shards): every table of a shard that
 * holds a tenant's data, each walked in the order of its key within the tenant. Inserts skip a
 * row the target holds already, so a copy cut short and done again doubles nothing.
 */

interface ShardTable {
  name: string;
  /** The columns after `tenant` that identify a row. */
  keys: readonly string[];
}

export const SHARD_TABLES: readonly ShardTable[] = [
  { name: "audit_log", keys: ["id"] },
  { name: "handoffs", keys: ["id"] },
  { name: "sessions", keys: ["id"] },
  { name: "inbox_items", keys: ["id"] },
  { name: "session_summaries", keys: ["session_id"] },
  { name: "webhook_rejections", keys: ["source", "reason"] },
  { name: "webhook_rejection_samples", keys: ["source"] },
  { name: "audit_archives", keys: ["day"] },
];

/** Rows a step reads and writes at most per D1 call. */
export const MOVE_PAGE = 200;

type Row = Record<string, string | number | null>;

const keyList = (t: ShardTable) => t.keys.join(", ");

async function page(db: D1Database, tenant: string, table: ShardTable, after: MoveCursor["after"]): Promise<Row[]> {
  const marks = table.keys.map((_, i) => `?${i + 2}`).join(", ");
  const from = after === null ? "" : `AND (${keyList(table)}) > (${marks})`;
  const { results } = await db
    .prepare(`SELECT * FROM ${table.name} WHERE tenant = ?1 ${from} ORDER BY ${keyList(table)} LIMIT ${MOVE_PAGE}`)
    .bind(tenant, ...(after ?? []))
    .all<Row>();
  return results;
}

function insert(db: D1Database, table: ShardTable, row: Row): D1PreparedStatement {
  const columns = Object.keys(row);
  return db
    .prepare(
      `INSERT INTO ${table.name} (${columns.join(", ")}) VALUES (${columns.map((_, i) => `?${i + 1}`).join(", ")})
       ON CONFLICT DO NOTHING`,
    )
    .bind(...columns.map((c) => row[c] ?? null));
}

/**
 * Copies the next page of the tenant's rows from `source` to `target`: the cursor after it,
 * or null when every table is copied.
 */
export async function copyPage(
  source: D1Database,
  target: D1Database,
  tenant: string,
  cursor: MoveCursor,
): Promise<MoveCursor | null> {
  for (let at = cursor; at.table < SHARD_TABLES.length; at = { table: at.table + 1, after: null }) {
    const table = SHARD_TABLES[at.table]!;
    const rows = await page(source, tenant, table, at.after);
    if (rows.length === 0) continue;
    await target.batch(rows.map((row) => insert(target, table, row)));
    const last = rows.at(-1)!;
    return { table: at.table, after: table.keys.map((k) => last[k] ?? null) as (string | number)[] };
  }
  return null;
}

/** Deletes the next page of the tenant's rows from `db`: the table still to do, or null when it holds none. */
export async function deletePage(db: D1Database, tenant: string, table: number): Promise<number | null> {
  for (let at = table; at < SHARD_TABLES.length; at++) {
    const table = SHARD_TABLES[at]!;
    // By key, not rowid: audit_log is a table WITHOUT ROWID (migration 0014).
    const keys = `(tenant, ${keyList(table)})`;
    const { meta } = await db
      .prepare(
        `DELETE FROM ${table.name} WHERE ${keys} IN (SELECT ${keys.slice(1, -1)} FROM ${table.name} WHERE tenant = ?1 LIMIT ${MOVE_PAGE})`,
      )
      .bind(tenant)
      .run();
    if (meta.changes > 0) return at;
  }
  return null;
}

/** The tenant's rows in `db`, by table (the operator's check that a move left nothing behind). */
export async function tenantRowCounts(db: D1Database, tenant: string): Promise<Record<string, number>> {
  const results = await db.batch<{ n: number }>(
    SHARD_TABLES.map((t) => db.prepare(`SELECT COUNT(*) AS n FROM ${t.name} WHERE tenant = ?1`).bind(tenant)),
  );
  return Object.fromEntries(SHARD_TABLES.map((t, i) => [t.name, results[i]?.results[0]?.n ?? 0]));
}
