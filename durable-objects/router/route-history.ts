import type { HistoryPageQuery, HistorySelection, RoutedInput, RoutedInputItem } from "../../src/schemas/replay";
import type { SchemaGate, Sql } from "../shared/sql";

/**
 * The tenant's routing history (docs/routing.md, Replay): one row per routed session, the
 * newest `keep` kept. A row's seq only grows and rows go only oldest first (or all at once), so
 * the rows kept are always the seqs within `keep` of the newest: the bound is one indexed delete.
 */
export class RouteHistory {
  /** `schema`: the object's one gate, shared by everything that reads its tables (see routerTables). */
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
    private readonly schema: SchemaGate,
  ) {}

  /** Adds a row and drops the rows past the newest `keep`, in one transaction; the rows held after. */
  record(row: RoutedInput, keep: number): number {
    this.schema.ensure();
    return this.storage.transactionSync(() => {
      this.sql`INSERT INTO route_history (at, session_id, input, agent, method, confidence, registry_version)
               VALUES (${Date.parse(row.at)}, ${row.session_id}, ${row.input}, ${row.agent}, ${row.method},
                       ${row.confidence}, ${row.registry_version})`;
      this.sql`DELETE FROM route_history WHERE seq <= (SELECT MAX(seq) FROM route_history) - ${keep}`;
      return this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM route_history`[0]!.n;
    });
  }

  /** The newest rows the selection asks for, oldest first. */
  select(selection: HistorySelection): RoutedInput[] {
    if (!this.schema.ready()) return [];
    const since = selection.since === undefined ? null : Date.parse(selection.since);
    const until = selection.until === undefined ? null : Date.parse(selection.until);
    const rows = this.sql<RoutedRow>`
      SELECT at, session_id, input, agent, method, confidence, registry_version FROM route_history
      WHERE (${since} IS NULL OR at >= ${since}) AND (${until} IS NULL OR at <= ${until})
        AND (${selection.agent ?? null} IS NULL OR agent = ${selection.agent ?? null})
      ORDER BY seq DESC LIMIT ${selection.limit}`;
    return rows.reverse().map((row) => ({ ...row, at: new Date(row.at).toISOString() }));
  }

  /**
   * A page of rows, newest first, that the query's filters keep; `next` is the last row's seq
   * when older rows may follow. At most HISTORY_ROWS rows to scan, so the filters need no index
   * of their own.
   */
  page(query: HistoryPageQuery): { items: RoutedInputItem[]; next: number | null } {
    if (!this.schema.ready()) return { items: [], next: null };
    const agent = query.agent ?? null;
    const kind = query.kind ?? null;
    const rows = this.sql<RoutedRow & { seq: number }>`
      SELECT seq, at, session_id, input, agent, method, confidence, registry_version FROM route_history
      WHERE (${query.before ?? null} IS NULL OR seq < ${query.before ?? null})
        AND (${agent} IS NULL OR agent = ${agent})
        AND (${kind} IS NULL
             OR (${kind} = 'fallback' AND method = 'fallback')
             OR (${kind} = 'low_confidence' AND confidence < ${query.threshold}))
      ORDER BY seq DESC LIMIT ${query.limit + 1}`;
    const more = rows.length > query.limit;
    const kept = rows.slice(0, query.limit);
    return {
      items: kept.map(({ seq: _, ...row }) => ({
        ...row,
        at: new Date(row.at).toISOString(),
        fallback: row.method === "fallback",
        low_confidence: row.confidence < query.threshold,
      })),
      next: more ? kept.at(-1)!.seq : null,
    };
  }

  /** Deletes every row; how many there were. */
  clear(): number {
    if (!this.schema.ready()) return 0;
    return this.storage.transactionSync(() => {
      const n = this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM route_history`[0]!.n;
      this.sql`DELETE FROM route_history`;
      return n;
    });
  }
}

type RoutedRow = Omit<RoutedInput, "at"> & { at: number };
