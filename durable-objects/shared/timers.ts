import type { Sql } from "./sql";
import { isTimerKind, TIMER_PAYLOADS, type TimerKind, type TimerPayload } from "./timer-kinds";

export { TIMER_KEYS, TIMER_KINDS, type TimerKind } from "./timer-kinds";

/**
 * One physical alarm per object, multiplexing a table of timers (docs/architecture.md, Alarms). The alarm
 * runs every due timer through the handler registered for its kind, then re-arms at the
 * earliest remaining due time. Handlers are idempotent (alarms are at-least-once) and
 * nothing here throws out of `run`: a throwing alarm is dropped after six retries.
 */

/** The format of the timers table's payloads; a later format comes with an upgrade of older rows. */
export const TIMER_FORMAT = 1;

/** What a handler asks the runner to do with its timer. */
export type TimerOutcome =
  /** Finished: the timer is deleted. */
  | { type: "done" }
  /**
   * Finished, for a keyed timer scheduled again and again (a flush): the row stays, due
   * never (PARKED), so the next schedule rewrites it in place (one row written) where a
   * delete and an insert write four (the row and its key's entry, twice).
   */
  | { type: "park" }
  /** More to do later (not a failure): due again at `at`, attempts reset. */
  | { type: "again"; at: number }
  /** Failed: due again at `at`, attempts + 1, the error kept for inspection. */
  | { type: "retry"; at: number; error: string }
  /** The handler wiped the object's storage: stop at once, touch nothing. */
  | { type: "destroyed" };

/** The due time of a parked timer: never reached, left out of the alarm. */
export const PARKED = Number.MAX_SAFE_INTEGER;

/** A stored timer; `payload` is the kind's payload, parsed (raw when read for inspection). */
export interface TimerRow<P = unknown> {
  id: string;
  key: string | null;
  kind: string;
  due_at: number;
  payload: P;
  attempts: number;
  last_error: string | null;
}

/** A timer of kind K with its payload parsed. */
export type TimerPayloadRow<K extends TimerKind> = TimerRow<TimerPayload<K>>;
export type TimerHandler<K extends TimerKind = TimerKind> = (
  timer: TimerPayloadRow<K>,
  now: number,
) => TimerOutcome | Promise<TimerOutcome>;
/** A feature's handlers, one per kind it owns. */
export type TimerHandlers = { [K in TimerKind]?: TimerHandler<K> };

/** The handlers of several features; a kind claimed twice is a wiring bug, refused at once. */
export function combineHandlers(...groups: TimerHandlers[]): TimerHandlers {
  const all: Record<string, unknown> = {};
  for (const group of groups) {
    for (const [kind, handler] of Object.entries(group)) {
      if (Object.hasOwn(all, kind)) throw new Error(`timer kind '${kind}' has two handlers`);
      all[kind] = handler;
    }
  }
  return all as TimerHandlers;
}

export const TIMERS_DDL = [
  `CREATE TABLE timers (
     id          TEXT PRIMARY KEY,
     key         TEXT UNIQUE,
     kind        TEXT NOT NULL,
     due_at      INTEGER NOT NULL,
     payload     TEXT NOT NULL DEFAULT 'null',
     attempts    INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
     last_error  TEXT
   )`,
  "CREATE INDEX timers_due ON timers (due_at)",
] as const;

/**
 * Drops the due-time index: an object holds a handful of timers, which its due-time reads
 * scan for less than the index costs every timer written (one row more each).
 */
export const TIMERS_NO_DUE_INDEX_DDL = ["DROP INDEX timers_due"] as const;

/** Adds the payload format column to a timers table made by TIMERS_DDL. */
export const TIMERS_FORMAT_DDL = [
  `ALTER TABLE timers ADD COLUMN format INTEGER NOT NULL DEFAULT ${TIMER_FORMAT}`,
] as const;

/** When a handler throws (a bug, not a planned failure): 1 s doubling to a 5 min cap. */
export function thrownBackoffMs(attempts: number): number {
  return Math.min(300_000, 1_000 * 2 ** Math.min(attempts, 9));
}

export interface ScheduleOptions {
  /** A stable name: scheduling again under the same key affects the one timer. */
  key?: string;
  /**
   * With a key: `replace` (default) moves the timer; `keep` leaves an existing one as it is;
   * `earliest` leaves an existing one that is due no later than `dueAt` and not due yet
   * (so not running), for timers whose handler re-checks and pushes itself back
   * (`again`) when it fires early. A deadline that moves later on every change then
   * costs no timer write and no alarm change.
   */
  ifExists?: "replace" | "keep" | "earliest";
}

export interface RunReport {
  ran: number;
  failed: number;
  destroyed: boolean;
}

interface StoredTimer {
  id: string;
  key: string | null;
  kind: string;
  due_at: number;
  payload: string;
  attempts: number;
  last_error: string | null;
}

/** How many absent keys a Timers instance remembers before it starts over. */
const ABSENT_KEYS_KEPT = 32;

let sequence = 0;
function timerId(now: number): string {
  sequence = (sequence + 1) % 1_000_000;
  return `${now.toString(36)}-${sequence.toString(36)}-${crypto.randomUUID().slice(0, 8)}`;
}

export class Timers {
  /**
   * The alarm time this instance last set (null: deleted), or undefined when unknown: at
   * start, and once the alarm fired (a fired alarm is gone unless it is set again).
   */
  private armed: number | null | undefined = undefined;
  /** The table's earliest due time as this instance last knew it (null: empty), or undefined when unknown. */
  private earliest: number | null | undefined = undefined;
  /** The keys of the timers whose handlers are running now (in this instance: the only one). */
  private readonly runningKeys = new Set<string>();
  /**
   * Keyed timers this instance knows are in the table, with their due time (null: not
   * read). Only presence is remembered, so the map never outgrows the table; a key not
   * in it is simply unknown.
   */
  private readonly known = new Map<string, number | null>();
  /**
   * Keys this instance knows have no timer (cancelled, or done), so cancelling one again
   * costs no statement. Capped: lease keys are one per lease, and an unknown key is just read.
   */
  private readonly absent = new Set<string>();
  /**
   * True when `known` holds every keyed timer in the table (this instance made the table
   * and every write since went through it), so a key not in it has no timer.
   */
  private complete = false;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
    private readonly clock: () => number,
  ) {}

  /**
   * Adds a timer (synchronous SQL, so it can join the transaction of the change that needs
   * it). Call `arm()` after the transaction; if the transaction throws, call `forget()`.
   * Returns the timer's id, or null when `keep` or `earliest` left an existing one as it
   * was (its id is not read).
   */
  schedule<K extends TimerKind>(
    kind: K,
    dueAt: number,
    payload: TimerPayload<K>,
    options: ScheduleOptions = {},
  ): string | null {
    const now = this.clock();
    const key = options.key;
    if (key === undefined) {
      const id = timerId(now);
      this
        .sql`INSERT INTO timers (id, key, kind, due_at, payload) VALUES (${id}, NULL, ${kind}, ${dueAt}, ${JSON.stringify(payload ?? null)})`;
      this.added(dueAt);
      return id;
    }
    this.absent.delete(key);
    const known = this.known.get(key);
    // The due time of the timer this call replaces: null when there is none, undefined when unknown.
    let previous: number | null | undefined = known ?? undefined;
    if (options.ifExists === "keep") {
      if (known !== undefined && known !== PARKED) return null;
      // One statement: an insert when no timer has the key, a parked one rewritten in place.
      const id = timerId(now);
      const inserted = this.sql<{ id: string }>`INSERT INTO timers (id, key, kind, due_at, payload)
        VALUES (${id}, ${key}, ${kind}, ${dueAt}, ${JSON.stringify(payload ?? null)})
        ON CONFLICT (key) DO UPDATE SET kind = excluded.kind, due_at = excluded.due_at, payload = excluded.payload,
          attempts = 0, last_error = NULL WHERE timers.due_at = ${PARKED} RETURNING id`[0];
      if (!inserted) {
        this.known.set(key, null);
        return null;
      }
      this.known.set(key, dueAt);
      this.added(dueAt);
      return id;
    }
    if (options.ifExists === "earliest") {
      if (typeof known === "number" && known <= dueAt && known > now) return null;
      if (known === undefined && this.complete) previous = null;
      else if (known === undefined || known === null) {
        const due = this.sql<{ due_at: number }>`SELECT due_at FROM timers WHERE key = ${key}`[0]?.due_at;
        if (due !== undefined && due <= dueAt && due > now) {
          this.known.set(key, due);
          return null;
        }
        previous = due ?? null;
      }
    }
    // A timer no handler is running keeps its id and is rewritten in place: one row written,
    // where a new id moves the row and its key's index entry (four). One whose handler is
    // running gets a new id, so that handler's outcome (by id) cannot touch its replacement.
    const maybeThere = previous !== null && known !== null && !(known === undefined && this.complete);
    if (maybeThere && !this.runningKeys.has(key)) {
      const kept = this.sql<{ id: string }>`UPDATE timers SET kind = ${kind}, due_at = ${dueAt},
        payload = ${JSON.stringify(payload ?? null)}, attempts = 0, last_error = NULL WHERE key = ${key} RETURNING id`[0];
      if (kept) {
        if (previous === undefined) this.earliest = undefined;
        else if (previous !== null) this.removed(previous);
        this.known.set(key, dueAt);
        this.added(dueAt);
        return kept.id;
      }
      previous = null;
    }
    const id = timerId(now);
    this
      .sql`INSERT INTO timers (id, key, kind, due_at, payload) VALUES (${id}, ${key}, ${kind}, ${dueAt}, ${JSON.stringify(payload ?? null)})
             ON CONFLICT (key) DO UPDATE SET id = excluded.id, kind = excluded.kind, due_at = excluded.due_at,
               payload = excluded.payload, attempts = 0, last_error = NULL`;
    // What it replaced, if anything, is only known when this instance wrote or read it.
    if (previous === undefined) this.earliest = undefined;
    else if (previous !== null) this.removed(previous);
    this.known.set(key, dueAt);
    this.added(dueAt);
    return id;
  }

  /** Cancels the timer with this key; true when there was one. */
  cancel(key: string): boolean {
    if (this.absent.has(key) || (this.complete && !this.known.has(key))) return false;
    const row = this.sql<{ due_at: number }>`DELETE FROM timers WHERE key = ${key} RETURNING due_at`[0];
    this.known.delete(key);
    this.markAbsent(key);
    if (!row) return false;
    this.removed(row.due_at);
    return true;
  }

  get(key: string): TimerRow | null {
    const row = this.sql<StoredTimer>`SELECT * FROM timers WHERE key = ${key}`[0];
    return row ? toRow(row) : null;
  }

  list(): TimerRow[] {
    return this.sql<StoredTimer>`SELECT * FROM timers ORDER BY due_at, id`.map(toRow);
  }

  /** The earliest due time, or null when no timer is left. */
  nextDueAt(): number | null {
    return (
      this.sql<{ due: number | null }>`SELECT MIN(due_at) AS due FROM timers WHERE due_at < ${PARKED}`[0]?.due ?? null
    );
  }

  /**
   * Points the object's one alarm at the earliest timer (or clears it). Reads the table
   * only when this instance's own writes do not tell the earliest due time, and moves the
   * alarm only when that differs from the one this instance set.
   */
  async arm(): Promise<void> {
    if (this.earliest === undefined) this.earliest = this.nextDueAt();
    const due = this.earliest;
    if (due === this.armed) return;
    // Recorded before the await, so concurrent arms end with the value of the last call
    // issued (storage applies them in order); a failure makes it unknown again.
    this.armed = due;
    try {
      if (due === null) await this.storage.deleteAlarm();
      else await this.storage.setAlarm(due);
    } catch (error) {
      this.armed = undefined;
      throw error;
    }
  }

  /** The table was just made, by this instance: no timer in it, none to read before a write. */
  startEmpty(): void {
    this.forget();
    this.earliest = null;
    this.complete = true;
  }

  /**
   * Forgets what this instance knows about the table and the alarm: after writes it did
   * not make through these methods (a rolled-back transaction, a wipe), or the alarm fired.
   */
  forget(): void {
    this.complete = false;
    this.armed = undefined;
    this.earliest = undefined;
    this.known.clear();
    this.absent.clear();
  }

  private markAbsent(key: string): void {
    if (this.absent.size >= ABSENT_KEYS_KEPT) this.absent.clear();
    this.absent.add(key);
  }

  /** A timer due at `due` was added. */
  private added(due: number): void {
    if (this.earliest !== undefined) this.earliest = this.earliest === null ? due : Math.min(this.earliest, due);
  }

  /** A timer due at `due` went: the earliest stays known only when it was earlier than that. */
  private removed(due: number): void {
    if (typeof this.earliest === "number" && due > this.earliest) return;
    this.earliest = undefined;
  }

  /**
   * Runs due timers in due order, at most `limit` of them, then re-arms. Never throws:
   * a handler's exception becomes a retry with backoff.
   */
  async run(handlers: TimerHandlers, limit = 100): Promise<RunReport> {
    const report: RunReport = { ran: 0, failed: 0, destroyed: false };
    // The alarm that called this has fired: it is no longer set. The table is as this instance knows it.
    this.armed = undefined;
    const due = this
      .sql<StoredTimer>`SELECT * FROM timers WHERE due_at <= ${this.clock()} ORDER BY due_at, id LIMIT ${limit}`;
    for (const [i, listed] of due.entries()) {
      // The first row is as read; before a later one, an earlier handler's await let other
      // calls in, so it may be cancelled or replaced: read it again.
      // A timer rewritten in place keeps its id: it runs only if still due.
      const row =
        i === 0
          ? listed
          : this.sql<StoredTimer>`SELECT * FROM timers WHERE id = ${listed.id} AND due_at <= ${this.clock()}`[0];
      if (!row) continue;
      const timer = toRow(row);
      if (timer.key !== null) this.runningKeys.add(timer.key);
      const outcome = await this.invoke(handlers, timer, this.clock()).finally(() => {
        if (timer.key !== null) this.runningKeys.delete(timer.key);
      });
      report.ran++;
      if (outcome.type === "destroyed") {
        report.destroyed = true;
        return report;
      }
      if (outcome.type === "retry") report.failed++;
      this.settle(timer, outcome);
    }
    await this.arm();
    return report;
  }

  private async invoke(handlers: TimerHandlers, timer: TimerRow, now: number): Promise<TimerOutcome> {
    const handler = isTimerKind(timer.kind) ? (handlers[timer.kind] as TimerHandler | undefined) : undefined;
    if (!handler) {
      console.error(`timer ${timer.id}: no handler for kind '${timer.kind}', dropped`);
      return { type: "done" };
    }
    const payload = TIMER_PAYLOADS[timer.kind as TimerKind].safeParse(timer.payload);
    if (!payload.success) {
      console.error(`timer ${timer.id} (${timer.kind}): payload does not parse, dropped`, payload.error.issues);
      return { type: "done" };
    }
    try {
      return await handler({ ...timer, payload: payload.data } as TimerRow<never>, now);
    } catch (error) {
      console.error(`timer ${timer.id} (${timer.kind}) threw`, error);
      return { type: "retry", at: this.clock() + thrownBackoffMs(timer.attempts), error: String(error) };
    }
  }

  /** Applies an outcome to the timer's row, unless the row was replaced while the handler ran. */
  private settle(timer: TimerRow, outcome: Exclude<TimerOutcome, { type: "destroyed" }>): void {
    // Nothing happens when the row was replaced meanwhile (what is known is about the new one).
    let row: { key: string | null } | undefined;
    switch (outcome.type) {
      case "done":
        row = this.sql<{ key: string | null }>`DELETE FROM timers WHERE id = ${timer.id} RETURNING key`[0];
        if (row?.key != null) {
          this.known.delete(row.key);
          this.markAbsent(row.key);
        }
        break;
      case "park":
        row = this.sql<{
          key: string | null;
        }>`UPDATE timers SET due_at = ${PARKED}, attempts = 0, last_error = NULL WHERE id = ${timer.id} RETURNING key`[0];
        if (row?.key != null) this.known.set(row.key, PARKED);
        break;
      case "again":
        row = this.sql<{
          key: string | null;
        }>`UPDATE timers SET due_at = ${outcome.at}, attempts = 0, last_error = NULL WHERE id = ${timer.id} RETURNING key`[0];
        if (row?.key != null) this.known.set(row.key, outcome.at);
        break;
      case "retry":
        row = this.sql<{
          key: string | null;
        }>`UPDATE timers SET due_at = ${outcome.at}, attempts = attempts + 1, last_error = ${outcome.error.slice(0, 1000)}
                 WHERE id = ${timer.id} RETURNING key`[0];
        if (row?.key != null) this.known.set(row.key, outcome.at);
        break;
    }
    if (row) this.earliest = undefined;
  }
}

function toRow(row: StoredTimer): TimerRow {
  return {
    id: row.id,
    key: row.key,
    kind: row.kind,
    due_at: row.due_at,
    payload: JSON.parse(row.payload) as unknown,
    attempts: row.attempts,
    last_error: row.last_error,
  };
}
