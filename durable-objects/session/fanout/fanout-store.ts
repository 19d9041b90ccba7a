import { Fanout } from "../../../src/schemas/collaboration";
import { ALL_TABLES, type Sql, type TablesHeld } from "../../shared/sql";

/** The session's supervisor fan-outs (schema v9): one row per fan-out, its record parsed on read. */

export const FANOUT_FORMAT = 1;

export const FANOUT_DDL = [
  `CREATE TABLE fanouts (
     id      TEXT PRIMARY KEY,
     state   TEXT NOT NULL,
     record  TEXT NOT NULL,
     format  INTEGER NOT NULL DEFAULT ${FANOUT_FORMAT}
   )`,
] as const;

export class FanoutStore {
  constructor(
    private readonly sql: Sql,
    /** A session that never fanned out holds no fan-out table: `load` answers "none". */
    private readonly tables: TablesHeld = ALL_TABLES,
  ) {}

  load(id: string): Fanout | null {
    if (!this.tables.has("fanouts")) return null;
    const row = this.sql<{ record: string; format: number }>`SELECT record, format FROM fanouts WHERE id = ${id}`[0];
    if (!row) return null;
    if (row.format !== FANOUT_FORMAT) throw new Error(`fan-out format ${row.format} is not ${FANOUT_FORMAT}`);
    return Fanout.parse(JSON.parse(row.record));
  }

  /** Inside the caller's transaction. */
  save(fanout: Fanout): void {
    this.sql`INSERT INTO fanouts (id, state, record) VALUES (${fanout.id}, ${fanout.state}, ${JSON.stringify(fanout)})
             ON CONFLICT (id) DO UPDATE SET state = excluded.state, record = excluded.record`;
  }
}
