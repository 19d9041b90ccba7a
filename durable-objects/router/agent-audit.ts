import {
  type AgentWriteIntent,
  type AgentWriteOutcome,
  agentWriteRecord,
  recoveredOutcome,
} from "../../src/audit/agent-events";
import { flushBackoffMs } from "../../src/audit/outbox-policy";
import type { AuditRecord } from "../../src/audit/record";
import type { Env } from "../../src/env";
import { getAgent, registryHead } from "../../src/registry/store";
import { flushAuditRecords } from "../../src/services/audit-writes";
import { Outbox } from "../shared/outbox";
import type { SchemaGate, Sql } from "../shared/sql";
import { TIMER_KEYS, type TimerHandlers, type TimerOutcome, type TimerRow, Timers } from "../shared/timers";

/**
 * The audit of the router object's registry writes (docs/architecture.md, Registry writes). The
 * registry is in D1 and the record in the object's SQLite, so no one transaction holds both:
 * an intent row is written before the D1 write, with a check timer, and after the write one
 * transaction turns it into its record in the audit outbox (or drops it, when the write was
 * refused). An intent a crash left is settled by reading the registry — by the object's next
 * write, or by the check timer. The outbox drains to the tenant's shard from the alarm, with
 * a deadline on each flush and the other outboxes' backoff.
 */

/** When the check of an intent is due, if its call never settles it (a crash, a D1 error). */
export const WRITE_CHECK_AFTER_MS = 30_000;
/** One flush to the tenant's shard: past this it counts as failed and is tried again with backoff. */
export const FLUSH_DEADLINE_MS = 10_000;

interface IntentRow {
  id: string;
  at: number;
  tenant: string;
  agent: string;
  kind: "put" | "delete";
  existed: number;
  changed: string | null;
}

export class AgentAudit {
  readonly outbox: Outbox;
  readonly timers: Timers;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
    private readonly schema: SchemaGate,
    private readonly env: Env,
    private readonly clock: () => number,
  ) {
    this.outbox = new Outbox(sql);
    this.timers = new Timers(storage, sql, clock);
  }

  /** Before the registry write: its intent, and the check that settles it if the call does not. */
  async intend(intent: AgentWriteIntent): Promise<void> {
    this.schema.ensure();
    this.transaction(() => {
      this.sql`INSERT INTO agent_writes (id, at, tenant, agent, kind, existed, changed)
               VALUES (${intent.id}, ${intent.at}, ${intent.tenant}, ${intent.agent}, ${intent.kind},
                       ${intent.existed ? 1 : 0}, ${intent.changed === null ? null : JSON.stringify(intent.changed)})`;
      this.timers.schedule("agent.write_check", intent.at + WRITE_CHECK_AFTER_MS, null, {
        key: TIMER_KEYS.agentWriteCheck,
        ifExists: "keep",
      });
    });
    await this.timers.arm();
  }

  /** After the write: the intent becomes its record, flushed at once by the alarm, or goes — one transaction. */
  async settle(intent: AgentWriteIntent, outcome: AgentWriteOutcome): Promise<AuditRecord | null> {
    const record = agentWriteRecord(intent, outcome);
    this.transaction(() => {
      this.sql`DELETE FROM agent_writes WHERE id = ${intent.id}`;
      if (record !== null) {
        this.outbox.append([record]);
        this.timers.schedule("outbox.flush", this.clock(), null, { key: TIMER_KEYS.flush, ifExists: "keep" });
      }
      if (this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM agent_writes`[0]!.n === 0)
        this.timers.cancel(TIMER_KEYS.agentWriteCheck);
    });
    await this.timers.arm();
    return record;
  }

  /** Intents no call settled (a crash between the intent and its record), oldest first. */
  intents(): AgentWriteIntent[] {
    if (!this.schema.ready()) return [];
    return this.sql<IntentRow>`SELECT * FROM agent_writes ORDER BY id`.map((row) => ({
      ...row,
      existed: row.existed === 1,
      changed: row.changed === null ? null : (JSON.parse(row.changed) as string[]),
    }));
  }

  /**
   * Settles every intent a crash left by reading the registry: a write that landed gets its
   * record, one that did not is dropped. Call in the object's turn, so no write is under way.
   * Throws what D1 throws (the intents stay).
   */
  async recover(): Promise<void> {
    for (const intent of this.intents()) {
      const [agent, head] = await Promise.all([
        getAgent(this.env.DB, intent.tenant, intent.agent),
        registryHead(this.env.DB, intent.tenant),
      ]);
      await this.settle(intent, recoveredOutcome(intent, { agent, registry_version: head.version }));
    }
  }

  /** The alarm's handlers; `inTurn` runs the check in the object's turn (after any write under way). */
  handlers(inTurn: (work: () => Promise<void>) => Promise<void>): TimerHandlers {
    return {
      "agent.write_check": async (timer, now) => {
        try {
          await inTurn(() => this.recover());
          return { type: "done" };
        } catch (error) {
          return retry(timer, now, error);
        }
      },
      "outbox.flush": (timer, now) => this.flush(timer, now),
    };
  }

  private async flush(timer: TimerRow, now: number): Promise<TimerOutcome> {
    try {
      const { remaining } = await this.outbox.flush((records) => within(flushAuditRecords(this.env, records)));
      // Parked, not deleted: the next record's schedule rewrites it in place.
      return remaining > 0 ? { type: "again", at: this.clock() } : { type: "park" };
    } catch (error) {
      return retry(timer, now, error);
    }
  }

  private transaction(write: () => void): void {
    try {
      this.storage.transactionSync(write);
    } catch (error) {
      this.timers.forget();
      throw error;
    }
  }
}

const retry = (timer: TimerRow, now: number, error: unknown): TimerOutcome => ({
  type: "retry",
  at: now + flushBackoffMs(timer.attempts + 1),
  error: String(error),
});

/** The flush, or a TimeoutError once FLUSH_DEADLINE_MS pass (the write may still land: D1 ignores an id it holds). */
function within(work: Promise<void>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DOMException(`The audit flush took more than ${FLUSH_DEADLINE_MS} ms.`, "TimeoutError")),
      FLUSH_DEADLINE_MS,
    );
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
