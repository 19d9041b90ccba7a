import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { foldSchemaChanges } from "../../../durable-objects/shared/schema-text";
import { createSql } from "../../../durable-objects/shared/sql";
import { agentStub } from "../helpers";

let counter = 0;
/** A scratch object whose storage the tests use directly. */
const scratch = () => agentStub("schema-text-tests", `scratch-${++counter}`).stub;

describe("foldSchemaChanges", () => {
  const statements = [
    "CREATE TABLE a (\n  x INTEGER NOT NULL\n)",
    "CREATE INDEX a_x ON a (x)",
    "ALTER TABLE a ADD COLUMN y TEXT NOT NULL DEFAULT 'none'",
    "ALTER TABLE elsewhere ADD COLUMN z INTEGER",
    "ALTER TABLE a ADD COLUMN w INTEGER",
  ];

  it("writes each ADD COLUMN into its CREATE TABLE; an ALTER of a table made elsewhere stays", () => {
    expect(foldSchemaChanges(statements)).toEqual([
      "CREATE TABLE a (\n  x INTEGER NOT NULL\n, y TEXT NOT NULL DEFAULT 'none', w INTEGER)",
      "CREATE INDEX a_x ON a (x)",
      "ALTER TABLE elsewhere ADD COLUMN z INTEGER",
    ]);
  });

  it("takes out the CREATE INDEX of each DROP INDEX; an index made again after its drop stays", () => {
    expect(
      foldSchemaChanges([
        "CREATE TABLE a (x INTEGER)",
        "CREATE INDEX a_x ON a (x)",
        "CREATE UNIQUE INDEX a_u ON a (x)",
        "DROP INDEX a_x",
        "DROP INDEX IF EXISTS a_u",
        "CREATE INDEX a_x ON a (x) WHERE x > 0",
        "DROP INDEX elsewhere",
      ]),
    ).toEqual(["CREATE TABLE a (x INTEGER)", "CREATE INDEX a_x ON a (x) WHERE x > 0", "DROP INDEX elsewhere"]);
  });

  it("cuts each DROP COLUMN out of its CREATE TABLE, in the middle or last, parentheses and all", () => {
    const create =
      "CREATE TABLE b (\n  id INTEGER PRIMARY KEY,\n  big TEXT CHECK (big IN ('a', 'b')),\n  n INTEGER NOT NULL\n)";
    expect(foldSchemaChanges([create, "ALTER TABLE b DROP COLUMN big"])).toEqual([
      "CREATE TABLE b (\n  id INTEGER PRIMARY KEY,\n  n INTEGER NOT NULL\n)",
    ]);
    expect(foldSchemaChanges([create, "ALTER TABLE b DROP COLUMN n"])).toEqual([
      "CREATE TABLE b (\n  id INTEGER PRIMARY KEY,\n  big TEXT CHECK (big IN ('a', 'b')))",
    ]);
    expect(() => foldSchemaChanges([create, "ALTER TABLE b DROP COLUMN missing"])).toThrow(/no column 'missing'/);
  });

  it("makes the table SQLite makes from the ALTERs, stored text included", async () => {
    const tableMadeBy = (list: string[], table = "a") =>
      runInDurableObject(scratch(), (_instance, state) => {
        const sql = createSql(state.storage);
        for (const statement of list) sql.exec(statement);
        return {
          text: sql`SELECT sql FROM sqlite_master WHERE name = ${table}`,
          columns: sql`SELECT * FROM pragma_table_info(${table})`,
        };
      });
    const own = statements.filter((s) => !s.includes("elsewhere"));
    expect(await tableMadeBy(foldSchemaChanges(own))).toEqual(await tableMadeBy(own));
    for (const dropped of ["x", "y", "w"]) {
      const dropping = [...own, `ALTER TABLE a DROP COLUMN ${dropped}`].filter(
        (s) => !s.startsWith("CREATE INDEX") || dropped !== "x",
      );
      expect(await tableMadeBy(foldSchemaChanges(dropping))).toEqual(await tableMadeBy(dropping));
    }
    const b =
      "CREATE TABLE b (\n  id INTEGER PRIMARY KEY,\n  big TEXT CHECK (big IN ('a', 'b')),\n  n INTEGER NOT NULL\n)";
    for (const dropped of ["big", "n"]) {
      const dropping = [b, `ALTER TABLE b DROP COLUMN ${dropped}`];
      expect(await tableMadeBy(foldSchemaChanges(dropping), "b")).toEqual(await tableMadeBy(dropping, "b"));
    }
  });
});
