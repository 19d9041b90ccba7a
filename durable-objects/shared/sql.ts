/**
 * A small layer over a Durable Object's SQLite: a `sql` tagged template whose failures
 * name the query, and a schema-version gate (SQL `PRAGMA user_version` is refused in
 * Durable Objects, so the version lives in a one-row table).
 */

export type SqlValue = string | number | null | ArrayBuffer;

/** An SQL failure, carrying the statement that failed (binds are left out: they may be user data). */
export class SqlError extends Error {
  override readonly name = "SqlError";
  constructor(
    readonly query: string,
    cause: unknown,
  ) {
    super(
      `${cause instanceof Error ? cause.message : String(cause)} — in: ${query.replace(/\s+/g, " ").trim().slice(0, 300)}`,
      {
        cause,
      },
    );
  }
}

/** Tagged-template SQL over `ctx.storage.sql`: values become bound parameters, never text. */
export interface Sql {
  <T = Record<string, SqlStorageValue>>(strings: TemplateStringsArray, ...values: SqlValue[]): T[];
  /** Runs a statement given as text with positional binds (for DDL and dynamic IN lists). */
  exec<T = Record<string, SqlStorageValue>>(query: string, ...binds: SqlValue[]): T[];
}

export function createSql(storage: DurableObjectStorage): Sql {
  const exec = <T>(query: string, ...binds: SqlValue[]): T[] => {
    try {
      return storage.sql.exec(query, ...binds).toArray() as T[];
    } catch (cause) {
      throw new SqlError(query, cause);
    }
  };
  const tag = <T>(strings: TemplateStringsArray, ...values: SqlValue[]): T[] => exec<T>(strings.join("?"), ...values);
  return Object.assign(tag, { exec }) as Sql;
}

/** One schema version: the statements that take the schema from `version − 1` to `version`. */
export interface SchemaMigration {
  version: number;
  statements: readonly string[];
}

const SCHEMA_TABLE = "_schema";

/**
 * `statements` with each `ALTER TABLE t ADD COLUMN c` and `ALTER TABLE t DROP COLUMN c`
 * written into t's own `CREATE TABLE` earlier in the list, as SQLite itself rewrites the
 * stored table text (`, c` before the closing parenthesis; the column's definition cut
 * out). For a new object's schema: an ALTER makes SQLite reload the schema it has just
 * parsed (a DROP also rewrites the table), so folded columns make the same tables for less.
 */
export function foldAlteredColumns(statements: readonly string[]): string[] {
  const out: string[] = [];
  for (const statement of statements) {
    const altered = /^\s*ALTER TABLE (\w+) (ADD|DROP) COLUMN (.+?)\s*$/s.exec(statement);
    const at = altered ? out.findIndex((s) => new RegExp(`^\\s*CREATE TABLE ${altered[1]} \\(`).test(s)) : -1;
    if (!altered || at < 0) out.push(statement);
    else if (altered[2] === "ADD") out[at] = out[at]!.replace(/\)\s*$/, `, ${altered[3]})`);
    else out[at] = withoutColumn(out[at]!, altered[3]!);
  }
  return out;
}

/** A `CREATE TABLE` text without one column's definition (up to the next column, or the comma before it when last). */
function withoutColumn(create: string, column: string): string {
  const open = create.indexOf("(");
  let depth = 0;
  let start = open + 1;
  for (let i = open + 1; i <= create.length; i++) {
    const c = create[i];
    if (c === "(") depth++;
    else if (c === ")" && depth > 0) depth--;
    else if ((c === "," && depth === 0) || (c === ")" && depth === 0) || i === create.length) {
      const definition = create.slice(start, i);
      if (definition.trim().split(/\s+/)[0] === column) {
        // As SQLite does: from the name to the next column's name; the last, from the comma before it.
        const name = start + (definition.length - definition.trimStart().length);
        const next = i + 1 + (create.slice(i + 1).length - create.slice(i + 1).trimStart().length);
        return c === ","
          ? create.slice(0, name) + create.slice(next)
          : create.slice(0, create.lastIndexOf(",", start)) + create.slice(i);
      }
      if (c === ")") break;
      start = i + 1;
    }
  }
  throw new Error(`no column '${column}' to drop in: ${create.slice(0, 60)}…`);
}

/** True when the object has ever been migrated, without creating anything. */
export function hasSchema(sql: Sql): boolean {
  return sql`SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = ${SCHEMA_TABLE}`.length > 0;
}

export function schemaVersion(sql: Sql): number {
  if (!hasSchema(sql)) return 0;
  return sql<{ version: number }>`SELECT version FROM _schema WHERE id = 1`[0]?.version ?? 0;
}

/**
 * An object's schema, migrated at most once per instance. `ready()` tells whether the object
 * holds its tables without creating them, so reads of an unknown object create nothing.
 */
export class SchemaGate {
  private migrated = false;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
    private readonly migrations: readonly SchemaMigration[],
    /** The newest schema made directly, for an object that has none yet. */
    private readonly current?: SchemaMigration,
  ) {}

  /** Creates or upgrades the schema. */
  ensure(): void {
    if (this.migrated) return;
    migrate(this.storage, this.sql, this.migrations, this.current);
    this.migrated = true;
  }

  /** True when the object has its tables (upgrading them if they are old). */
  ready(): boolean {
    if (this.migrated) return true;
    if (!hasSchema(this.sql)) return false;
    this.ensure();
    return true;
  }

  /** After the object's storage was wiped. */
  forget(): void {
    this.migrated = false;
  }
}

/**
 * Applies every migration newer than the stored version, in one transaction, and records
 * the new version. A new object (no schema yet) gets `current` instead, when given: the
 * newest schema in one step. Call once per instance; calling again is a cheap no-op.
 */
export function migrate(
  storage: DurableObjectStorage,
  sql: Sql,
  migrations: readonly SchemaMigration[],
  current?: SchemaMigration,
): number {
  return storage.transactionSync(() => {
    let version = schemaVersion(sql);
    // Every statement in one script: one call into SQLite rather than one per statement.
    const steps: string[] = [
      `CREATE TABLE IF NOT EXISTS ${SCHEMA_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`,
    ];
    if (version === 0 && current) {
      steps.push(...current.statements);
      version = current.version;
    }
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (migration.version <= version) continue;
      steps.push(...migration.statements);
      version = migration.version;
    }
    sql.exec(steps.join(";\n"));
    sql`INSERT INTO _schema (id, version) VALUES (1, ${version}) ON CONFLICT (id) DO UPDATE SET version = excluded.version`;
    return version;
  });
}
