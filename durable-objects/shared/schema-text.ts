/**
 * Schema statements as text: what a migration list leaves, folded into the `CREATE`
 * statements a new object runs in one step (columns added or dropped, indexes dropped,
 * tables made without a rowid or AUTOINCREMENT), a table made again to change what ALTER
 * cannot, and the table a statement makes or serves. Pure: no storage here (sql.ts runs them).
 */

/**
 * `statements` with each `ALTER TABLE t ADD COLUMN c` and `ALTER TABLE t DROP COLUMN c`
 * written into t's own `CREATE TABLE` earlier in the list, as SQLite itself rewrites the
 * stored table text (`, c` before the closing parenthesis; the column's definition cut
 * out), and each `DROP INDEX i` taking out i's `CREATE INDEX` earlier in the list. For a
 * new object's schema: an ALTER makes SQLite reload the schema it has just parsed (a DROP
 * also rewrites the table), so folded changes make the same tables for less.
 */
export function foldSchemaChanges(statements: readonly string[]): string[] {
  const out: string[] = [];
  for (const statement of statements) {
    const dropped = /^\s*DROP INDEX (?:IF EXISTS )?(\w+)\s*$/.exec(statement)?.[1];
    const made = dropped ? out.findIndex((s) => new RegExp(`^\\s*CREATE (?:UNIQUE )?INDEX ${dropped} `).test(s)) : -1;
    if (made >= 0) {
      out.splice(made, 1);
      continue;
    }
    const altered = /^\s*ALTER TABLE (\w+) (ADD|DROP) COLUMN (.+?)\s*$/s.exec(statement);
    const at = altered ? out.findIndex((s) => new RegExp(`^\\s*CREATE TABLE ${altered[1]} \\(`).test(s)) : -1;
    if (!altered || at < 0) out.push(statement);
    else if (altered[2] === "ADD") out[at] = out[at]!.replace(/\)\s*$/, `, ${altered[3]})`);
    else out[at] = withoutColumn(out[at]!, altered[3]!);
  }
  return out;
}

/** The table a `CREATE TABLE` statement makes (not an index); null for any other statement. */
const createdTable = (statement: string): string | null => /^\s*CREATE TABLE (\w+) \(/.exec(statement)?.[1] ?? null;

/**
 * `statements` with each of `tables` made `WITHOUT ROWID`. A table keyed by a text id keeps
 * its rows in a b-tree of its own and, beside it, an index of the key; without a rowid the
 * rows are kept in the key's b-tree, so every row inserted writes one b-tree row fewer.
 */
export function withoutRowid(statements: readonly string[], tables: readonly string[]): string[] {
  return statements.map((statement) => {
    const table = createdTable(statement);
    return table !== null && tables.includes(table) ? `${statement.trimEnd()} WITHOUT ROWID` : statement;
  });
}

/**
 * `statements` with each of `tables` made without AUTOINCREMENT, which writes a row of
 * `sqlite_sequence` with every insert. Only for a table whose rows are never deleted alone
 * (they go with the whole object): SQLite's next rowid, the largest plus one, then never
 * reuses a key anyway.
 */
export function withoutAutoincrement(statements: readonly string[], tables: readonly string[]): string[] {
  return statements.map((statement) => {
    const table = createdTable(statement);
    return table !== null && tables.includes(table) ? statement.replace(" AUTOINCREMENT", "") : statement;
  });
}

/**
 * The statements that make `table` again as `schema` has it, keeping its rows, for a change
 * ALTER cannot make (such as `WITHOUT ROWID`): the old table set aside under `aside`, the new
 * one made, the rows copied, the old one dropped with its indexes, the indexes made again.
 * The table's columns must be the same, in the same order.
 */
export function rebuildTable(schema: readonly string[], table: string, aside: string): string[] {
  const create = schema.find((statement) => createdTable(statement) === table);
  if (create === undefined) throw new Error(`the schema makes no table ${table}`);
  const indexes = schema.filter((statement) => createdTable(statement) === null && tableOf(statement) === table);
  return [
    `ALTER TABLE ${table} RENAME TO ${aside}`,
    create,
    `INSERT INTO ${table} SELECT * FROM ${aside}`,
    `DROP TABLE ${aside}`,
    ...indexes,
  ];
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

/** The table a `CREATE TABLE` or `CREATE INDEX … ON` statement makes or serves; null for any other statement. */
export function tableOf(statement: string): string | null {
  return /^\s*CREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX\s+\w+\s+ON)\s+(\w+)/i.exec(statement)?.[1] ?? null;
}

/** A `CREATE TABLE` or `CREATE INDEX` statement that does nothing when its table or index is there. */
export const ifNotExists = (statement: string): string =>
  statement.replace(/^(\s*CREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX))\s+(?!IF NOT EXISTS)/i, "$1 IF NOT EXISTS ");

/** The table a `CREATE TABLE` statement makes; null for any other statement. */
export function tableMade(statement: string): string | null {
  return /^\s*CREATE\s+TABLE\s+(?:IF NOT EXISTS\s+)?(\w+)/i.exec(statement)?.[1] ?? null;
}
