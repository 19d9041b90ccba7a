import { TriggerPoint } from "../../../src/schemas/trigger";
import { knownDirectory } from "../../../src/services/registry-cache";
import type { SessionRecord } from "../../../src/sessions/model";
import { mayFire } from "../../../src/triggers/fire";
import { ALL_TABLES, type Sql, type TablesHeld } from "../../shared/sql";
import { TIMER_KEYS } from "../../shared/timer-kinds";
import type { Timers } from "../../shared/timers";

/**
 * Trigger points that arrived while the session was busy (schema v7), in arrival order.
 * Synchronous SQL, so a point joins the transaction of the change that raised it.
 */

export const TRIGGER_QUEUE_FORMAT = 1;

export const TRIGGER_QUEUE_DDL = [
  `CREATE TABLE trigger_queue (
     seq     INTEGER PRIMARY KEY AUTOINCREMENT,
     point   TEXT NOT NULL,
     format  INTEGER NOT NULL DEFAULT ${TRIGGER_QUEUE_FORMAT}
   )`,
] as const;

export class TriggerQueue {
  constructor(
    private readonly sql: Sql,
    /** A session where no point waited holds no queue table: `shift` answers "none". */
    private readonly tables: TablesHeld = ALL_TABLES,
  ) {}

  /** Adds a point; a condition point already waiting is not added again (it would find the same state). */
  push(point: TriggerPoint): void {
    const text = JSON.stringify(point);
    if (point.type === "condition" && this.sql`SELECT 1 AS x FROM trigger_queue WHERE point = ${text}`.length > 0)
      return;
    this.sql`INSERT INTO trigger_queue (point) VALUES (${text})`;
  }

  /** The oldest point, removed (a point is evaluated at most once). */
  shift(): TriggerPoint | null {
    if (!this.tables.has("trigger_queue")) return null;
    const row = this.sql<{
      seq: number;
      point: string;
      format: number;
    }>`SELECT seq, point, format FROM trigger_queue ORDER BY seq LIMIT 1`[0];
    if (!row) return null;
    if (row.format !== TRIGGER_QUEUE_FORMAT)
      throw new Error(`trigger point format ${row.format} is not ${TRIGGER_QUEUE_FORMAT}`);
    this.sql`DELETE FROM trigger_queue WHERE seq = ${row.seq}`;
    return TriggerPoint.parse(JSON.parse(row.point));
  }
}

/**
 * Where a point raised while the session is busy goes: the queue, and the drain timer that
 * evaluates it once the session is idle. Runs write here when they end; the triggers feature
 * drains it. Call inside the transaction of the change that raised the point.
 */
export class TriggerPoints {
  private readonly queue: TriggerQueue;

  constructor(
    sql: Sql,
    private readonly timers: Pick<Timers, "schedule">,
    private readonly now: () => number,
    tables: TablesHeld = ALL_TABLES,
  ) {
    this.queue = new TriggerQueue(sql, tables);
  }

  enqueue(point: TriggerPoint): void {
    this.queue.push(point);
    this.timers.schedule("triggers.drain", this.now(), null, { key: TIMER_KEYS.triggerDrain, ifExists: "earliest" });
  }

  /**
   * A run's end: queued as any point, unless this isolate knows the session's agent, at the
   * registry version of now, has no trigger that answers it — then its evaluation could
   * fire nothing, and the queue row and drain timer (three rows written and deleted) are
   * left out. A handoff in flight may change the agent before the drain: then it is queued.
   */
  afterRun(session: SessionRecord, point: TriggerPoint): void {
    if (session.in_flight_handoff === null) {
      const directory = knownDirectory(session.tenant);
      const agent = directory?.byName.get(session.current_agent);
      if (directory && (!agent || !mayFire(point, { agent, directory: directory.byName }))) return;
    }
    this.enqueue(point);
  }

  /** The oldest point, removed. */
  shift(): TriggerPoint | null {
    return this.queue.shift();
  }
}
