import { INBOX_STATUSES, InboxItem, InboxKind, type InboxStatus } from "../../src/schemas/inbox";
import { ALL_TABLES, type Sql, type TablesHeld } from "../shared/sql";

/**
 * The session's part of the human inbox (schema v4): escalations of handoffs, human
 * agents' turns and agents' escalations, each with its status and, once answered, the
 * reply. Synchronous SQL, so it joins the caller's transaction; rows are parsed on read.
 */

const list = (values: readonly string[]) => `(${values.map((v) => `'${v}'`).join(", ")})`;

/** The inbox table under `name`, with the kinds there are now. */
function inboxTable(name: string): string {
  return `CREATE TABLE ${name} (
     id            TEXT PRIMARY KEY,
     kind          TEXT NOT NULL CHECK (kind IN ${list(InboxKind.options)}),
     status        TEXT NOT NULL CHECK (status IN ${list(INBOX_STATUSES)}),
     item          TEXT NOT NULL,
     expires_at    INTEGER,
     format        INTEGER NOT NULL DEFAULT 1
   )`;
}

const INBOX_OPEN_INDEX = `CREATE INDEX inbox_open ON inbox_items (status) WHERE status = 'open'`;

/** The inbox as it is now, for a new object (see SESSION_SCHEMA). */
export const INBOX_SCHEMA = [inboxTable("inbox_items"), INBOX_OPEN_INDEX] as const;

/** v4: the inbox gains kinds, a status, the run it pauses, an expiry and the answer; v2's escalations move over. */
export const INBOX_DDL = [
  inboxTable("inbox_items"),
  INBOX_OPEN_INDEX,
  `INSERT INTO inbox_items (id, kind, status, item)
     SELECT id, kind, 'open', json_object(
       'id', id, 'kind', kind, 'status', 'open', 'session_id', (SELECT session_id FROM session WHERE id = 1),
       'agent', source_agent, 'run_id', NULL, 'handoff_id', handoff_id, 'source_agent', source_agent,
       'target_agent', target_agent, 'reason', reason, 'details', json(details),
       'created_at', strftime('%Y-%m-%dT%H:%M:%fZ', created_at / 1000.0, 'unixepoch'),
       'expires_at', NULL, 'resolved_at', NULL, 'resolved_by', NULL, 'reply', NULL)
     FROM inbox`,
  `DROP TABLE inbox`,
] as const;

/** v5: the `approval` kind (SQLite cannot alter a CHECK: the table is rebuilt). */
export const INBOX_APPROVAL_DDL = [
  inboxTable("inbox_items_v5"),
  `INSERT INTO inbox_items_v5 SELECT id, kind, status, item, expires_at, format FROM inbox_items`,
  `DROP TABLE inbox_items`,
  `ALTER TABLE inbox_items_v5 RENAME TO inbox_items`,
  INBOX_OPEN_INDEX,
] as const;

export const INBOX_FORMAT = 1;

export class InboxStore {
  constructor(
    private readonly sql: Sql,
    /** A session that never asked a person anything holds no inbox table: reads answer "none". */
    private readonly tables: TablesHeld = ALL_TABLES,
  ) {}

  /** Inserts or replaces an item. */
  save(item: InboxItem): void {
    const expires = item.expires_at === null ? null : Date.parse(item.expires_at);
    this
      .sql`INSERT INTO inbox_items (id, kind, status, item, expires_at) VALUES (${item.id}, ${item.kind}, ${item.status}, ${JSON.stringify(item)}, ${expires})
             ON CONFLICT (id) DO UPDATE SET status = excluded.status, item = excluded.item, expires_at = excluded.expires_at`;
  }

  get(id: string): InboxItem | null {
    if (!this.tables.has("inbox_items")) return null;
    const row = this.sql<{ item: string; format: number }>`SELECT item, format FROM inbox_items WHERE id = ${id}`[0];
    return row ? parse(row) : null;
  }

  /** Every item, oldest first; only `status` ones when given. */
  list(status?: InboxStatus): InboxItem[] {
    if (!this.tables.has("inbox_items")) return [];
    const rows =
      status === undefined
        ? this.sql<{ item: string; format: number }>`SELECT item, format FROM inbox_items ORDER BY id`
        : this.sql<{
            item: string;
            format: number;
          }>`SELECT item, format FROM inbox_items WHERE status = ${status} ORDER BY id`;
    return rows.map(parse);
  }
}

function parse(row: { item: string; format: number }): InboxItem {
  if (row.format !== INBOX_FORMAT) throw new Error(`inbox item format ${row.format} is not ${INBOX_FORMAT}`);
  return InboxItem.parse(JSON.parse(row.item));
}
