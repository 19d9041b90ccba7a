/**
 * A small layer over a Durable Object's SQLite: a `sql` tagged template whose failures
 * name the query, and a schema-version gate (SQL `PRAGMA user_version` is refused in
 * Durable Objects, so the version lives in a one-row table).
 */

import { ifNotExists, tableMade, tableOf } from "./schema-text";

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

/** Text with a statement after a semicolon: several statements (Relay binds values, so none holds one). */
const SCRIPT = /;\s*\S/;

/** The table SQLite names in a "no such table" failure, if that is what `cause` is. */
function missingTableOf(cause: unknown): string | null {
  const match = /no such table: (?:main\.)?(\w+)/.exec(cause instanceof Error ? cause.message : String(cause));
  return match ? match[1]! : null;
}

/**
 * `missingTable`: called when a statement names a table the object does not hold; when it
 * makes that table (a table made only when first needed, see SchemaGate) and returns true,
 * the statement runs again. A statement fails as before on any other table.
 */
export function createSql(storage: DurableObjectStorage, missingTable?: (table: string) => boolean): Sql {
  const exec = <T>(query: string, ...binds: SqlValue[]): T[] => {
    const made = new Set<string>();
    for (;;) {
      try {
        return storage.sql.exec(query, ...binds).toArray() as T[];
      } catch (cause) {
        // A statement that did not compile changed nothing, so it can run again once the table is
        // there; a script may have run its first statements, so it is not.
        const table = SCRIPT.test(query) ? null : missingTableOf(cause);
        if (table === null || made.has(table) || !missingTable?.(table)) throw new SqlError(query, cause);
        made.add(table);
      }
    }
  };
  const tag = <T>(strings: TemplateStringsArray, ...values: SqlValue[]): T[] => exec<T>(strings.join("?"), ...values);
  return Object.assign(tag, { exec }) as Sql;
}

/** Which tables an object holds (SchemaGate.has): stores ask before a read that must not make one. */
export interface TablesHeld {
  has(table: string): boolean;
}

/** For stores over a schema made whole (tests, an object made before tables were made when needed). */
export const ALL_TABLES: TablesHeld = { has: () => true };

/** One schema version: the statements that take the schema from `version − 1` to `version`. */
export interface SchemaMigration {
  version: number;
  statements: readonly string[];
  /**
   * The one table these statements change, when it is one a new object makes only when
   * first needed (see SchemaGate): they run only in an object that holds it. An object
   * without it makes it later, as the newest schema has it.
   */
  table?: string;
}

const SCHEMA_TABLE = "_schema";

/** True when the object has ever been migrated, without creating anything. */
export function hasSchema(sql: Sql): boolean {
  return sql`SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = ${SCHEMA_TABLE}`.length > 0;
}

export function schemaVersion(sql: Sql): number {
  if (!hasSchema(sql)) return 0;
  return storedVersion(sql);
}

/** The version in the schema table, which must be there. */
function storedVersion(sql: Sql): number {
  return sql<{ version: number }>`SELECT version FROM _schema WHERE id = 1`[0]?.version ?? 0;
}

/** Which tables of its newest schema a new object makes at once, and which it makes only when first needed. */
export interface DeferredTables {
  /** The tables a new object makes at once; every other one waits until a statement names it. */
  eager: readonly string[];
  /** Tables made together (when any one is first needed): those a feature's code expects to find together. */
  together?: readonly (readonly string[])[];
}

/**
 * An object's schema, migrated at most once per instance. `ready()` tells whether the object
 * holds its tables without creating them, so reads of an unknown object create nothing.
 *
 * With `deferred`, a new object makes only the eager tables of `current`; each other table
 * of `current` (with its indexes, and the tables made together with it) is made when a
 * statement first names it: pass `create` to `createSql` as its `missingTable`. A table's
 * first use then pays for it, and an object that never uses it never does; a read that
 * must not make a table asks `has` first. An object made before, holding every table, is
 * migrated as it always was; a later migration of a deferred table names it in
 * `SchemaMigration.table`.
 */
export class SchemaGate {
  private migrated = false;
  /** Set while migrating: a missing table there is a broken migration, not one to make. */
  private migrating = false;
  /** The object's tables as this instance last read or made them (undefined: not read). */
  private tables: Set<string> | undefined = undefined;
  /** Each deferred table, with the tables made with it and the statements that make them and their indexes. */
  private readonly deferred: ReadonlyMap<string, DeferredGroup>;
  /** What a new object makes at once: `current`, less the deferred tables. */
  private readonly initial: SchemaMigration | undefined;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
    private readonly migrations: readonly SchemaMigration[],
    /** The newest schema made directly, for an object that has none yet. */
    current?: SchemaMigration,
    /** With `current`: the tables a new object makes only when first needed (unset: none). */
    deferred?: DeferredTables,
  ) {
    const split = current && deferred ? splitSchema(current, deferred) : undefined;
    this.initial = split?.initial ?? current;
    this.deferred = split?.deferred ?? new Map();
  }

  /** Creates or upgrades the schema; true when it made a new object's (its tables then hold no rows). */
  ensure(): boolean {
    if (this.migrated) return false;
    const fresh = !this.known().has(SCHEMA_TABLE);
    this.migrating = true;
    try {
      const from = fresh ? 0 : storedVersion(this.sql);
      const to = this.storage.transactionSync(() => applyMigrations(this.sql, from, this.migrations, this.initial));
      if (fresh && this.initial)
        this.tables = new Set([SCHEMA_TABLE, ...this.initial.statements.flatMap((s) => tableMade(s) ?? [])]);
      else if (to !== from) this.tables = undefined;
    } finally {
      this.migrating = false;
    }
    this.migrated = true;
    return fresh;
  }

  /** True when the object has its tables (upgrading them if they are old). */
  ready(): boolean {
    if (this.migrated) return true;
    if (!this.known().has(SCHEMA_TABLE)) return false;
    this.ensure();
    return true;
  }

  /**
   * False when `table` is one made when first needed and the object does not hold it yet:
   * a read can answer "nothing" without making it. Ask once `ready()` is true.
   */
  has(table: string): boolean {
    return !this.deferred.has(table) || this.known().has(table);
  }

  /**
   * Makes `table` and its indexes (and the tables made with it), when it is deferred and
   * the object has its schema; true when it did (createSql's `missingTable`). It joins the caller's
   * transaction, if any: when that rolls back, call `forgetTables`.
   */
  create(table: string): boolean {
    const made = this.deferred.get(table);
    if (!made || this.migrating || !this.ready()) return false;
    this.sql.exec(made.statements.join(";\n"));
    for (const name of made.tables) this.known().add(name);
    return true;
  }

  /**
   * Makes those of `tables` that are deferred and not held yet (with their indexes and the
   * tables made with them) in one script, for a write known to need them all: one call into
   * SQLite, where letting each statement make its own costs a failed statement, a script and
   * the statement again per table. Joins the caller's transaction, like `create`.
   */
  make(tables: readonly string[]): void {
    if (this.migrating || !this.ready()) return;
    const groups = new Set<DeferredGroup>();
    for (const table of tables) {
      const group = this.deferred.get(table);
      if (group && !this.known().has(table)) groups.add(group);
    }
    if (groups.size === 0) return;
    this.sql.exec([...groups].flatMap((group) => group.statements).join(";\n"));
    for (const group of groups) for (const name of group.tables) this.known().add(name);
  }

  /** After a rolled-back transaction: tables it made are gone again. */
  forgetTables(): void {
    this.tables = undefined;
  }

  /** After the object's storage was wiped. */
  forget(): void {
    this.migrated = false;
    this.tables = undefined;
  }

  private known(): Set<string> {
    this.tables ??= new Set(
      this.sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table'`.map((row) => row.name),
    );
    return this.tables;
  }
}

/** Deferred tables made together, and the statements that make them and their indexes (harmless to repeat). */
interface DeferredGroup {
  tables: readonly string[];
  statements: readonly string[];
}

/** A schema split into what a new object makes at once and its deferred tables. */
interface SplitSchema {
  initial: SchemaMigration;
  deferred: ReadonlyMap<string, DeferredGroup>;
}

/** Split once per schema, not once per object instance (each instance builds a gate). */
const splits = new WeakMap<SchemaMigration, WeakMap<DeferredTables, SplitSchema>>();

function splitSchema(current: SchemaMigration, deferred: DeferredTables): SplitSchema {
  const known = splits.get(current)?.get(deferred);
  if (known) return known;
  const now: string[] = [];
  const groups = new Map<string, { tables: string[]; statements: string[] }>();
  for (const statement of current.statements) {
    const table = tableOf(statement);
    if (table === null || deferred.eager.includes(table)) {
      now.push(statement);
      continue;
    }
    const together = deferred.together?.find((tables) => tables.includes(table)) ?? [table];
    const group = groups.get(together[0]!) ?? { tables: [...together], statements: [] };
    group.statements.push(ifNotExists(statement));
    for (const name of together) groups.set(name, group);
  }
  const split = { initial: { version: current.version, statements: now }, deferred: groups };
  if (!splits.has(current)) splits.set(current, new WeakMap());
  splits.get(current)!.set(deferred, split);
  return split;
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
  return storage.transactionSync(() => applyMigrations(sql, schemaVersion(sql), migrations, current));
}

/** `migrate` from a known version, in the caller's transaction. Writes nothing when there is nothing to do. */
function applyMigrations(
  sql: Sql,
  from: number,
  migrations: readonly SchemaMigration[],
  current?: SchemaMigration,
): number {
  let version = from;
  // Every statement in one script where possible: one call into SQLite rather than one per statement.
  const steps: string[] = [];
  const run = () => {
    if (steps.length > 0) sql.exec(steps.splice(0).join(";\n"));
  };
  if (version === 0) {
    steps.push(
      `CREATE TABLE IF NOT EXISTS ${SCHEMA_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`,
    );
    if (current) {
      steps.push(...current.statements);
      version = current.version;
    }
  }
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (migration.version <= version) continue;
    if (migration.table === undefined) steps.push(...migration.statements);
    else {
      // The steps before it may make the table (an old object's earlier versions).
      run();
      const held = sql`SELECT 1 AS held FROM sqlite_master WHERE type = 'table' AND name = ${migration.table}`;
      if (held.length > 0) steps.push(...migration.statements);
    }
    version = migration.version;
  }
  if (version === from) return version;
  // In the same script: the version is a number this code holds, not data.
  steps.push(
    `INSERT INTO _schema (id, version) VALUES (1, ${Math.trunc(version)}) ON CONFLICT (id) DO UPDATE SET version = excluded.version`,
  );
  run();
  return version;
}
